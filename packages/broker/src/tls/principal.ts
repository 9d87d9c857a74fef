import type net from 'node:net';
import tls from 'node:tls';

/**
 * The principal a connection's client certificate names: its subject CN, when the certificate was
 * verified against booblik.tls.ca.file; null for plaintext, no certificate, or no CN.
 */
export function tlsPrincipalOf(socket: net.Socket): string | null {
  if (!(socket instanceof tls.TLSSocket) || !socket.authorized) return null;
  const cn = socket.getPeerCertificate().subject?.CN;
  // A certificate with several CNs names no one principal: fail closed.
  return typeof cn === 'string' && cn !== '' ? cn : null;
}
