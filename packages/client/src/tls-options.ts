/**
 * The `tls` connect option: checked, turned into node:tls options, and the handshake's failures
 * turned into errors that say what to do.
 */
import type tls from 'node:tls';
import { InvalidArgumentError, TlsError } from './errors.js';

/** PEM text, as a string or the bytes of a file (`fs.readFileSync(path)`). */
export type Pem = string | Buffer;

export interface TlsOptions {
  /** CA certificates to trust instead of Node's default list (PEM contents, not a path). */
  ca?: Pem;
  /** A client certificate (PEM contents), for a broker with booblik.tls.client.auth; needs `key`. */
  cert?: Pem;
  /** The client certificate's private key (PEM contents, unencrypted). */
  key?: Pem;
  /** The name sent in SNI and checked against the broker's certificate (default: the address's host). */
  servername?: string;
}

const fields = new Set(['ca', 'cert', 'key', 'servername']);

function checkPem(field: string, value: unknown): void {
  if (value === undefined) return;
  if ((typeof value !== 'string' && !Buffer.isBuffer(value)) || value.length === 0) {
    throw new InvalidArgumentError(`tls.${field}: expected PEM contents (a non-empty string or Buffer)`);
  }
  if (!value.toString('latin1' as never).includes('-----BEGIN ')) {
    // Said without the value: it may be a key.
    throw new InvalidArgumentError(
      `tls.${field}: not PEM (no -----BEGIN line); pass the file's contents, not its path`,
    );
  }
}

/** node:tls options for `tls` (true: Node's default CAs), or null for plaintext; bad input throws. */
export function tlsConnectOptions(option: boolean | TlsOptions | undefined): tls.ConnectionOptions | null {
  if (option === undefined || option === false) return null;
  if (option === true) return {};
  if (typeof option !== 'object' || option === null) {
    throw new InvalidArgumentError(`tls: expected true, false or an object, got ${typeof option}`);
  }
  for (const name of Object.keys(option)) {
    if (!fields.has(name)) {
      throw new InvalidArgumentError(`tls.${name}: unknown option (expected ca, cert, key, servername)`);
    }
  }
  checkPem('ca', option.ca);
  checkPem('cert', option.cert);
  checkPem('key', option.key);
  if ((option.cert === undefined) !== (option.key === undefined)) {
    throw new InvalidArgumentError(
      `tls.${option.cert === undefined ? 'cert' : 'key'}: needed with tls.${option.cert === undefined ? 'key' : 'cert'}`,
    );
  }
  if (
    option.servername !== undefined &&
    (typeof option.servername !== 'string' || option.servername === '')
  ) {
    throw new InvalidArgumentError('tls.servername: expected a host name');
  }
  return {
    ...(option.ca === undefined ? {} : { ca: option.ca }),
    ...(option.cert === undefined ? {} : { cert: option.cert, key: option.key }),
    ...(option.servername === undefined ? {} : { servername: option.servername }),
  };
}

/** What the broker's certificate verification can fail with (node:tls codes). */
const untrusted = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/**
 * The error for a handshake that failed after the TCP connection was made. A broker without TLS reads
 * the ClientHello as an over-long frame and closes: the handshake sees the connection end.
 */
export function handshakeError(address: string, error: NodeJS.ErrnoException): TlsError {
  const code = error.code ?? '';
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    return new TlsError(address, 'the broker did not answer TLS: is booblik.tls on?', { cause: error });
  }
  if (untrusted.has(code)) {
    return new TlsError(address, `TLS: the broker's certificate is not trusted: ${error.message} (${code})`, {
      cause: error,
    });
  }
  const reason = (error as { reason?: unknown }).reason;
  return new TlsError(
    address,
    `TLS handshake failed: ${typeof reason === 'string' ? reason : error.message}`,
    {
      cause: error,
    },
  );
}

/** Alerts a broker sends when it does not take this client's certificate (TLS 1.3 sends them after the handshake). */
const refusedCertificate =
  /alert (certificate required|unknown ca|bad certificate|certificate unknown|certificate expired|certificate revoked)/;

/**
 * Why a connection was lost, said plainly: OpenSSL's reason without its error-stack prefix, and what a
 * refusal of the client certificate means. Null for errors that are not TLS's.
 */
export function tlsLossReason(error: Error): string | null {
  const reason = (error as { reason?: unknown }).reason;
  if (typeof reason !== 'string' || reason === '') return null;
  return refusedCertificate.test(reason)
    ? `the broker refused this client's certificate (TLS ${reason})`
    : `TLS: ${reason}`;
}
