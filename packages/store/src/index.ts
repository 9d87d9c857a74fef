export { checkStore, STORE_CHECK_TIMEOUT_MS, type StoreCheckOptions, withoutSecrets } from './check-store.js';
export {
  InvalidKeyError,
  ObjectExistsError,
  ObjectNotFoundError,
  StoreError,
  StoreRefusedError,
  StoreUnavailableError,
  StoreUrlError,
} from './errors.js';
export { FileStore, type FileStoreOptions } from './file-store.js';
export { GZIP_SUFFIX, GzipStore } from './gzip-store.js';
export { checkKey, checkPrefix, KEY_BYTES_MAX } from './keys.js';
export type { ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.js';
export { type OpenStoreOptions, openStore } from './open-store.js';
// Types only: the class (and the AWS SDK under it) is loaded by openStore for an s3:// URL.
export type { S3Store, S3StoreOptions } from './s3-store.js';
export { type FileLocation, parseStoreUrl, type S3Location, type StoreLocation } from './url.js';
