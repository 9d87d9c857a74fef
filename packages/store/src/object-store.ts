/** The one interface every store implements; see README.md for the guarantees of each call. */

/** An object as a listing or a head shows it. */
export interface ObjectInfo {
  /** The key relative to the store's root (its URL's path or prefix). */
  key: string;
  /** Stored bytes (after compression, for a compressed view). */
  size: number;
  /**
   * Opaque version tag: it changes whenever the object is replaced. Compare it, do not parse it
   * (on S3 it is often, not always, an MD5; on file:// it is derived from the file's identity).
   */
  etag: string;
  /** When the object was last written, in ms since the epoch, as the store reports it. */
  modifiedMs: number;
}

export interface PutOptions {
  /**
   * Write only if no object has this key (S3 `If-None-Match: *`, file:// `link(2)`): a second writer
   * gets `ObjectExistsError` and its bytes are not stored. For objects that must never be replaced,
   * such as a manifest version written once under a new name.
   */
  ifAbsent?: boolean;
  /**
   * The SHA-256 of the bytes being stored, as 64 hex digits, when the caller has it already. A store
   * that sends the bytes over a network has them checked against it on arrival (S3: sent as
   * `x-amz-checksum-sha256`, a body that differs is refused and nothing is stored), in place of a
   * checksum of its own computed over the body as it is sent. file:// copies within the machine and
   * does not read the bytes to check them.
   */
  sha256?: string;
}

export interface PutResult {
  /** The new object's `etag`, as `head` and `list` will report it. */
  etag: string;
}

export interface ObjectStore {
  /** The store's URL, normalized, without credentials (for messages and metrics). */
  readonly url: string;
  /**
   * Stores `body` under `key`, replacing any object there. Atomic for readers: a `get` sees the
   * whole previous object or the whole new one, never a part; a put that failed or crashed leaves
   * the previous object (or none) in place. Durable when it resolves.
   */
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult>;
  /**
   * `put` of a file's content, streamed (a segment need not fit in memory), with the same
   * guarantees. The file must not change while this runs (a closed segment does not).
   */
  putFile(key: string, file: string, options?: PutOptions): Promise<PutResult>;
  /**
   * Bytes `[start, end)` of the object (`end` exclusive, default: to its end). Like pread, a range
   * that runs past the end is cut at the end, and one that starts at or past it is empty.
   * `ObjectNotFoundError` when there is no such object.
   */
  get(key: string, start?: number, end?: number): Promise<Buffer>;
  /** Size, etag and time of the object; `ObjectNotFoundError` when there is none. */
  head(key: string): Promise<ObjectInfo>;
  /** Every object whose key starts with `prefix` (plain string prefix), in key byte order; pages internally. */
  list(prefix?: string): AsyncIterable<ObjectInfo>;
  /** Removes the object; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Releases connections; the store must not be used after. */
  close(): void;
}
