/**
 * TLS and plaintext on one port, told apart by a connection's first byte, looked at once per
 * connection: a booblik frame starts with 0x00 (a length under 8 MiB), an HTTP request with a
 * letter, a TLS ClientHello with 0x16 (a handshake record). The byte is put back before the socket
 * is handed on, so nothing after the look differs from a port without TLS.
 */
import type net from 'node:net';
import tls from 'node:tls';
import type { TlsClientAuth } from '../config/keys.js';

/** The first byte of a TLS record carrying a handshake message (RFC 8446 section 5.1). */
export const TLS_HANDSHAKE_RECORD = 0x16;
/** A handshake not done within this is dropped: a connection that stalls there holds memory for nothing. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

export interface GateOptions {
  /** What plaintext gets: served (`allowed`) or refused (`required`). */
  plaintext: 'serve' | 'refuse';
  clientAuth: TlsClientAuth;
  /** The SecureContext of a new connection: the current one, read at its handshake. */
  context: () => tls.SecureContext;
  /** One line for a failed handshake (rate-limited by the caller). */
  warn: (line: string) => void;
}

export interface GateTargets {
  /** A socket that speaks the port's protocol: a net.Socket, or a TLSSocket after its handshake. */
  serve(socket: net.Socket): void;
  /** A plaintext socket on a port that requires TLS. */
  refuse(socket: net.Socket): void;
}

/** Looks at the first byte of `socket` and hands it on by what it is. */
export function gate(socket: net.Socket, options: GateOptions, targets: GateTargets): void {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  socket.on('error', () => {}); // a reset before the first byte: 'close' follows, nothing to say
  socket.once('data', (chunk: Buffer) => {
    socket.pause();
    socket.unshift(chunk);
    if (chunk[0] !== TLS_HANDSHAKE_RECORD) {
      if (options.plaintext === 'serve') {
        targets.serve(socket);
        socket.resume();
      } else targets.refuse(socket);
      return;
    }
    wrap(socket, peer, options, targets);
  });
}

function wrap(socket: net.Socket, peer: string, options: GateOptions, targets: GateTargets): void {
  const secure = new tls.TLSSocket(socket, {
    isServer: true,
    secureContext: options.context(),
    requestCert: options.clientAuth !== 'none',
    // `requested` verifies a certificate only when one is given: checked below, after the handshake.
    rejectUnauthorized: options.clientAuth === 'required',
  });
  const timer = setTimeout(() => {
    options.warn(`tls: handshake from ${peer} not done within ${TLS_HANDSHAKE_TIMEOUT_MS} ms; closed`);
    secure.destroy();
  }, TLS_HANDSHAKE_TIMEOUT_MS);
  timer.unref();
  const failed = (error: Error) => {
    clearTimeout(timer);
    options.warn(`tls: handshake from ${peer} failed: ${error.message}`);
    secure.destroy();
  };
  secure.once('error', failed);
  secure.once('secure', () => {
    clearTimeout(timer);
    secure.off('error', failed);
    if (options.clientAuth === 'requested' && !secure.authorized && hasPeerCertificate(secure)) {
      // A certificate that was offered and does not verify is refused, never taken as none.
      options.warn(`tls: client certificate from ${peer} refused: ${String(secure.authorizationError)}`);
      secure.destroy();
      return;
    }
    targets.serve(secure);
  });
}

function hasPeerCertificate(socket: tls.TLSSocket): boolean {
  const certificate = socket.getPeerCertificate();
  return certificate !== null && Object.keys(certificate).length > 0;
}
