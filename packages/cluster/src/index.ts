export * from './allocator.js';
export * from './allocator-leader.js';
export * from './errors.js';
export { connectEtcd, DEFAULT_REQUEST_TIMEOUT_MS, type EtcdClientOptions } from './etcd-client.js';
export * from './keyspace.js';
export * from './keyspace-copy.js';
export * from './member.js';
export * from './spec-store.js';
export * from './values.js';
