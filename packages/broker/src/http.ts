import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { listen } from './listen.js';

export interface HttpEndpoints {
  server: http.Server;
  address: AddressInfo;
}

/**
 * /metrics (Prometheus text format), /healthz (the process answers) and /readyz (recovery is done and
 * the protocol listener is up: only then should traffic be sent here).
 */
export async function startHttp(
  port: number,
  host: string,
  registry: Registry,
  isReady: () => boolean,
): Promise<HttpEndpoints> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ready\n' : 'not ready\n');
    } else {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: try /metrics, /healthz or /readyz\n');
    }
  });
  await listen(server, port, host, 'booblik.http.port');
  return { server, address: server.address() as AddressInfo };
}
