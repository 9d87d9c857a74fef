/** Test kit for the client and the CLI: a fake broker, an in-memory log to put behind it, a manual clock. */

export { ApiKey, type Request } from '@booblik/protocol';
export { AsyncQueue } from './async-queue.js';
export { FakeAuth, type FakeAuthOptions } from './fake-auth.js';
export { FakeBroker, type FakeHandler, FakePeer, type ReceivedRequest } from './fake-broker.js';
export { type ClusterScript, FakeCluster, FakeClusterNode, type MetadataSeen } from './fake-cluster.js';
export { ManualClock } from './manual-clock.js';
export { MemoryLog } from './memory-log.js';
