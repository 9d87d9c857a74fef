/**
 * The broker's TLS files read and checked into one SecureContext: the certificate (with any
 * intermediates), its key, and the CAs client certificates are verified against. Every failure names
 * the file and its key; no message ever carries a file's content.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';

/** Which of the files: also the `file` label of the expiry metric. */
export type TlsFileRole = 'cert' | 'key' | 'ca';

export const tlsFileKeys: Record<TlsFileRole, string> = {
  cert: 'booblik.tls.cert.file',
  key: 'booblik.tls.key.file',
  ca: 'booblik.tls.ca.file',
};

export interface TlsFiles {
  cert: string;
  key: string;
  /** Empty: none (client certificates are not verified). */
  ca: string;
}

/** The bytes of the files, as read together. */
export interface TlsContents {
  cert: Buffer;
  key: Buffer;
  ca: Buffer | null;
}

export interface Credentials {
  context: tls.SecureContext;
  contents: TlsContents;
  /** When the broker's own certificate (the first of its file) expires, Unix ms. */
  certExpiresAtMs: number;
  /** When the first of the CA file's certificates expires, Unix ms; null without a CA file. */
  caExpiresAtMs: number | null;
}

/** A TLS file that cannot be read, does not parse, or does not go with the others. */
export class TlsFileError extends Error {
  override name = 'TlsFileError';
  constructor(
    readonly role: TlsFileRole,
    readonly file: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`${tlsFileKeys[role]}: ${file} ${reason}`, options);
  }
}

function readOne(role: TlsFileRole, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new TlsFileError(role, file, `cannot be read (${code})`, { cause: error });
  }
}

/** Reads the files; throws TlsFileError naming the first that cannot be read. */
export function readTlsFiles(files: TlsFiles): TlsContents {
  return {
    cert: readOne('cert', files.cert),
    key: readOne('key', files.key),
    ca: files.ca === '' ? null : readOne('ca', files.ca),
  };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificate blocks of a file's contents, in order. */
export function pemCertificateBlocks(pem: Buffer | string): string[] {
  return (typeof pem === 'string' ? pem : pem.toString('latin1')).match(PEM_CERTIFICATE) ?? [];
}

/** Every certificate of a PEM file, parsed; none, or one that does not parse, is a TlsFileError. */
function certificatesOf(role: TlsFileRole, file: string, pem: Buffer): X509Certificate[] {
  const blocks = pemCertificateBlocks(pem);
  if (blocks.length === 0) throw new TlsFileError(role, file, 'holds no PEM certificate');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw new TlsFileError(role, file, `certificate ${i + 1} does not parse`, { cause: error });
    }
  });
}

function expiryOf(certificate: X509Certificate): number {
  return Date.parse(certificate.validTo);
}

/** Checks the contents and makes the SecureContext; throws TlsFileError naming the file at fault. */
export function buildCredentials(files: TlsFiles, contents: TlsContents): Credentials {
  const [own] = certificatesOf('cert', files.cert, contents.cert);
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(contents.key);
  } catch (error) {
    // The library's message says why without quoting the key.
    throw new TlsFileError('key', files.key, 'is not an unencrypted PEM private key', { cause: error });
  }
  if (!own!.checkPrivateKey(key)) {
    throw new TlsFileError('key', files.key, `does not match the certificate in ${files.cert}`);
  }
  const cas = contents.ca === null ? [] : certificatesOf('ca', files.ca, contents.ca);
  let context: tls.SecureContext;
  try {
    context = tls.createSecureContext({
      cert: contents.cert,
      key: contents.key,
      ...(contents.ca === null ? {} : { ca: contents.ca }),
    });
  } catch (error) {
    throw new TlsFileError('cert', files.cert, `is refused by TLS: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    context,
    contents,
    certExpiresAtMs: expiryOf(own!),
    caExpiresAtMs: cas.length === 0 ? null : Math.min(...cas.map(expiryOf)),
  };
}

/** Reads and checks the files at once. */
export function loadCredentials(files: TlsFiles): Credentials {
  return buildCredentials(files, readTlsFiles(files));
}

/** Whether two reads hold the same bytes (a poll that found nothing new). */
export function sameContents(a: TlsContents, b: TlsContents): boolean {
  return (
    a.cert.equals(b.cert) && a.key.equals(b.key) && (a.ca ?? Buffer.alloc(0)).equals(b.ca ?? Buffer.alloc(0))
  );
}
