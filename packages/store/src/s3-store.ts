import fs from 'node:fs';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { ObjectExistsError, ObjectNotFoundError, StoreUnavailableError, StoreUrlError } from './errors.js';
import { readableSource } from './file-store.js';
import { checkKey, checkPrefix, checkRange } from './keys.js';
import type { ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.js';
import { classifyS3Error } from './s3-errors.js';
import type { S3Location } from './url.js';

/** Keys per ListObjectsV2 page: S3's own maximum, so a listing costs as few requests as it can. */
export const DEFAULT_LIST_PAGE_SIZE = 1000;
/** A TCP connect to a healthy store takes milliseconds; past this it is down or cut off. */
export const CONNECT_TIMEOUT_MS = 5_000;
/**
 * Longest silence on a socket before the request is abandoned. The SDK waits forever by default,
 * which would hang a caller on a store that accepted the connection and stopped answering. It is the
 * SDK's `socketTimeout`: its `requestTimeout` bounds a whole request, and only logs a warning when
 * passed (a large upload to a slow store may rightly take longer).
 */
export const SOCKET_SILENCE_TIMEOUT_MS = 30_000;
/**
 * Bytes read from a file per chunk of a streamed put. A streamed body moves about one chunk per turn
 * of the event loop, and a busy broker's turns are long: with the loop kept busy in 10 ms turns (as
 * under W1), one 512 MiB PutObject to the loopback gateway took 87 s with the stream's default
 * 64 KiB, 5.8 s with 1 MiB, 3.3 s with 4 MiB and 3.4 s with 8 MiB. On an idle loop 4 MiB also cost
 * this process half the CPU of 64 KiB (493 against 954 ms).
 */
export const PUT_FILE_CHUNK_BYTES = 4 << 20;

export interface S3StoreOptions {
  /** Credentials or a provider of them; default: the SDK's default chain (environment, profile, role). */
  credentials?: S3ClientConfig['credentials'];
  /** Attempts per call, the SDK's retries with backoff included (the SDK's default is 3). */
  maxAttempts?: number;
  /** Keys per ListObjectsV2 request. */
  listPageSize?: number;
  /** Default SOCKET_SILENCE_TIMEOUT_MS. */
  socketSilenceTimeoutMs?: number;
}

/**
 * Objects in an S3 bucket (or an S3-compatible server) under the URL's prefix, through the AWS SDK.
 * A put is one PutObject, atomic by S3's contract (readers see the old or the new object whole) and
 * checked on arrival by the server: against the caller's SHA-256 when one is given, else against the
 * CRC-32 the SDK computes over the body as it sends it. Objects are limited to PutObject's 5 GiB.
 */
export class S3Store implements ObjectStore {
  readonly url: string;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly listPageSize: number;

  private constructor(
    location: S3Location,
    private readonly client: S3Client,
    options: S3StoreOptions,
  ) {
    this.url = location.url;
    this.bucket = location.bucket;
    this.prefix = location.prefix;
    this.listPageSize = options.listPageSize ?? DEFAULT_LIST_PAGE_SIZE;
  }

  /** Makes the client; no request is sent (the store may be down when its user starts). */
  static async open(location: S3Location, options: S3StoreOptions = {}): Promise<S3Store> {
    const envEndpoint = process.env['AWS_ENDPOINT_URL_S3'] ?? process.env['AWS_ENDPOINT_URL'];
    const client = new S3Client({
      ...(location.endpoint === undefined ? {} : { endpoint: location.endpoint }),
      ...(location.region === undefined ? {} : { region: location.region }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      // S3-compatible servers on an endpoint of their own rarely have per-bucket host names.
      forcePathStyle: location.forcePathStyle ?? (location.endpoint ?? envEndpoint) !== undefined,
      requestHandler: {
        connectionTimeout: CONNECT_TIMEOUT_MS,
        socketTimeout: options.socketSilenceTimeoutMs ?? SOCKET_SILENCE_TIMEOUT_MS,
      },
    });
    try {
      await client.config.region();
    } catch {
      client.destroy();
      throw new StoreUrlError(location.url, 'region', 'not set; add ?region= to the URL or set AWS_REGION');
    }
    return new S3Store(location, client, options);
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.putObject(key, body, body.byteLength, options);
  }

  async putFile(key: string, file: string, options: PutOptions = {}): Promise<PutResult> {
    checkKey(key);
    const size = await readableSource(this.url, key, file);
    // Streamed from the file in one PutObject: memory stays flat whatever the object's size.
    return this.putObject(
      key,
      fs.createReadStream(file, { highWaterMark: PUT_FILE_CHUNK_BYTES }),
      size,
      options,
    );
  }

  private async putObject(key: string, body: Uint8Array | Readable, size: number, options: PutOptions) {
    try {
      checkKey(key);
      const checksum = options.sha256 === undefined ? {} : { ChecksumSHA256: sha256Base64(options.sha256) };
      if (options.ifAbsent && (await this.exists(key))) {
        throw new ObjectExistsError(this.url, 'put', key, 'an object already has this key (ifAbsent)');
      }
      const command = new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.prefix + key,
        Body: body,
        ContentLength: size,
        ...(options.ifAbsent ? { IfNoneMatch: '*' } : {}),
        // The server checks the body against it, and the SDK then adds no checksum of its own (its
        // default CRC-32 over a streamed body cost this process as much CPU as the rest of the PUT).
        ...checksum,
      });
      const answer = await this.client.send(command).catch((error: unknown) => {
        throw classifyS3Error(error, this.url, 'put', key);
      });
      return { etag: answer.ETag ?? '' };
    } finally {
      // A stream not read to its end (a refusal before sending, a failed PUT) still holds the file open.
      if (body instanceof Readable) body.destroy();
    }
  }

  async get(key: string, start?: number, end?: number): Promise<Buffer> {
    checkKey(key);
    const range = checkRange(key, start, end);
    if (range.end === range.start) {
      await this.head(key); // an empty range of a missing object is still "not found"
      return Buffer.alloc(0);
    }
    const header =
      range.start === 0 && range.end === Number.POSITIVE_INFINITY
        ? undefined
        : `bytes=${range.start}-${range.end === Number.POSITIVE_INFINITY ? '' : range.end - 1}`;
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.prefix + key,
          ...(header === undefined ? {} : { Range: header }),
        }),
      );
      const bytes = await answer.Body!.transformToByteArray();
      // A connection cut mid-body must not pass for a short object.
      if (answer.ContentLength !== undefined && bytes.byteLength !== answer.ContentLength) {
        throw new StoreUnavailableError(
          this.url,
          'get',
          key,
          `got ${bytes.byteLength} of ${answer.ContentLength} bytes`,
        );
      }
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      // 416: the range starts at or past the end of an object that exists.
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) {
        return Buffer.alloc(0);
      }
      throw classifyS3Error(error, this.url, 'get', key);
    }
  }

  /**
   * Asked before a conditional put: a server that refuses one with 412 may answer before reading the
   * body and close the connection, and a client still sending then sees EPIPE instead of the 412.
   * The condition itself still decides a race between two writers.
   */
  private async exists(key: string): Promise<boolean> {
    try {
      await this.head(key);
      return true;
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return false;
      throw error;
    }
  }

  async head(key: string): Promise<ObjectInfo> {
    checkKey(key);
    try {
      const answer = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
      );
      return {
        key,
        size: answer.ContentLength ?? 0,
        etag: answer.ETag ?? '',
        modifiedMs: answer.LastModified?.getTime() ?? 0,
      };
    } catch (error) {
      throw classifyS3Error(error, this.url, 'head', key);
    }
  }

  async *list(prefix = ''): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            MaxKeys: this.listPageSize,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        );
      } catch (error) {
        throw classifyS3Error(error, this.url, 'list', prefix);
      }
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || object.Key.endsWith('/')) continue; // folder markers
        yield {
          key: object.Key.slice(this.prefix.length),
          size: object.Size ?? 0,
          etag: object.ETag ?? '',
          modifiedMs: object.LastModified?.getTime() ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
    } catch (error) {
      const classified = classifyS3Error(error, this.url, 'delete', key);
      if (classified.name === 'ObjectNotFoundError') return;
      throw classified;
    }
  }

  close(): void {
    this.client.destroy();
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** S3 takes a SHA-256 in base64; a malformed one is the caller's bug, refused before any I/O. */
function sha256Base64(hex: string): string {
  if (!SHA256_HEX.test(hex)) throw new RangeError(`sha256: "${hex}" is not 64 lowercase hex digits`);
  return Buffer.from(hex, 'hex').toString('base64');
}
