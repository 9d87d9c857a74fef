/**
 * APPLY request v2 => v1's bytes, with one more change op:
 *   change => op:int8 (... | 3 delete purging the store => name:string expectedRevision:int64)
 * APPLY response v2 => v1's
 *
 * Op 3 deletes the topic as op 2 does and also removes every object of its history from its
 * fragment store. It is a version of its own so that nothing older can misread it: a v1 decoder
 * refuses op 3 as CORRUPT_REQUEST, and a broker without v2 answers UNSUPPORTED_VERSION; either way
 * nothing is deleted. A client sends v2 only for an APPLY that asks for a purge.
 */
import { type ApplyRequest, readApplyRequest, writeApplyRequest } from './v1.js';

export function decodeApplyRequestV2(frame: Buffer, payloadStart: number): ApplyRequest {
  return readApplyRequest(frame, payloadStart, 2);
}

export function encodeApplyRequestV2(correlationId: number, req: ApplyRequest): Buffer {
  return writeApplyRequest(correlationId, req, 2);
}
