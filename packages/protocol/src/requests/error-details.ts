/**
 * Error bodies of the additions. In v1 an error response has no body; an answer to a request of an
 * addition (APPLY, LIST, API_VERSIONS, PRODUCE v2, METADATA v2) carries one for these codes only:
 *
 * REVISION_MISMATCH (7) => changeIndex:int32 topic:string expectedRevision:int64 actualRevision:int64
 *   (actualRevision 0: the topic does not exist)
 * OFFSET_MISMATCH (8)   => logEndOffset:int64
 * INVALID_ARGUMENT (11) => index:int32 message:string
 *   (index: the APPLY change at fault, or -1 when the fault is not in one change)
 * NOT_PRIMARY (9)       => route:Route   (to PRODUCE v3 and FETCH v3: who serves the partition now)
 */
import { fieldError, readOffset, WireReader } from '../codec/reader.js';
import { stringBytes, WireWriter } from '../codec/writer.js';
import { ErrorCode } from '../errors.js';
import { lengthPrefixBytes, responseHeaderBytes } from '../limits.js';
import { type Route, readRoute, routeBytes, writeRoute } from '../topics/route.js';

export interface RevisionMismatch {
  changeIndex: number;
  topic: string;
  expectedRevision: number;
  /** 0 when the topic does not exist. */
  actualRevision: number;
}

export interface InvalidArgument {
  /** The APPLY change at fault, or -1. */
  index: number;
  /** Names the field and what is allowed: `changes[2].partitions: 2, expected >= 3 (...)`. */
  message: string;
}

function errorFrame(correlationId: number, code: number, bodyBytes: number): WireWriter {
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(code);
  return w;
}

export function encodeRevisionMismatchResponse(correlationId: number, m: RevisionMismatch): Buffer {
  const w = errorFrame(correlationId, ErrorCode.REVISION_MISMATCH, 4 + stringBytes(m.topic) + 16);
  return w.int32(m.changeIndex).string(m.topic).int64(m.expectedRevision).int64(m.actualRevision).done();
}

export function decodeRevisionMismatch(body: Buffer): RevisionMismatch {
  const reader = new WireReader(body);
  return {
    changeIndex: reader.int32('changeIndex'),
    topic: reader.string('topic'),
    expectedRevision: reader.int64('expectedRevision'),
    actualRevision: reader.int64('actualRevision'),
  };
}

export function encodeOffsetMismatchResponse(correlationId: number, logEndOffset: number): Buffer {
  return errorFrame(correlationId, ErrorCode.OFFSET_MISMATCH, 8).int64(logEndOffset).done();
}

export function decodeOffsetMismatch(body: Buffer): { logEndOffset: number } {
  return { logEndOffset: readOffset(new WireReader(body), 'logEndOffset') };
}

export function encodeInvalidArgumentResponse(correlationId: number, e: InvalidArgument): Buffer {
  const message = truncateUtf8(e.message, 0xffff);
  const w = errorFrame(correlationId, ErrorCode.INVALID_ARGUMENT, 4 + stringBytes(message));
  return w.int32(e.index).string(message).done();
}

export function decodeInvalidArgument(body: Buffer): InvalidArgument {
  const reader = new WireReader(body);
  const index = reader.int32('index');
  if (index < -1) throw fieldError('index', index, '>= -1');
  return { index, message: reader.string('message') };
}

export function encodeNotPrimaryResponse(correlationId: number, route: Route): Buffer {
  const w = errorFrame(correlationId, ErrorCode.NOT_PRIMARY, routeBytes(route));
  writeRoute(w, route);
  return w.done();
}

export function decodeNotPrimary(body: Buffer): Route {
  return readRoute(new WireReader(body), 'route');
}

/** A message cut to fit a u16 string (whole characters). */
function truncateUtf8(s: string, bytesMax: number): string {
  if (Buffer.byteLength(s) <= bytesMax) return s;
  let out = s.slice(0, bytesMax);
  while (Buffer.byteLength(out) > bytesMax) out = out.slice(0, -1);
  return out;
}
