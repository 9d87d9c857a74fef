/**
 * Loopback ports for test servers that must be known before they start (etcd's, a broker's that
 * its peers' proxies dial, a port a restarted process takes again). Taken below the kernel's
 * ephemeral range: a port the kernel handed out (listen(0)) and then released can be given at once
 * to any process's outgoing connection as its local port, before the server binds it; a port below
 * the range is never handed out that way. Each is held by a listening socket until released, so two
 * kits on one machine never take the same one.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Where to look when the kernel's range cannot be read (Linux's default starts at 32768). */
const EPHEMERAL_START_DEFAULT = 32768;
/** Never below this: the well-known and registered ports of services a machine may run. */
const RANGE_START = 20000;
const ATTEMPTS_MAX = 200;

export interface ReservedPort {
  readonly port: number;
  /** Stops holding it, just before the server that takes it starts. Safe to call twice. */
  release(): Promise<void>;
}

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const start = Number(low);
    return Number.isInteger(start) && start > RANGE_START + 1000 ? start : EPHEMERAL_START_DEFAULT;
  } catch {
    return EPHEMERAL_START_DEFAULT;
  }
}

function listen(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}

/** `count` distinct ports, each held until its `release()`. */
export async function reservePorts(count: number): Promise<ReservedPort[]> {
  const end = ephemeralStart();
  const reserved: ReservedPort[] = [];
  for (let attempt = 0; reserved.length < count; attempt++) {
    if (attempt >= ATTEMPTS_MAX) {
      await Promise.all(reserved.map((r) => r.release()));
      throw new Error(`no free loopback port below ${end} after ${ATTEMPTS_MAX} tries`);
    }
    const port = RANGE_START + Math.floor(Math.random() * (end - RANGE_START));
    const server = await listen(port);
    if (server === null) continue;
    let released: Promise<void> | null = null;
    reserved.push({
      port,
      release: () => {
        released ??= new Promise((resolve) => server.close(() => resolve()));
        return released;
      },
    });
  }
  return reserved;
}
