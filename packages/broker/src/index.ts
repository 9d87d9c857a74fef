export { Broker, logConfigOf } from './broker.js';
export {
  type BrokerConfig,
  ConfigError,
  configKeys,
  envNameOf,
  parseTopics,
  type TopicSpec,
} from './config/keys.js';
export { configHelp, type LoadedConfig, loadConfig } from './config/load.js';
export { parseProperties } from './config/properties.js';
export { createLogger } from './logger.js';
export { PartitionRegistry } from './partitions.js';
