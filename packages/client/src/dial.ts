/** Dialing a broker: the TCP connect with its timeout and abort, and where the socket reads into. */
import net from 'node:net';
import tls from 'node:tls';
import { FrameReader, responseFrameLimits } from '@booblik/protocol';
import { formatAddress, parseAddress } from './address.js';
import { checkCount } from './checks.js';
import { systemClock } from './clock.js';
import { AbortError, ConnectError, TimeoutError } from './errors.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './limits.js';
import type { ConnectOptions } from './request-options.js';
import { handshakeError, tlsConnectOptions } from './tls-options.js';

/**
 * Connects to `address`; `make` turns the connected socket into what the caller wants. The socket
 * reads straight into the frame reader, and each read goes to what `make` returned. With `tls`, the
 * connection is made once the handshake is done, and its chunks are copied into the reader (a
 * TLSSocket cannot read into buffers of ours).
 */
export function dial<T extends { onRead(bytes: number): void }>(
  address: string,
  options: ConnectOptions,
  make: (socket: net.Socket, frames: FrameReader, name: string) => T,
): Promise<T> {
  const target = parseAddress(address);
  const name = formatAddress(target);
  const clock = options.clock ?? systemClock;
  const timeoutMs = checkCount('timeoutMs', options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 1);
  const signal = options.signal;
  const secure = tlsConnectOptions(options.tls);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortError(`connect to ${name}`, { cause: signal.reason }));
      return;
    }
    // Answers are read into buffers the reader owns, a large one straight into a buffer of its size.
    const frames = new FrameReader(responseFrameLimits);
    let connection: T | undefined;
    let tcpConnected = false;
    const socket: net.Socket = secure
      ? tls.connect({ host: target.host, port: target.port, ...secure }).setNoDelay(true)
      : net.connect({
          host: target.host,
          port: target.port,
          noDelay: true,
          onread: {
            buffer: () => frames.readTarget(),
            // Reading starts after 'connect', whose handler makes the connection: it is there for every read.
            callback: (bytes: number) => {
              connection!.onRead(bytes);
              return true; // keep reading: answers are handled as they come, never held back
            },
          },
        });
    const finish = (error?: Error) => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', onError);
      socket.off(secure ? 'secureConnect' : 'connect', onConnect);
      socket.off('connect', onTcpConnect);
      if (error) {
        socket.destroy();
        reject(error);
      } else {
        connection = make(socket, frames, name);
        if (secure) socket.on('data', (chunk: Buffer) => copyInto(frames, chunk, connection!));
        resolve(connection);
      }
    };
    const onConnect = () => finish();
    const onTcpConnect = () => {
      tcpConnected = true;
    };
    const onError = (error: Error) =>
      finish(
        secure && tcpConnected
          ? handshakeError(name, error)
          : new ConnectError(name, error.message, { cause: error }),
      );
    const onAbort = () => finish(new AbortError(`connect to ${name}`, { cause: signal?.reason }));
    const timer = clock.setTimeout(() => {
      const timeout = new TimeoutError(`connect to ${name}`, timeoutMs);
      finish(new ConnectError(name, timeout.message, { cause: timeout }));
    }, timeoutMs);
    socket.once(secure ? 'secureConnect' : 'connect', onConnect);
    if (secure) socket.once('connect', onTcpConnect);
    socket.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Feeds a TLS chunk to the frame reader, in as many pieces as its buffers take. */
function copyInto(frames: FrameReader, chunk: Buffer, connection: { onRead(bytes: number): void }): void {
  let offset = 0;
  while (offset < chunk.length) {
    const n = chunk.copy(frames.readTarget(), 0, offset);
    offset += n;
    connection.onRead(n);
  }
}
