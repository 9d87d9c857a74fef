/**
 * AUTHENTICATE request v1  => mechanism:string data:bytes
 * AUTHENTICATE response v1 (success body) => complete:int8 data:bytes principal:string expiresAtMs:int64
 * Error body: AUTHENTICATION_FAILED => reason:string; INVALID_ARGUMENT (an unknown mechanism)
 *
 * Says who is connecting. SCRAM-SHA-256 takes two requests on the same connection (client-first,
 * then client-final; each answer carries the server's message), TOKEN one. `complete` 1 means the
 * connection is now `principal`; `expiresAtMs` is when its credentials end (-1: never).
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';

export const AuthMechanism = {
  SCRAM_SHA_256: 'SCRAM-SHA-256',
  TOKEN: 'TOKEN',
} as const;

export const authMechanisms: readonly string[] = Object.values(AuthMechanism);

/** expiresAtMs of credentials that do not expire, and of an exchange not yet complete. */
export const NEVER_EXPIRES = -1;

/** A SCRAM message or a token: far below a frame, and bounded so a stranger cannot make the broker hold much. */
export const authDataBytesMax = 16 * 1024;

export interface AuthenticateRequest {
  mechanism: string;
  data: Buffer;
}

export interface AuthenticateResponse {
  /** The connection is now `principal`; false: send the mechanism's next message. */
  complete: boolean;
  data: Buffer;
  principal: string;
  expiresAtMs: number;
}

export function decodeAuthenticateRequest(frame: Buffer, payloadStart: number): AuthenticateRequest {
  const reader = new WireReader(frame, payloadStart);
  const mechanism = reader.string('mechanism');
  const length = reader.int32('data.length');
  if (length < 0 || length > authDataBytesMax)
    throw fieldError('data.length', length, `0..${authDataBytesMax}`);
  return { mechanism, data: Buffer.from(reader.bytes(length, 'data')) };
}

export function encodeAuthenticateRequest(correlationId: number, req: AuthenticateRequest): Buffer {
  const payloadBytes = stringBytes(req.mechanism) + 4 + req.data.length;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.AUTHENTICATE)
    .int16(1)
    .int32(correlationId);
  return w.string(req.mechanism).int32(req.data.length).bytes(req.data).done();
}

export function encodeAuthenticateResponse(correlationId: number, res: AuthenticateResponse): Buffer {
  const bodyBytes = 1 + 4 + res.data.length + stringBytes(res.principal) + 8;
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  w.int8(res.complete ? 1 : 0)
    .int32(res.data.length)
    .bytes(res.data);
  return w.string(res.principal).int64(res.expiresAtMs).done();
}

export function decodeAuthenticateResponse(body: Buffer): AuthenticateResponse {
  const reader = new WireReader(body);
  const complete = reader.int8('complete');
  if (complete !== 0 && complete !== 1) throw fieldError('complete', complete, '0 or 1');
  const length = reader.int32('data.length');
  if (length < 0 || length > authDataBytesMax)
    throw fieldError('data.length', length, `0..${authDataBytesMax}`);
  const data = Buffer.from(reader.bytes(length, 'data'));
  const principal = reader.string('principal');
  const expiresAtMs = reader.int64('expiresAtMs');
  if (expiresAtMs < NEVER_EXPIRES) throw fieldError('expiresAtMs', expiresAtMs, '>= -1');
  return { complete: complete === 1, data, principal, expiresAtMs };
}

/** AUTHENTICATION_FAILED's body: why, for people. It never says whether the user exists. */
export function encodeAuthenticationFailedResponse(correlationId: number, reason: string): Buffer {
  const bodyBytes = stringBytes(reason);
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.AUTHENTICATION_FAILED);
  return w.string(reason).done();
}

export function decodeAuthenticationFailed(body: Buffer): { reason: string } {
  return { reason: new WireReader(body).string('reason') };
}
