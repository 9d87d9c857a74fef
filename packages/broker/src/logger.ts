import type { Logger } from '@booblik/log';

/** One line per event: ISO time, level, message. Written synchronously so a crash loses no line. */
export function createLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const emit = (level: string, message: string) => write(`${new Date().toISOString()} ${level} ${message}\n`);
  return {
    info: (m) => emit('INFO', m),
    warn: (m) => emit('WARN', m),
    error: (m) => emit('ERROR', m),
  };
}
