/**
 * `booblik.tls=required` and a plaintext connection: its first complete request frame is answered
 * TLS_REQUIRED (its correlationId, no body) and the connection closed, so a plaintext client learns
 * why instead of seeing a bare close. Nothing of the request is decoded beyond its header.
 */
import type net from 'node:net';
import {
  ErrorCode,
  encodeErrorResponse,
  type FrameSink,
  FrameSplitter,
  readRequestHeader,
  requestFrameLimits,
} from '@booblik/protocol';
import { shutdownGraceMs } from '../limits.js';

export function refusePlaintext(socket: net.Socket, counted: () => void): void {
  const splitter = new FrameSplitter(requestFrameLimits);
  const answer = (correlationId: number) => {
    socket.removeAllListeners('data');
    counted();
    socket.end(encodeErrorResponse(correlationId, ErrorCode.TLS_REQUIRED));
    // A peer that never closes its side is cut off after the grace period.
    const timer = setTimeout(() => socket.destroy(), shutdownGraceMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  const sink: FrameSink = {
    frame: (frame) => {
      answer(readRequestHeader(frame).correlationId);
      return false;
    },
    // No correlationId arrived: 0, as for any short frame.
    shortFrame: () => answer(0),
    // Not booblik's framing at all (HTTP, garbage): nothing to answer in.
    invalidLength: () => socket.destroy(),
  };
  socket.on('error', () => {}); // 'close' follows
  socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
  socket.resume();
}
