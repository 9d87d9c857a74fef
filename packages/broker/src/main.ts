#!/usr/bin/env node
/**
 * booblik-broker: `node packages/broker/dist/main.js [config.properties] [--key=value ...]`.
 * Configuration errors stop startup with exit code 2 and a line naming the key.
 */
import { Broker } from './broker.js';
import { ConfigError } from './config/keys.js';
import { configHelp, loadConfig } from './config/load.js';
import { createLogger } from './logger.js';

// Disk reads for FETCH and fdatasync barriers share libuv's thread pool (4 threads by default); up to
// three barriers per partition may run at once, so give reads room beside them. Read by libuv when
// the pool first starts, which is after this line.
process.env.UV_THREADPOOL_SIZE ??= '8';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(`${configHelp()}\n`);
  process.exit(0);
}

const logger = createLogger();
let loaded: ReturnType<typeof loadConfig>;
try {
  loaded = loadConfig({ argv, env: process.env });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`booblik: configuration error: ${error.message}\n`);
  process.exit(2);
}
for (const w of loaded.warnings) logger.warn(w);

let broker: Broker;
try {
  broker = await Broker.start(loaded.config, { logger, origins: loaded.origins });
} catch (error) {
  logger.error(`booblik failed to start: ${(error as Error).message}`);
  process.exit(1);
}

let stopping = false;
const stop = (signal: string) => {
  if (stopping) {
    logger.warn(`${signal} again: exiting at once`);
    process.exit(1);
  }
  stopping = true;
  logger.info(`${signal}: shutting down (send it again to exit at once)`);
  broker.close().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error(`shutdown failed: ${String(error)}`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
