import { connect, createServer, type Socket } from 'node:net';

/** A TCP relay on a free loopback port whose link a test can cut and restore (a network nemesis). */
export interface LinkProxy {
  /** `http://127.0.0.1:<port>`: dial this instead of the target. */
  readonly endpoint: string;
  /** Drops every connection through the proxy and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startLinkProxy(targetPort: number): Promise<LinkProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  const server = createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    cut() {
      isCut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      isCut = false;
    },
    close() {
      isCut = true;
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
