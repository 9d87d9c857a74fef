/** Where the log reports what it did (cuts, removals); the broker passes its own. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
};
