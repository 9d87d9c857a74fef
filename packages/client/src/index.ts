export {
  AckPolicy,
  type AckPolicyValue,
  ErrorCode,
  errorName,
  FragmentLocation,
  type ListedFragment,
  OFFSET_UNKNOWN,
  type PartitionFragments,
  type PartitionMetadata,
  type ProduceResult,
  type TopicMetadata,
} from '@booblik/protocol';
export { type BrokerAddress, formatAddress, parseAddress } from './address.js';
export type { Authenticated, AuthOptions, TokenSource } from './auth.js';
export { Client, type ClientOptions } from './client.js';
export { type Clock, systemClock, type TimerHandle } from './clock.js';
export {
  Connection,
  type ConnectOptions,
  type FetchedRecord,
  type FetchOptions,
  type FetchResult,
  type ProduceOptions,
  type RequestOptions,
} from './connection.js';
export { Consumer, type ConsumerOptions, type ConsumerRecord, type RecordIterator } from './consumer.js';
export * from './errors.js';
export * from './limits.js';
export { Producer, type ProducerOptions, type ProducerSendOptions } from './producer.js';
export type { Pem, TlsOptions } from './tls-options.js';
export {
  type Bytes,
  DEFAULT_METADATA_MAX_AGE_MS,
  type Sent,
  Topic,
  type TopicOptions,
  type TopicSendOptions,
} from './topic.js';
export {
  InvalidArgumentRefusal,
  NotPrimaryError,
  OffsetMismatchError,
  RecordsLostError,
  RevisionMismatchError,
} from './topic-errors.js';
export * from './topics.js';
export type { UpsertUserOptions, UserListing } from './users.js';
