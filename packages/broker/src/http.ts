import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { listen } from './listen.js';

export interface HttpEndpoints {
  /** The listener: the HTTP server itself, or with TLS the first-byte gate in front of it. */
  server: net.Server;
  address: AddressInfo;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/**
 * /metrics (Prometheus text format), /healthz (the process answers) and /readyz (recovery is done and
 * the protocol listener is up: only then should traffic be sent here).
 */
export async function startHttp(
  port: number,
  host: string,
  /** The metrics' registry, asked for at each scrape (made at the first). */
  registry: () => Promise<Registry>,
  isReady: () => boolean,
  /** Lines /readyz adds (a failing store): the broker still serves, so they do not make it 503. */
  readyDetail: () => string[] = () => [],
  /** With TLS: each connection goes through it, and `serve` gets what speaks HTTP (plaintext or TLS). */
  makeGate?: (serve: (socket: net.Socket) => void) => { accept(socket: net.Socket): void },
): Promise<HttpEndpoints> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      registry()
        .then(async (r) => ({ text: await r.metrics(), contentType: r.contentType }))
        .then(
          ({ text, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(text),
          (error: unknown) => res.writeHead(500).end(String(error)),
        );
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      const detail = readyDetail()
        .map((line) => `${line}\n`)
        .join('');
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(`${ready ? 'ready' : 'not ready'}\n${detail}`);
    } else {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: try /metrics, /healthz or /readyz\n');
    }
  });
  const close = async () => {
    server.closeAllConnections();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  if (makeGate === undefined) {
    await listen(server, port, host, 'booblik.http.port');
    return { server, address: server.address() as AddressInfo, close };
  }
  const gate = makeGate((served) => server.emit('connection', served));
  // Connections handed to the HTTP server are not its own to close: the front keeps them.
  const open = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    gate.accept(socket);
  });
  await listen(front, port, host, 'booblik.http.port');
  return {
    server: front,
    address: front.address() as AddressInfo,
    close: async () => {
      for (const socket of open) socket.destroy();
      await close();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}
