/**
 * A TCP proxy for one link of a test cluster (a network nemesis, after Jepsen's and toxiproxy's),
 * run in the test process: clients dial `address` instead of `target`, and the test switches the
 * link between modes at any moment.
 *
 *   pass       every byte forwarded as it comes
 *   delay(ms)  each chunk forwarded `ms` later, both directions, in order
 *   cut        every connection reset; new ones accepted and reset at once (a peer that is down)
 *   blackhole  connections stay open, bytes in both directions are read and dropped, nothing is
 *              forwarded and nothing closes (a partitioned network); new ones are accepted and hang
 *   heal       = pass. A connection that lost bytes to a black hole cannot go on (its stream has a
 *              hole), so heal resets it, as TCP does once its retransmissions give up; new
 *              connections work again.
 */
import net from 'node:net';

export type FaultMode = 'pass' | 'delay' | 'cut' | 'blackhole';

export interface FaultProxyStats {
  /** Connections accepted and relayed (not those reset at once while cut). */
  accepted: number;
  /** Connections open through the proxy now. */
  open: number;
  /** Connections accepted while cut and reset at once. */
  refused: number;
  /** Bytes forwarded from the dialling side to the target. */
  bytesToTarget: number;
  /** Bytes forwarded from the target back to the dialling side. */
  bytesFromTarget: number;
  /** Bytes held back by a delay now, both directions. */
  bytesHeld: number;
  /** Bytes read and dropped by a black hole, both directions. */
  bytesDropped: number;
}

export interface FaultProxy {
  /** `127.0.0.1:<port>`: dial this instead of the target. */
  readonly address: string;
  readonly target: string;
  readonly mode: FaultMode;
  /** Live counters, for a test to wait on. */
  readonly stats: Readonly<FaultProxyStats>;
  pass(): void;
  delay(ms: number): void;
  cut(): void;
  blackhole(): void;
  heal(): void;
  /** Stops listening and closes every connection through it. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** `host:port` the proxy forwards to. */
  target: string;
}

/** Marks the end of a direction in its queue: the sender half-closed, so the receiver is ended. */
const END = null;

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = splitAddress(options.target);
  if (!target.host || !Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    throw new RangeError(`target: ${JSON.stringify(options.target)}, expected host:port`);
  }
  const stats: FaultProxyStats = {
    accepted: 0,
    open: 0,
    refused: 0,
    bytesToTarget: 0,
    bytesFromTarget: 0,
    bytesHeld: 0,
    bytesDropped: 0,
  };
  const link: LinkState = { mode: 'pass', delayMs: 0, stats };
  const relays = new Set<Relay>();
  let closed = false;

  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    client.on('error', () => {});
    if (closed || link.mode === 'cut') {
      if (!closed) stats.refused++;
      client.resetAndDestroy();
      return;
    }
    stats.accepted++;
    stats.open++;
    const relay = new Relay(client, link, target, () => {
      relays.delete(relay);
      stats.open--;
    });
    relays.add(relay);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  return {
    address,
    target: options.target,
    get mode() {
      return link.mode;
    },
    stats,
    pass() {
      setMode('pass', 0);
    },
    delay(ms: number) {
      if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`delay: ${ms} ms, expected an integer >= 0`);
      setMode('delay', ms);
    },
    cut() {
      setMode('cut', 0);
      for (const relay of [...relays]) relay.reset();
    },
    blackhole() {
      setMode('blackhole', 0);
      for (const relay of relays) relay.blackhole();
    },
    heal() {
      setMode('pass', 0);
    },
    async close() {
      closed = true;
      for (const relay of [...relays]) relay.reset();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function setMode(mode: FaultMode, delayMs: number): void {
    const wasBlackhole = link.mode === 'blackhole';
    link.mode = mode;
    link.delayMs = delayMs;
    if (wasBlackhole && mode !== 'blackhole') {
      for (const relay of [...relays]) if (relay.lostBytes) relay.reset();
    }
  }
}

interface LinkState {
  mode: FaultMode;
  delayMs: number;
  readonly stats: FaultProxyStats;
}

/** One connection through the proxy: the dialling side, its upstream, and a queue each way. */
class Relay {
  /** Dropped bytes (or was born in a black hole, before any upstream): it cannot carry on after. */
  lostBytes = false;
  private readonly upstream: net.Socket | null;
  private readonly toTarget: Direction | null;
  private readonly fromTarget: Direction | null;
  private done = false;

