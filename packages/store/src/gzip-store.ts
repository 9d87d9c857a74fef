import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGzip, gunzip, gzip } from 'node:zlib';
import { readableSource } from './file-store.js';
import { checkKey, checkPrefix, checkRange } from './keys.js';
import type { ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** What a compressed object's key ends with in the underlying store, so a listing tells them apart. */
export const GZIP_SUFFIX = '.gz';

/**
 * A view of a store whose objects are gzip-compressed: `put(k)` stores gzip(bytes) as `k.gz`,
 * `get(k)` reads `k.gz` and returns the original bytes, `list` shows only `.gz` objects, without
 * the suffix. Sizes in `head` and `list` are compressed sizes. A ranged get fetches and inflates
 * the whole object (gzip cannot start mid-stream), so ranges save transfer only without compression.
 * Objects written without compression stay readable through the plain store.
 */
export class GzipStore implements ObjectStore {
  readonly url: string;

  constructor(private readonly inner: ObjectStore) {
    this.url = `${inner.url} (gzip)`;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.inner.put(key + GZIP_SUFFIX, await gzipAsync(body), storedOptions(options));
  }

  /** Compressed through a stream into memory (the object's compressed size), then stored whole. */
  async putFile(key: string, file: string, options: PutOptions = {}): Promise<PutResult> {
    checkKey(key);
    await readableSource(this.url, key, file);
    const chunks: Buffer[] = [];
    await pipeline(fs.createReadStream(file), createGzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) chunks.push(chunk);
    });
    return this.inner.put(key + GZIP_SUFFIX, Buffer.concat(chunks), storedOptions(options));
  }

  async get(key: string, start?: number, end?: number): Promise<Buffer> {
    const range = checkRange(key, start, end);
    const whole = await gunzipAsync(await this.inner.get(key + GZIP_SUFFIX));
    return whole.subarray(Math.min(range.start, whole.length), Math.min(range.end, whole.length));
  }

  async head(key: string): Promise<ObjectInfo> {
    return { ...(await this.inner.head(key + GZIP_SUFFIX)), key };
  }

  async *list(prefix = ''): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    for await (const info of this.inner.list(prefix)) {
      if (info.key.endsWith(GZIP_SUFFIX)) yield { ...info, key: info.key.slice(0, -GZIP_SUFFIX.length) };
    }
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key + GZIP_SUFFIX);
  }

  close(): void {
    this.inner.close();
  }
}

/**
 * The options for the compressed object: a SHA-256 of the original bytes does not match it, so it is
 * left out and the store checks the compressed bytes its own way (on S3, the SDK's CRC-32 over the
 * body); gzip's own CRC-32 of the original bytes is checked again by every read.
 */
function storedOptions({ sha256: _plain, ...options }: PutOptions): PutOptions {
  return options;
}
