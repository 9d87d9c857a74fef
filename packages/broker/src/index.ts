export { Broker, logConfigOf } from './broker.js';
export {
  type BrokerConfig,
  configKeys,
  envNameOf,
  parseTopics,
  type TopicSpec,
} from './config/keys.js';
export { configHelp, type LoadedConfig, loadConfig } from './config/load.js';
export { parseProperties } from './config/properties.js';
export { ConfigError } from './errors.js';
export { createLogger } from './logger.js';
export { PartitionRegistry } from './partitions.js';
