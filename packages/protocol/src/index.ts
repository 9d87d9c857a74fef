export * from './api.js';
export * from './api-table/capabilities.js';
export type { RequestBody } from './api-table/rows.js';
export * from './api-table/table.js';
export * from './auth/scram.js';
export * from './auth/token-keys.js';
export { type Clock, delay, systemClock, type TimerHandle, unrefTimer } from './clock.js';
export { DecodeError, WireReader } from './codec/reader.js';
export { stringBytes, WireWriter, writeInt64 } from './codec/writer.js';
export * from './crc32c/index.js';
export * from './errors.js';
export * from './frame/header.js';
export { FrameReader, type FrameReaderOptions } from './frame/reader.js';
export { type FrameLimits, type FrameSink, FrameSplitter } from './frame/splitter.js';
export { InvariantError, invariant } from './invariant.js';
export * from './limits.js';
export { type NativeAddon, type NativeFileScan, nativeAddon, scanStops } from './native/addon.js';
export * from './partitioner.js';
export { type InFlight, Pipeline } from './pipeline/pipeline.js';
export * from './records/fetch-payload.js';
export * from './records/stored-records.js';
export * from './requests/api-versions/v1.js';
export * from './requests/apply/v1.js';
export * from './requests/apply/v2.js';
export * from './requests/authenticate/v1.js';
export {
  decodeRequest,
  type Request,
  type RequestOf,
  RequestRefusal,
} from './requests/decode-request.js';
export * from './requests/error-details.js';
export * from './requests/fetch/v1.js';
export * from './requests/fetch/v2.js';
export * from './requests/fetch/v3.js';
export * from './requests/fetch/v4.js';
export * from './requests/fetch/v5.js';
export * from './requests/list/v1.js';
export * from './requests/list/v2.js';
export * from './requests/list-fragments/v1.js';
export * from './requests/metadata/v1.js';
export * from './requests/metadata/v2.js';
export * from './requests/metadata/v3.js';
export * from './requests/metadata/v4.js';
export * from './requests/metadata/v5.js';
export * from './requests/move/v1.js';
export * from './requests/produce/v1.js';
export * from './requests/produce/v2.js';
export * from './requests/produce/v3.js';
export * from './requests/replicate/v1.js';
export * from './requests/users/v1.js';
export * from './topic-name.js';
export * from './topics/labels.js';
export * from './topics/route.js';
export * from './topics/route-v2.js';
export * from './topics/selector.js';
export * from './topics/spec.js';
