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
  /** The certificate, key and CAs a new connection gets (setContext replaces them). */
  context: tls.SecureContextOptions;
  /** One line for a failed handshake (rate-limited by the caller). */
  warn: (line: string) => void;
}

export interface GateTargets {
  /** A socket that speaks the port's protocol: a net.Socket, or a TLSSocket after its handshake. */
  serve(socket: net.Socket): void;
  /** A plaintext socket on a port that requires TLS. */
  refuse(socket: net.Socket): void;
}

/**
 * One port's gate. TLS connections go through a tls.Server that never listens (it is handed each
 * socket), so Node's own server does the handshake, its timeout and the client-certificate checks.
 */
export class ConnectionGate {
  private readonly server: tls.Server;
  /**
   * Connections not handed on yet (no first byte, or a handshake under way), by peer address: a
   * TLSSocket's peer is its raw socket's, and no two live connections share one. Closed at shutdown,
   * where the listener waits for every connection it accepted.
   */
  private readonly unserved = new Map<string, net.Socket>();

  constructor(
    private readonly options: GateOptions,
    private readonly targets: GateTargets,
  ) {
    this.server = tls.createServer({
      ...options.context,
      requestCert: options.clientAuth !== 'none',
      // `requested` verifies a certificate only when one is given: checked below, after the handshake.
      rejectUnauthorized: options.clientAuth === 'required',
      handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
    });
    this.server.on('tlsClientError', (error, socket) => {
      // A certificate that did not verify is closed by Node without an error of its own: say why.
      const why = socket.authorizationError
        ? `client certificate refused: ${String(socket.authorizationError)}`
        : reasonOf(error);
      options.warn(`tls: handshake from ${peerOf(socket)} failed: ${why}`);
      socket.destroy();
    });
    this.server.on('secureConnection', (socket) => this.secured(socket));
  }

  /** New connections get these; live ones keep theirs. */
  setContext(context: tls.SecureContextOptions): void {
    this.server.setSecureContext(context);
  }

  /** Looks at the first byte of `socket` and hands it on by what it is. */
  accept(socket: net.Socket): void {
    socket.on('error', () => {}); // a reset before the first byte: 'close' follows, nothing to say
    // A socket closed already has no peer: nothing to track, 'close' follows.
    const peer = socket.remoteAddress ? peerOf(socket) : '';
    if (peer !== '') this.unserved.set(peer, socket);
    socket.once('close', () => {
      if (this.unserved.get(peer) === socket) this.unserved.delete(peer);
    });
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE_RECORD) {
        this.server.emit('connection', socket);
        return;
      }
      // A refused one stays unserved: it is closed after its answer, or at shutdown.
      if (this.options.plaintext === 'refuse') {
        this.targets.refuse(socket);
        return;
      }
      this.unserved.delete(peer);
      this.targets.serve(socket);
      socket.resume();
    });
  }

  /** Closes every connection not handed on yet; those handed on are their owners' to close. */
  close(): void {
    for (const socket of this.unserved.values()) socket.destroy();
    this.unserved.clear();
  }

  private secured(socket: tls.TLSSocket): void {
    if (this.options.clientAuth === 'requested' && !socket.authorized && hasPeerCertificate(socket)) {
      // A certificate that was offered and does not verify is refused, never taken as none.
      this.options.warn(
        `tls: client certificate from ${peerOf(socket)} refused: ${String(socket.authorizationError)}`,
      );
      socket.destroy();
      return;
    }
    this.unserved.delete(peerOf(socket));
    this.targets.serve(socket);
  }
}

/** The peer, when the socket still knows it (one closed during the handshake may not). */
function peerOf(socket: net.Socket): string {
  return socket.remoteAddress ? `${socket.remoteAddress}:${socket.remotePort}` : 'a client';
}

/** OpenSSL's reason alone ("peer did not return a certificate"), without its error-stack prefix. */
function reasonOf(error: Error): string {
  // A Node client that does not trust the certificate closes without an alert.
  if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') {
    return "the client closed the connection during the handshake (does it trust this broker's certificate?)";
  }
  const reason = (error as { reason?: unknown }).reason;
  return typeof reason === 'string' && reason !== '' ? reason : error.message;
}

function hasPeerCertificate(socket: tls.TLSSocket): boolean {
  const certificate = socket.getPeerCertificate();
  return certificate !== null && Object.keys(certificate).length > 0;
}
