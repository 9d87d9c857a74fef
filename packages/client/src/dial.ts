/** Dialing a broker: the TCP connect with its timeout and abort, and where the socket reads into. */
import net from 'node:net';
import { FrameReader, responseFrameLimits } from '@booblik/protocol';
import { formatAddress, parseAddress } from './address.js';
import { checkCount } from './checks.js';
import { systemClock } from './clock.js';
import { AbortError, ConnectError, TimeoutError } from './errors.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './limits.js';
import type { ConnectOptions } from './request-options.js';

/**
 * Connects to `address`; `make` turns the connected socket into what the caller wants. The socket
 * reads straight into the frame reader, and each read goes to what `make` returned.
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
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortError(`connect to ${name}`, { cause: signal.reason }));
      return;
    }
    // Answers are read into buffers the reader owns, a large one straight into a buffer of its size.
    const frames = new FrameReader(responseFrameLimits);
    let connection: T | undefined;
    const socket = net.connect({
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
      socket.off('connect', onConnect);
      if (error) {
        socket.destroy();
        reject(error);
      } else {
        connection = make(socket, frames, name);
        resolve(connection);
      }
    };
    const onConnect = () => finish();
    const onError = (error: Error) => finish(new ConnectError(name, error.message, { cause: error }));
    const onAbort = () => finish(new AbortError(`connect to ${name}`, { cause: signal?.reason }));
    const timer = clock.setTimeout(() => {
      const timeout = new TimeoutError(`connect to ${name}`, timeoutMs);
      finish(new ConnectError(name, timeout.message, { cause: timeout }));
    }, timeoutMs);
    socket.once('connect', onConnect);
    socket.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
