/**
 * One replicated topic of a test cluster, as the fault tests look at it: created with R replicas,
 * its route as a chosen broker answers it, its final log, and every replica's segment bytes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Route, type TopicSpec, topicSpecWithDefaults } from '@booblik/protocol';
import type { ClusterKit, KitBroker } from './cluster-kit.js';
import { connect, fetchAll, metadata, ok, until } from './cluster-wire.js';
import { withTimeout } from './replication-oracle.js';

/** Whether the broker's process runs (not killed, not exited; a SIGSTOPped one counts as up). */
export function isUp(b: KitBroker): boolean {
  return b.process !== undefined && b.process.proc.exitCode === null && b.process.proc.signalCode === null;
}

export class ReplicatedTopic {
  constructor(
    readonly kit: ClusterKit,
    readonly name: string,
    private readonly random: () => number,
  ) {}

  /** APPLYs the topic with one partition, `replication` replicas and `extra` (labels, a store, ...). */
  async create(replication = 3, extra: Partial<TopicSpec> = {}): Promise<void> {
    const client = await connect(this.kit.brokers[0]!.address);
    try {
      const spec = {
        ...topicSpecWithDefaults({ name: this.name, partitions: 1, revision: 0 }),
        replication,
        ...extra,
      };
      ok(await client.apply([{ op: 'upsert', spec }]), `APPLY ${this.name}`);
    } finally {
      client.close();
    }
  }

  byAddress(address: string): KitBroker {
    const b = this.kit.brokers.find((x) => x.address === address);
    if (b === undefined) throw new Error(`no broker at ${address}`);
    return b;
  }

  indexOf(b: KitBroker): number {
    return this.kit.brokers.indexOf(b);
  }

  /** The partition's route as `via` answers it (its own view of the cluster). */
  async routeVia(via: KitBroker): Promise<Route> {
    const client = await connect(via.address);
    try {
      return (await withTimeout(metadata(client, [this.name]), 3000, `METADATA via ${via.name}`)).topics[0]!
        .partitions[0]!.route;
    } finally {
      client.close();
    }
  }

  /** The route as a broker chosen by the seed among `among` (every running broker by default). */
  route(among: readonly KitBroker[] = this.kit.brokers.filter(isUp)): Promise<Route> {
    return this.routeVia(among[Math.floor(this.random() * among.length)]!);
  }

  /** Waits until the route, as every broker of `among` answers it, satisfies `check`. */
  async untilEvery(
    among: readonly KitBroker[],
    check: (r: Route) => boolean,
    what: string,
    timeoutMs: number,
  ): Promise<number> {
    return until(
      () => Promise.all(among.map((b) => this.routeVia(b))),
      (rs) => rs.every(check),
      what,
      timeoutMs,
    );
  }

  async primary(timeoutMs: number): Promise<KitBroker> {
    let primary = '';
    await until(
      () => this.route(),
      (r) => {
        primary = r.primary;
        return r.primary !== '';
      },
      `${this.name} has a primary`,
      timeoutMs,
    );
    return this.byAddress(primary);
  }

  /** Every record of the partition, read from its primary once `replicas` others are in sync with it. */
  async finalLog(replicas = 2): Promise<string[]> {
    await until(
      () => this.route(),
      (r) => r.primary !== '' && r.replicas.length === replicas,
      `${this.name}: a primary and ${replicas} replica(s) in sync`,
      20_000,
    );
    const primary = await this.primary(5000);
    const client = await connect(primary.address);
    try {
      return await fetchAll(client, this.name, 0);
    } finally {
      client.close();
    }
  }

  /** The partition's segment bytes on `b`'s disk. */
  logBytes(b: KitBroker): Buffer {
    const dir = path.join(b.dataDir, `${this.name}-0`);
    return Buffer.concat(
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .sort()
        .map((f) => fs.readFileSync(path.join(dir, f))),
    );
  }

  /** Waits until every broker's segment bytes are the same (every replica level again). */
  async sameLogsEverywhere(): Promise<void> {
    await until(
      async () =>
        this.kit.brokers.map((b) => {
          const bytes = this.logBytes(b);
          return `${bytes.length} B ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
        }),
      (logs) => logs.every((l) => l === logs[0]),
      `${this.name}: every replica's log identical`,
      20_000,
    );
  }
}