  constructor(
    private readonly client: net.Socket,
    private readonly link: LinkState,
    target: { host: string; port: number },
    private readonly onDone: () => void,
  ) {
    client.on('close', (hadError) => this.closed(hadError));
    if (link.mode === 'blackhole') {
      // A connection made during a partition reaches nothing: no upstream, bytes dropped.
      this.lostBytes = true;
      this.upstream = null;
      this.toTarget = null;
      this.fromTarget = null;
      client.on('data', (chunk: Buffer) => {
        link.stats.bytesDropped += chunk.length;
      });
      return;
    }
    const upstream = net.connect({
      host: target.host,
      port: target.port,
      allowHalfOpen: true,
      noDelay: true,
    });
    upstream.on('error', () => {});
    upstream.on('close', (hadError) => this.closed(hadError));
    this.upstream = upstream;
    this.toTarget = new Direction(client, upstream, link, 'bytesToTarget', () => {
      this.lostBytes = true;
    });
    this.fromTarget = new Direction(upstream, client, link, 'bytesFromTarget', () => {
      this.lostBytes = true;
    });
  }

  /** Entering a black hole: keep reading both sides (a paused one would push back), forward nothing. */
  blackhole(): void {
    this.toTarget?.keepReading();
    this.fromTarget?.keepReading();
  }

  /** Both sides reset, as a peer that went down or a link cut looks to each end. */
  reset(): void {
    resetOrDestroy(this.client);
    if (this.upstream !== null) resetOrDestroy(this.upstream);
  }

  private closed(hadError: boolean): void {
    // A reset on one side is passed on as a reset; a clean close has already been passed on as an end.
    if (hadError && this.link.mode !== 'blackhole') this.reset();
    if (this.done || !this.client.destroyed || (this.upstream !== null && !this.upstream.destroyed)) return;
    this.done = true;
    this.toTarget?.stop();
    this.fromTarget?.stop();
    this.onDone();
  }
}

/** Bytes one way: read from `from`, forwarded to `to` now or after the link's delay, in order. */
class Direction {
  private readonly queue: { chunk: Buffer | typeof END; dueAt: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private waitingForDrain = false;

  constructor(
    private readonly from: net.Socket,
    private readonly to: net.Socket,
    private readonly link: LinkState,
    private readonly counter: 'bytesToTarget' | 'bytesFromTarget',
    private readonly onDrop: () => void,
  ) {
    from.on('data', (chunk: Buffer) => this.arrived(chunk));
    from.on('end', () => this.arrived(END));
  }

  /** Resumes reading after back pressure, so a black hole keeps swallowing. */
  keepReading(): void {
    this.from.resume();
  }

  stop(): void {
    clearTimeout(this.timer);
    for (const { chunk } of this.queue) if (chunk !== END) this.link.stats.bytesHeld -= chunk.length;
    this.queue.length = 0;
  }

  private arrived(chunk: Buffer | typeof END): void {
    if (this.link.mode === 'blackhole') {
      this.drop(chunk);
      return;
    }
    const delayMs = this.link.mode === 'delay' ? this.link.delayMs : 0;
    if (delayMs === 0 && this.queue.length === 0) {
      this.forward(chunk);
      return;
    }
    // Sent from the head only, so a chunk under a shorter delay set later waits for those before it.
    this.queue.push({ chunk, dueAt: performance.now() + delayMs });
    if (chunk !== END) this.link.stats.bytesHeld += chunk.length;
    if (this.queue.length === 1) this.schedule();
  }

  private schedule(): void {
    const head = this.queue[0];
    if (head === undefined) return;
    this.timer = setTimeout(() => this.due(), Math.max(0, head.dueAt - performance.now()));
  }

  private due(): void {
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0]!.dueAt <= now) {
      const { chunk } = this.queue.shift()!;
      if (chunk !== END) this.link.stats.bytesHeld -= chunk.length;
      if (this.link.mode === 'blackhole') this.drop(chunk);
      else this.forward(chunk);
    }
    this.schedule();
  }

  private forward(chunk: Buffer | typeof END): void {
    if (this.to.destroyed) return;
    if (chunk === END) {
      this.to.end();
      return;
    }
    this.link.stats[this.counter] += chunk.length;
    if (!this.to.write(chunk) && !this.waitingForDrain) {
      this.waitingForDrain = true;
      this.from.pause();
      this.to.once('drain', () => {
        this.waitingForDrain = false;
        this.from.resume();
      });
    }
  }

  private drop(chunk: Buffer | typeof END): void {
    this.onDrop();
    if (chunk !== END) this.link.stats.bytesDropped += chunk.length;
  }
}

/**
 * A reset, or a plain destroy for a socket this proxy already ended: Node 20 leaves the shutdown of
 * an ended socket unfinished when it is then reset, and the test process spins at exit waiting for it.
 */
function resetOrDestroy(socket: net.Socket): void {
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/** `host:port` (or `[v6]:port`) split at its last colon. */
function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(address.slice(colon + 1)) };
}
