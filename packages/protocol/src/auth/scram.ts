/**
 * SCRAM-SHA-256 (RFC 5802 with RFC 7677's hash), without channel binding: the messages and the
 * arithmetic both sides need. The broker keeps only what `scramCredential` derives (salt,
 * iterations, StoredKey, ServerKey); the client pays the iterations.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ScramCredential } from '../requests/users/v1.js';

/** No channel binding, no authzid: what every message of ours starts or ends with. */
const GS2_HEADER = 'n,,';
/** base64 of GS2_HEADER: the `c=` attribute of a client-final message. */
const CHANNEL_BINDING = 'biws';

export class ScramError extends Error {
  override name = 'ScramError';
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** RFC 5802 saslname: `,` and `=` escaped. */
export function escapeSaslName(name: string): string {
  return name.replaceAll('=', '=3D').replaceAll(',', '=2C');
}

function unescapeSaslName(name: string): string {
  if (/=(?!2C|3D)/.test(name)) throw new ScramError('a user name escapes something other than "," and "="');
  return name.replaceAll('=2C', ',').replaceAll('=3D', '=');
}

/** `a=1,b=2` into its attributes; each attribute is one letter. */
function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    if (!/^[a-zA-Z]=/.test(part))
      throw new ScramError(`not a SCRAM attribute: ${JSON.stringify(part.slice(0, 40))}`);
    out.set(part[0]!, part.slice(2));
  }
  return out;
}

function required(attrs: Map<string, string>, key: string, what: string): string {
  const value = attrs.get(key);
  if (value === undefined || value === '') throw new ScramError(`${what} has no ${key}=`);
  return value;
}

const printableNonce = /^[\x21-\x2b\x2d-\x7e]+$/;

export function scramNonce(): string {
  return randomBytes(18).toString('base64');
}

/** What verifies a password, derived from it: kept by the broker instead of the password. */
export function scramCredential(password: string, salt: Buffer, iterations: number): ScramCredential {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  return {
    salt,
    iterations,
    storedKey: createHash('sha256').update(clientKey).digest(),
    serverKey: hmac(salted, 'Server Key'),
  };
}

// The client's side.

export interface ClientFirst {
  /** The message to send. */
  message: string;
  /** `n=...,r=...`: part of the AuthMessage. */
  bare: string;
  nonce: string;
}

export function clientFirst(user: string, nonce = scramNonce()): ClientFirst {
  const bare = `n=${escapeSaslName(user)},r=${nonce}`;
  return { message: GS2_HEADER + bare, bare, nonce };
}

export interface ClientFinal {
  message: string;
  /** The ServerSignature the broker must send back: a broker that cannot is not the one that holds the user. */
  expectedServerSignature: Buffer;
}

export function clientFinal(first: ClientFirst, serverFirst: string, password: string): ClientFinal {
  const attrs = attributes(serverFirst);
  const nonce = required(attrs, 'r', 'the server-first message');
  if (!nonce.startsWith(first.nonce) || nonce.length === first.nonce.length)
    throw new ScramError("the broker's nonce does not extend the client's");
  const salt = Buffer.from(required(attrs, 's', 'the server-first message'), 'base64');
  const iterations = Number(required(attrs, 'i', 'the server-first message'));
  if (!Number.isSafeInteger(iterations) || iterations < 1)
    throw new ScramError(`the broker asked for ${attrs.get('i')} iterations`);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  const storedKey = createHash('sha256').update(clientKey).digest();
  const withoutProof = `c=${CHANNEL_BINDING},r=${nonce}`;
  const authMessage = `${first.bare},${serverFirst},${withoutProof}`;
  const proof = xor(clientKey, hmac(storedKey, authMessage));
  return {
    message: `${withoutProof},p=${proof.toString('base64')}`,
    expectedServerSignature: hmac(hmac(salted, 'Server Key'), authMessage),
  };
}

/** Throws unless the server-final message carries the signature only the user's broker can make. */
export function checkServerFinal(final: ClientFinal, serverFinal: string): void {
  const attrs = attributes(serverFinal);
  if (attrs.has('e')) throw new ScramError(`the broker refused: ${attrs.get('e')}`);
  const signature = Buffer.from(required(attrs, 'v', 'the server-final message'), 'base64');
  if (
    signature.length !== final.expectedServerSignature.length ||
    !timingSafeEqual(signature, final.expectedServerSignature)
  )
    throw new ScramError('the broker could not prove it holds the user (its server signature is wrong)');
}

// The broker's side.

export interface ParsedClientFirst {
  user: string;
  nonce: string;
  bare: string;
}

export function parseClientFirst(message: string): ParsedClientFirst {
  if (!message.startsWith('n,')) throw new ScramError('only "n,," (no channel binding) is supported');
  const rest = message.slice(2);
  const comma = rest.indexOf(',');
  if (comma !== 0) throw new ScramError('an authorization identity is not supported');
  const bare = rest.slice(1);
  const attrs = attributes(bare);
  const nonce = required(attrs, 'r', 'the client-first message');
  if (!printableNonce.test(nonce)) throw new ScramError('the nonce has characters SCRAM does not allow');
  if (attrs.has('m')) throw new ScramError('SCRAM extensions are not supported');
  return { user: unescapeSaslName(required(attrs, 'n', 'the client-first message')), nonce, bare };
}

export function serverFirst(
  credential: ScramCredential,
  clientNonce: string,
  serverNonce = scramNonce(),
): string {
  return `r=${clientNonce}${serverNonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
}

/**
 * Checks a client-final message against the exchange so far; answers the server-final message, or
 * throws (a wrong proof, another nonce).
 */
export function verifyClientFinal(
  credential: ScramCredential,
  first: ParsedClientFirst,
  sentServerFirst: string,
  message: string,
): string {
  const proofAt = message.lastIndexOf(',p=');
  if (proofAt < 0) throw new ScramError('the client-final message has no proof');
  const withoutProof = message.slice(0, proofAt);
  const attrs = attributes(withoutProof);
  if (required(attrs, 'c', 'the client-final message') !== CHANNEL_BINDING)
    throw new ScramError('the channel binding is not "n,,"');
  const nonce = required(attrs, 'r', 'the client-final message');
  if (nonce !== required(attributes(sentServerFirst), 'r', 'the server-first message'))
    throw new ScramError('the nonce is not the one of this exchange');
  const proof = Buffer.from(message.slice(proofAt + 3), 'base64');
  const authMessage = `${first.bare},${sentServerFirst},${withoutProof}`;
  const clientSignature = hmac(credential.storedKey, authMessage);
  if (proof.length !== clientSignature.length) throw new ScramError('wrong proof');
  const clientKey = xor(proof, clientSignature);
  const stored = createHash('sha256').update(clientKey).digest();
  if (!timingSafeEqual(stored, credential.storedKey)) throw new ScramError('wrong proof');
  return `v=${hmac(credential.serverKey, authMessage).toString('base64')}`;
}
