import { WireReader } from '../codec/reader.js';
import { ProtocolError } from '../errors.js';
import {
  frameBytesMax,
  lengthPrefixBytes,
  requestFrameBytesMin,
  requestHeaderBytes,
  responseFrameBytesMin,
  responseHeaderBytes,
} from '../limits.js';
import type { FrameLimits } from './splitter.js';

/** Request header => apiKey:int16 apiVersion:int16 correlationId:int32 */
export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
}

/** Response header => correlationId:int32 errorCode:int16 */
export interface ResponseHeader {
  correlationId: number;
  errorCode: number;
}

/** What a broker's splitter enforces on requests (spec section 1). */
export const requestFrameLimits: FrameLimits = {
  frameBytesMin: requestFrameBytesMin,
  frameBytesMax,
  headerBytes: requestHeaderBytes,
};

/** What a client's splitter enforces on responses: below 6 or above 8 MiB is a protocol error. */
export const responseFrameLimits: FrameLimits = {
  frameBytesMin: responseFrameBytesMin,
  frameBytesMax,
  headerBytes: responseHeaderBytes,
};

/** Reads the header of a request frame (the bytes after the length prefix). */
export function readRequestHeader(frame: Buffer): RequestHeader {
  return {
    apiKey: frame.readInt16BE(0),
    apiVersion: frame.readInt16BE(2),
    correlationId: frame.readInt32BE(4),
  };
}

/** Starts a request frame: writes length prefix and header, returns a reader-free offset for the payload. */
export function writeRequestHeader(buf: Buffer, header: RequestHeader, payloadBytes: number): number {
  buf.writeInt32BE(requestHeaderBytes + payloadBytes, 0);
  buf.writeInt16BE(header.apiKey, 4);
  buf.writeInt16BE(header.apiVersion, 6);
  buf.writeInt32BE(header.correlationId, 8);
  return lengthPrefixBytes + requestHeaderBytes;
}

/** Starts a response frame: length prefix, correlationId, errorCode. Returns where the body starts. */
export function writeResponseHeader(
  buf: Buffer,
  correlationId: number,
  errorCode: number,
  bodyBytes: number,
): number {
  buf.writeInt32BE(responseHeaderBytes + bodyBytes, 0);
  buf.writeInt32BE(correlationId, 4);
  buf.writeInt16BE(errorCode, 8);
  return lengthPrefixBytes + responseHeaderBytes;
}

/** A response frame split into header and body (a view). */
export interface ResponseFrame extends ResponseHeader {
  body: Buffer;
}

/** Splits a response frame (bytes after the length prefix) into its header and body. */
export function readResponseFrame(frame: Buffer): ResponseFrame {
  if (frame.length < responseHeaderBytes || frame.length > frameBytesMax) {
    throw new ProtocolError(
      `response frame of ${frame.length} bytes, expected ${responseHeaderBytes}..${frameBytesMax}`,
    );
  }
  const reader = new WireReader(frame);
  const correlationId = reader.int32('correlationId');
  const errorCode = reader.int16('errorCode');
  return { correlationId, errorCode, body: frame.subarray(responseHeaderBytes) };
}

/** An error response: the header alone, frameLength 6, no body. */
export function encodeErrorResponse(correlationId: number, errorCode: number): Buffer {
  const buf = Buffer.allocUnsafe(lengthPrefixBytes + responseHeaderBytes);
  writeResponseHeader(buf, correlationId, errorCode, 0);
  return buf;
}

/** Rewrites the version of a whole request frame (length prefix included): v3 reuses v2's bytes. */
export function setRequestVersion(frame: Buffer, version: number): Buffer {
  frame.writeInt16BE(version, lengthPrefixBytes + 2);
  return frame;
}
