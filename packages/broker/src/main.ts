#!/usr/bin/env node
/**
 * booblik-broker: `node packages/broker/dist/main.js [config.properties] [--key=value ...]`.
 * Configuration errors, a port in use and a data directory in use stop startup with exit code 2 and
 * a line naming the key or the directory, before anything in the data directory is touched.
 */
import nodeSupport from '@booblik/protocol/node-support';
import { Broker } from './broker.js';
import { configHelp, loadConfig } from './config/load.js';
import { ConfigError, DataDirForeignError, DataDirInUseError, ListenError } from './errors.js';
import { followHeapGrowth } from './heap-growth.js';
import { createLogger } from './logger.js';
import { UserStoreCorruptError } from './security/errors.js';

/**
 * A repeat of the same signal this soon after the first is the same request delivered twice: under
 * `npm start` one Ctrl-C reaches the broker from the terminal and again forwarded by npm, within a
 * millisecond or so. A person asking again to exit at once does so after reading the shutdown line.
 */
const REPEATED_SIGNAL_IGNORED_MS = 500;

// Disk reads for FETCH and fdatasync barriers share libuv's thread pool (4 threads by default); up to
// three barriers per partition may run at once, so give reads room beside them. Read by libuv when
// the pool first starts, which is after this line.
process.env.UV_THREADPOOL_SIZE ??= '8';

// A Node older than every supported one stops here with one line and exit code 2 (bin/booblik-broker.js
// checks before even parsing this file, for Nodes too old to parse it).
const node = nodeSupport.refuseUnsupportedNode('booblik-broker');

// Before the broker allocates: a small heap must not be collected every few tens of milliseconds.
followHeapGrowth();

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(`${configHelp()}\n`);
  process.exit(0);
}

const logger = createLogger();
if (node.warning) logger.warn(node.warning);
let loaded: ReturnType<typeof loadConfig>;
try {
  loaded = loadConfig({ argv, env: process.env });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`booblik: configuration error: ${error.message}\n`);
  process.exit(2);
}
for (const w of loaded.warnings) logger.warn(w);

// Signals are handled from before the start: a supervisor may signal as soon as it sees
// `booblik listening on` (the broker used to die of a SIGINT sent then, its handler not yet there),
// and one that comes during recovery stops the broker once it is up.
let stopping: { signal: string; atMs: number } | undefined;
const stop = (signal: string) => {
  if (stopping) {
    if (signal === stopping.signal && performance.now() - stopping.atMs < REPEATED_SIGNAL_IGNORED_MS) {
      logger.info(`${signal} repeated at once: taken as the same request (npm forwards the terminal's)`);
      return;
    }
    logger.warn(`${signal} again: exiting at once`);
    process.exit(1);
  }
  stopping = { signal, atMs: performance.now() };
  logger.info(`${signal}: shutting down (send it again to exit at once)`);
  starting
    .then((broker) => broker.close())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
const starting = Broker.start(loaded.config, { logger, origins: loaded.origins });

try {
  await starting;
} catch (error) {
  // Runs before a pending stop's reaction (registered later on the same promise): the exit code says why.
  logger.error(`booblik failed to start: ${(error as Error).message}`);
  const refused =
    error instanceof DataDirInUseError ||
    error instanceof ListenError ||
    error instanceof DataDirForeignError ||
    error instanceof ConfigError ||
    error instanceof UserStoreCorruptError;
  process.exit(refused ? 2 : 1);
}
