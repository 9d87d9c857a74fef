import { EventEmitter, once } from 'node:events';
import net from 'node:net';

/**
 * A loopback TCP relay in front of a server, counting the bytes clients send through it, so a test
 * can act at a known point of a request (kill the server once half an upload has passed).
 * Connections accepted while the server is down are closed at once, as a dead server's would be.
 */
export class TcpProxy extends EventEmitter {
  /** Bytes relayed from clients to the server so far. */
  sentBytes = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {
    super();
  }

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = net.createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.relay(client, targetPort));
    return proxy;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Resolves once clients have sent at least `bytes` in total through the proxy. */
  sent(bytes: number): Promise<void> {
    if (this.sentBytes >= bytes) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.sentBytes < bytes) return;
        this.off('data', check);
        resolve();
      };
      this.on('data', check);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  private relay(client: net.Socket, targetPort: number): void {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      this.sentBytes += chunk.length;
      this.emit('data');
    });
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
