import net from 'node:net';
import tls from 'node:tls';

/**
 * A loopback TCP connection with Nagle off: every benchmark client talks to 127.0.0.1 only. With
 * `onRead`, the socket reads into one buffer reused for every read (the bytes are valid only during
 * the call) instead of a fresh one per read: no allocation, and no fresh pages to fault in.
 */
export function connectLoopback(
  port: number,
  onRead?: (piece: Buffer) => void,
  readBufferBytes = 1 << 20,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const options: net.NetConnectOpts = { port, host: '127.0.0.1', noDelay: true };
    if (onRead) {
      options.onread = {
        buffer: Buffer.alloc(readBufferBytes),
        // Returning true keeps reading (false would pause the socket).
        callback: (n: number, buf: Uint8Array) => {
          onRead((buf as Buffer).subarray(0, n));
          return true;
        },
      };
    }
    const socket = net.connect(options);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * A TLS connection to a loopback broker, verified against `ca` for 127.0.0.1, Nagle off, reading
 * as `connectLoopback` does: `tls.connect` takes `onread` too (Node 20 decrypts into the one
 * buffer), so both systems' drivers read alike. A Node that ignored the option would emit 'data'
 * chunks instead: those feed `onRead` the same way, rather than leaving the driver waiting.
 */
export function connectLoopbackTls(
  port: number,
  ca: Buffer,
  onRead: (piece: Buffer) => void,
  readBufferBytes = 1 << 20,
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    // Node's tls.connect documents `onread`; @types/node's ConnectionOptions leaves it out.
    const options: tls.ConnectionOptions & { onread: net.OnReadOpts } = {
      port,
      host: '127.0.0.1',
      ca,
      onread: {
        buffer: Buffer.alloc(readBufferBytes),
        callback: (n: number, buf: Uint8Array) => {
          onRead((buf as Buffer).subarray(0, n));
          return true;
        },
      },
    };
    const socket = tls.connect(options);
    socket.once('connect', () => socket.setNoDelay(true));
    socket.on('data', onRead);
    socket.once('secureConnect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Monotonic time in nanoseconds as a float (exact to well below a microsecond for days). */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}
