import { FileStore } from './file-store.js';
import { GzipStore } from './gzip-store.js';
import type { ObjectStore } from './object-store.js';
import type { S3StoreOptions } from './s3-store.js';
import { parseStoreUrl } from './url.js';

export interface OpenStoreOptions {
  /** Compress objects: `gzip` (a GzipStore view over the store). Default: none. */
  compression?: 'none' | 'gzip';
  /** Entries per listing request (S3 ListObjectsV2 keys, file:// directory entries per read). */
  listPageSize?: number;
  /** For s3:// only. */
  s3?: Omit<S3StoreOptions, 'listPageSize'>;
}

/**
 * The store a URL names (`file:///path` or `s3://bucket/prefix?...`). Throws `StoreUrlError` for a
 * URL that cannot work; sends no request, so a store that is down fails on its first call instead.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ObjectStore> {
  const location = parseStoreUrl(url);
  const pageSize = options.listPageSize === undefined ? {} : { listPageSize: options.listPageSize };
  let store: ObjectStore;
  if (location.kind === 'file') store = new FileStore(location.root, pageSize);
  else {
    // The AWS SDK is loaded with the first s3:// store: a process without one never pays for it.
    const { S3Store } = await import('./s3-store.js');
    store = await S3Store.open(location, { ...options.s3, ...pageSize });
  }
  return options.compression === 'gzip' ? new GzipStore(store) : store;
}
