import fs from 'node:fs';
import { StoreError, StoreRefusedError, StoreUnavailableError } from './errors.js';
import type { ObjectStore } from './object-store.js';
import { type OpenStoreOptions, openStore } from './open-store.js';
import { parseStoreUrl } from './url.js';

/**
 * How long a store may take to answer the check made before something is put in it: a healthy
 * store answers a listing in milliseconds, and a caller waiting on the check (an APPLY) must get
 * its answer well within 5 s, even from a store that accepts connections and never answers.
 */
export const STORE_CHECK_TIMEOUT_MS = 3000;

export interface StoreCheckOptions extends Pick<OpenStoreOptions, 's3'> {
  /** The listing asked for (one request): where the caller will write. Default: the whole store. */
  prefix?: string;
  timeoutMs?: number;
}

/**
 * Whether the store a URL names answers now, as one listing of `prefix` (and, for file://, a
 * directory this process may write to). Resolves if it does; rejects with the store's error:
 * `StoreUrlError` (the URL), `StoreRefusedError` (credentials, permissions, no such bucket or
 * directory), `StoreUnavailableError` (down, 5xx, or no answer within `timeoutMs`). Error messages
 * carry no credential from the environment.
 */
export async function checkStore(url: string, options: StoreCheckOptions = {}): Promise<void> {
  const location = parseStoreUrl(url);
  const timeoutMs = options.timeoutMs ?? STORE_CHECK_TIMEOUT_MS;
  if (location.kind === 'file') await checkDirectory(location.url, location.root);
  const store = await openStore(url, {
    // One attempt per call: the timeout, not the SDK's backoff, bounds the wait.
    s3: { ...options.s3, maxAttempts: 1 },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      firstPage(store, options.prefix ?? ''),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new StoreUnavailableError(store.url, 'check', undefined, `no answer within ${timeoutMs} ms`),
            ),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    throw withoutSecrets(error);
  } finally {
    clearTimeout(timer);
    store.close(); // also ends a request still waiting for an answer
  }
}

/** One listing request: the first object (if any) is enough to know the store answers. */
async function firstPage(store: ObjectStore, prefix: string): Promise<void> {
  for await (const _ of store.list(prefix)) return;
}

/** The root a file:// store's objects go under: there, a directory, writable by this process. */
async function checkDirectory(url: string, root: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const detail =
      code === 'ENOENT'
        ? `the directory ${root} does not exist (a store's directory is never created by the broker: create or mount it)`
        : `the directory ${root} cannot be read: ${(error as Error).message}`;
    throw new StoreRefusedError(url, 'check', undefined, detail, { cause: error });
  }
  if (!stat.isDirectory()) {
    throw new StoreRefusedError(url, 'check', undefined, `${root} is not a directory`);
  }
  try {
    await fs.promises.access(root, fs.constants.W_OK | fs.constants.X_OK);
  } catch (error) {
    throw new StoreRefusedError(
      url,
      'check',
      undefined,
      `the directory ${root} is not writable by this process`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Environment variables whose values are secrets by their name (AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN). An access key id is not one: it names the key, as a user name does.
 */
const SECRET_NAME = /SECRET|TOKEN|PASSWORD|CREDENTIAL/i;
/** Shorter values are too likely to be words of an ordinary message to be cut out of it. */
const SECRET_CHARS_MIN = 8;

/**
 * A store's error with any secret the environment holds cut out of its message: some S3-compatible
 * servers quote the access key (or worse) in what they answer, and the message reaches a client.
 */
export function withoutSecrets(error: unknown, env: NodeJS.ProcessEnv = process.env): unknown {
  if (!(error instanceof Error)) return error;
  const secrets = Object.entries(env)
    .filter(
      ([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= SECRET_CHARS_MIN,
    )
    .map(([, value]) => value!);
  const scrub = (text: string) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text);
  if (secrets.every((secret) => !error.message.includes(secret))) return error;
  // Made anew, without `cause`: the SDK's error it keeps may hold the same text.
  if (error instanceof StoreError) {
    const Class = error.constructor as new (
      url: string,
      operation: string,
      key: string | undefined,
      detail: string,
    ) => StoreError;
    return new Class(error.storeUrl, error.operation, error.key, scrub(error.detail));
  }
  return new Error(scrub(error.message));
}
