import net from 'node:net';

/** A loopback TCP connection with Nagle off: every benchmark client talks to 127.0.0.1 only. */
export function connectLoopback(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
    socket.once('connect', () => {
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
