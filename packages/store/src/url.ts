import { fileURLToPath, pathToFileURL } from 'node:url';
import { StoreUrlError } from './errors.js';
import { checkPrefix } from './keys.js';

/** Where a store lives, as its URL says; `url` is the normalized text, safe to log. */
export type StoreLocation = FileLocation | S3Location;

export interface FileLocation {
  kind: 'file';
  url: string;
  /** An absolute directory; it must exist (a store never creates its own root: it may be a mount). */
  root: string;
}

export interface S3Location {
  kind: 's3';
  url: string;
  bucket: string;
  /** '' or a key prefix ending with '/', put in front of every key. */
  prefix: string;
  /** An http(s) URL of an S3-compatible server; unset: the SDK's (AWS_ENDPOINT_URL_S3, AWS). */
  endpoint?: string;
  /** Unset: the SDK's default chain (AWS_REGION, the config file). */
  region?: string;
  /** Unset: path style when a custom endpoint is given (URL or environment), virtual-hosted otherwise. */
  forcePathStyle?: boolean;
}

const S3_OPTIONS = ['endpoint', 'region', 'forcePathStyle'] as const;
/** S3's rule for a general purpose bucket's name. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/**
 * Parses `file:///absolute/path` or `s3://bucket[/prefix][?endpoint=URL&region=R&forcePathStyle=true]`.
 * Every refusal is a `StoreUrlError` naming the one field that is wrong.
 */
export function parseStoreUrl(text: string): StoreLocation {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new StoreUrlError(String(text), 'url', 'empty, expected file:///path or s3://bucket/prefix');
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new StoreUrlError(text, 'url', 'not a URL, expected file:///path or s3://bucket/prefix');
  }
  if (url.protocol === 'file:') return parseFileUrl(text, url);
  if (url.protocol === 's3:') return parseS3Url(text, url);
  throw new StoreUrlError(
    text,
    'scheme',
    `${JSON.stringify(url.protocol)} not supported, expected file: or s3:`,
  );
}

function parseFileUrl(text: string, url: URL): FileLocation {
  if (url.hostname !== '' && url.hostname !== 'localhost') {
    throw new StoreUrlError(
      text,
      'host',
      `${JSON.stringify(url.hostname)} not supported, expected file:///absolute/path`,
    );
  }
  if (url.search !== '')
    throw new StoreUrlError(text, 'query', `${JSON.stringify(url.search)}: file:// takes no options`);
  if (url.hash !== '') throw new StoreUrlError(text, 'fragment', `${JSON.stringify(url.hash)} not allowed`);
  let root: string;
  try {
    root = fileURLToPath(url);
  } catch (error) {
    throw new StoreUrlError(text, 'path', (error as Error).message);
  }
  if (root.length > 1 && root.endsWith('/')) root = root.slice(0, -1);
  return { kind: 'file', url: pathToFileURL(root).href, root };
}

function parseS3Url(text: string, url: URL): S3Location {
  if (url.username !== '' || url.password !== '') {
    throw new StoreUrlError(
      text,
      'credentials',
      'not allowed in the URL; they come from the standard AWS sources (environment, profile, role)',
    );
  }
  if (url.port !== '') throw new StoreUrlError(text, 'bucket', 'has a port; put the server in ?endpoint=');
  const bucket = url.hostname;
  if (bucket === '') throw new StoreUrlError(text, 'bucket', 'missing, expected s3://bucket/prefix');
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    throw new StoreUrlError(
      text,
      'bucket',
      `${JSON.stringify(bucket)} is not a bucket name (3-63 of a-z 0-9 . -, starting and ending with a letter or digit)`,
    );
  }
  if (url.hash !== '') throw new StoreUrlError(text, 'fragment', `${JSON.stringify(url.hash)} not allowed`);

  let prefix = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (prefix !== '') {
    if (!prefix.endsWith('/')) prefix += '/';
    try {
      checkPrefix(prefix);
    } catch (error) {
      throw new StoreUrlError(text, 'prefix', (error as Error).message);
    }
  }

  const location: S3Location = { kind: 's3', url: '', bucket, prefix };
  const seen = new Set<string>();
  for (const [name, value] of url.searchParams) {
    if (!(S3_OPTIONS as readonly string[]).includes(name)) {
      throw new StoreUrlError(text, name, `unknown option, expected one of ${S3_OPTIONS.join(', ')}`);
    }
    if (seen.has(name)) throw new StoreUrlError(text, name, 'given more than once');
    seen.add(name);
    if (name === 'endpoint') location.endpoint = parseEndpoint(text, value);
    else if (name === 'region') {
      if (!REGION_NAME.test(value)) {
        throw new StoreUrlError(
          text,
          'region',
          `${JSON.stringify(value)}, expected a region name such as us-east-1`,
        );
      }
      location.region = value;
    } else {
      if (value !== 'true' && value !== 'false') {
        throw new StoreUrlError(text, 'forcePathStyle', `${JSON.stringify(value)}, expected true or false`);
      }
      location.forcePathStyle = value === 'true';
    }
  }
  // Every value is an origin, a region name or a boolean: nothing in them needs escaping to be read back.
  const query: string[] = [];
  if (location.endpoint !== undefined) query.push(`endpoint=${location.endpoint}`);
  if (location.region !== undefined) query.push(`region=${location.region}`);
  if (location.forcePathStyle !== undefined) query.push(`forcePathStyle=${location.forcePathStyle}`);
  const search = query.length > 0 ? `?${query.join('&')}` : '';
  location.url = `s3://${bucket}/${prefix.split('/').map(encodeURIComponent).join('/')}${search}`;
  return location;
}

function parseEndpoint(text: string, value: string): string {
  let endpoint: URL;
  try {
    endpoint = new URL(value);
  } catch {
    throw new StoreUrlError(
      text,
      'endpoint',
      `${JSON.stringify(value)} is not a URL, expected http(s)://host:port`,
    );
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
    throw new StoreUrlError(
      text,
      'endpoint',
      `${JSON.stringify(value)}, expected an http:// or https:// URL`,
    );
  }
  if (endpoint.username !== '' || endpoint.password !== '') {
    throw new StoreUrlError(text, 'endpoint', 'has credentials; they come from the standard AWS sources');
  }
  if (endpoint.pathname !== '/' || endpoint.search !== '' || endpoint.hash !== '') {
    throw new StoreUrlError(
      text,
      'endpoint',
      `${JSON.stringify(value)} has a path or query, expected http(s)://host:port`,
    );
  }
  return endpoint.origin;
}
