/**
 * One connection per broker address (`host:port`), dialed when first needed, with the versions that
 * broker serves (API_VERSIONS, asked once per connection). A connection that closed is dialed again
 * on the next use; callers that saw it fail drop it at once so that nobody else waits on it.
 */
import { type ApiVersionRange, type Capability, speaks } from '@booblik/protocol';
import { formatAddress, parseAddress } from './address.js';
import { Connection, type ConnectOptions } from './connection.js';

/** A pooled connection and what its broker serves. */
export interface PooledBroker {
  readonly address: string;
  readonly connection: Connection;
  /** Whether the broker serves a version of `apiKey` with `capability` (the API table's). */
  speaks(apiKey: number, capability: Capability): boolean;
}

class Broker implements PooledBroker {
  constructor(
    readonly address: string,
    readonly connection: Connection,
    private readonly ranges: readonly ApiVersionRange[],
  ) {}
  speaks(apiKey: number, capability: Capability): boolean {
    return speaks(this.ranges, apiKey, capability);
  }
}

export class BrokerPool {
  private readonly brokers = new Map<string, Promise<Broker>>();
  /** The dialed ones among them, for a send that need not await anything. */
  private readonly dialed = new Map<string, Broker>();
  /** Every address heard of, bootstrap first, in the order learned: where METADATA may be asked. */
  private readonly known: string[] = [];
  private closed = false;

  constructor(
    bootstrap: readonly string[],
    private readonly options: ConnectOptions,
  ) {
    for (const address of bootstrap) this.learn(address);
  }

  /** Normalised `host:port` (a bare host gets the default port); throws InvalidArgumentError. */
  static normalise(address: string): string {
    return formatAddress(parseAddress(address));
  }

  /** Adds an address (a primary or replica a route named) to those METADATA may be asked of. */
  learn(address: string): string {
    const name = BrokerPool.normalise(address);
    if (!this.known.includes(name)) this.known.push(name);
    return name;
  }

  /** Known addresses: connected ones first (no dial needed), then the others, `avoid` last. */
  candidates(avoid?: string): string[] {
    const open = (a: string) => this.brokers.has(a);
    const rank = (a: string) => (a === avoid ? 2 : open(a) ? 0 : 1);
    return [...this.known].sort((a, b) => rank(a) - rank(b));
  }

  /** The broker at `address`, dialed (and asked API_VERSIONS) if no open connection is pooled. */
  get(address: string): Promise<PooledBroker> {
    const name = this.learn(address);
    const pooled = this.brokers.get(name);
    if (pooled) return pooled;
    const dialing = this.dial(name);
    this.brokers.set(name, dialing);
    // A failed dial is not kept: the next use dials again.
    dialing.catch(() => this.forget(name, dialing));
    return dialing;
  }

  /** The broker at `address` if its connection is dialed and open, without waiting. */
  ready(address: string): PooledBroker | undefined {
    const broker = this.dialed.get(address);
    return broker?.connection.state === 'open' ? broker : undefined;
  }

  /** Stops using the connection to `address` (it failed): the next get() dials anew. */
  drop(address: string): void {
    const pooled = this.brokers.get(address);
    if (!pooled) return;
    this.brokers.delete(address);
    this.dialed.delete(address);
    void pooled.then(
      (b) => b.connection.destroy(),
      () => {},
    );
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.brokers.values()];
    this.brokers.clear();
    this.dialed.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (b) => b.connection.close(),
          () => {},
        ),
      ),
    );
  }

  private async dial(address: string): Promise<Broker> {
    const { signal: _once, ...settings } = this.options;
    const connection = await Connection.connect(address, settings);
    if (this.closed) {
      connection.destroy();
      throw new Error('the client is closed');
    }
    const entry = this.brokers.get(address);
    void connection.closed.then(() => {
      if (entry && this.brokers.get(address) === entry) this.brokers.delete(address);
      if (this.dialed.get(address)?.connection === connection) this.dialed.delete(address);
    });
    try {
      const broker = new Broker(address, connection, await connection.apiVersions());
      if (this.brokers.get(address) === entry && !this.closed) this.dialed.set(address, broker);
      return broker;
    } catch (error) {
      connection.destroy();
      throw error;
    }
  }

  private forget(address: string, entry: Promise<Broker>): void {
    if (this.brokers.get(address) === entry) this.brokers.delete(address);
  }
}
