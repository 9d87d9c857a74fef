import {
  AllocatorLeader,
  connectEtcd,
  type EtcdClientOptions,
  EtcdSpecStore,
  encodeOwner,
  KeyspaceCopy,
  Member,
  type MemberInfo,
  UserKeys,
} from '@booblik/cluster';
import type { LogConfig, Logger } from '@booblik/log';
import { type Clock, ErrorCode, systemClock, type TopicSpec, topicSpecWithDefaults } from '@booblik/protocol';
import type { Etcd3 } from 'etcd3';
import type { Membership, MoveOutcome } from '../cluster-surface.js';
import type { PartitionRegistry } from '../partitions.js';
import { electUnclean, moveReplicated } from '../replication/replicated-move.js';
import { ReplicationService } from '../replication/replication-service.js';
import { ClusterRouting } from './cluster-routing.js';
import { ClusterTopics } from './cluster-topics.js';
import { checkJoin } from './join-check.js';
import { OwnedPartitions } from './owned-partitions.js';
import { type PeerSecurity, plaintextPeers } from './peer-connection.js';
import { PeerPool } from './peer-pool.js';
import { PeerProxy } from './proxy.js';
import { Rejoin } from './rejoin.js';

/** How long a MOVE waits for the new owner to be routed before it answers anyway. */
const ROUTED_WAIT_MS = 5000;

function invalid(message: string): MoveOutcome {
  return { code: ErrorCode.INVALID_ARGUMENT, index: -1, message };
}

export interface ClusterNodeOptions {
  endpoints: readonly string[];
  /** TLS and etcd authentication, when etcd asks for them. */
  etcdSecurity?: Pick<EtcdClientOptions, 'tls' | 'auth'>;
  cluster: string;
  leaseMs: number;
  member: MemberInfo;
  dataDir: string;
  registry: PartitionRegistry;
  logConfigOf: (spec: TopicSpec) => LogConfig;
  logger: Logger;
  /** Replicas of a topic whose spec leaves replication to the cluster. */
  defaultReplication: number;
  replicaLagMaxMs: number;
  /** minInSync of a topic, given its replica count. */
  minInSyncOf: (topic: string, replicas: number) => number;
  /** Peers' advertised addresses -> the addresses to dial instead (booblik.cluster.peer.dial). */
  peerDial?: ReadonlyMap<string, string>;
  /** TLS and this broker's token for the other brokers, when the cluster is secured. */
  peerSecurity?: PeerSecurity;
  /** The timers of the rejoin, the topic table's waits and replication (tests drive a manual one). */
  clock?: Clock;
}

/**
 * This broker as a member of a cluster: its lease and member key, the watched copy of the keyspace,
 * the topic table and routes built on it, the partitions it owns kept open, the allocator (which
 * acts while this broker is the oldest member), and the proxy to the others.
 */
export class ClusterNode implements Membership {
  private member: Member | null;
  private stopped = false;
  private readonly rejoin: Rejoin<Member>;
  /** Writes SCRAM users to etcd; every broker's copy follows them. */
  readonly userKeys: UserKeys;

  private constructor(
    private readonly client: Etcd3,
    member: Member,
    readonly copy: KeyspaceCopy,
    readonly routing: ClusterRouting,
    readonly topics: ClusterTopics,
    private readonly owned: OwnedPartitions,
    readonly allocator: AllocatorLeader,
    readonly proxy: PeerProxy,
    readonly replication: ReplicationService,
    private readonly options: ClusterNodeOptions,
  ) {
    this.member = member;
    this.userKeys = new UserKeys(client, copy.keyspace);
    const o = options;
    this.rejoin = new Rejoin<Member>(
      {
        join: () => Member.join(client, { cluster: o.cluster, member: o.member, leaseMs: o.leaseMs }),
        stopped: () => this.stopped,
        leave: (member) => void member.leave().catch(() => {}),
        joined: (member) => {
          this.member = member;
          this.watchLease(member);
          this.allocator.rejoined({ id: o.member.id, createRevision: member.createRevision });
          o.logger.info(`cluster ${o.cluster}: joined again as ${o.member.id} (lease ${member.leaseId})`);
        },
      },
      o.clock,
    );
    this.watchLease(member);
    // A member whose key is gone (lease expired) answers nothing more: stop waiting on it.
    let addresses = new Set([...copy.members.values()].map((m) => m.address));
    copy.on('change', () => {
      const now = new Set([...copy.members.values()].map((m) => m.address));
      for (const address of addresses) {
        if (now.has(address)) continue;
        proxy.peerGone(address);
        this.replication.peerGone(address);
      }
      addresses = now;
    });
    owned.onOpened(() => this.replication.reconcile());
  }

  /** Joins and reads the keyspace (then `openOwned`). Rejects if etcd cannot be reached. */
  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    const { logger } = options;
    const client = connectEtcd({ endpoints: options.endpoints, ...options.etcdSecurity });
    try {
      const peerTls = options.peerSecurity?.tls() ?? null;
      if (peerTls !== null) {
        await checkJoin(client, {
          cluster: options.cluster,
          selfId: options.member.id,
          peerTls,
          peerDial: options.peerDial,
        });
      }
      const member = await Member.join(client, {
        cluster: options.cluster,
        member: options.member,
        leaseMs: options.leaseMs,
      });
      logger.info(
        `cluster ${options.cluster}: joined as ${options.member.id} (zone ${options.member.zone || '-'}, address ${options.member.address}, lease ${member.leaseId}, ${options.leaseMs} ms)`,
      );
      const copy = await KeyspaceCopy.start(client, {
        cluster: options.cluster,
        onProblem: (key, problem) => logger.warn(`cluster: ${key} ignored: ${problem}`),
      });
      let watchLost = false;
      copy.on('connection', (connected) => {
        // The first attach is the start, not news.
        if (connected && !watchLost) return;
        watchLost = !connected;
        logger.warn(
          connected
            ? 'cluster: etcd watch attached again'
            : 'cluster: etcd watch lost; serving the last known state',
        );
      });
      const self = { id: options.member.id, address: options.member.address };
      // Replication and the routes need each other: the routes ask whether a replicated primary
      // serves yet, and replication tells them when that changes (`servingChanged`, a callback).
      let node: ClusterNode | undefined;
      const replication = new ReplicationService({
        selfId: options.member.id,
        copy,
        registry: options.registry,
        etcd: client,
        membership: () => node?.membership() ?? null,
        lagMaxMs: options.replicaLagMaxMs,
        peerDial: options.peerDial,
        peerSecurity: options.peerSecurity ?? plaintextPeers,
        minInSyncOf: options.minInSyncOf,
        logger: options.logger,
        clock: options.clock,
        servingChanged: () => {
          routing.invalidate();
          topics.localChanged();
        },
      });
      const routing = new ClusterRouting(copy, options.registry, self, replication);
      const topics = new ClusterTopics(
        copy,
        new EtcdSpecStore(client, { cluster: options.cluster }),
        routing,
        logger,
        options.registry.dirNameBytesMax,
        options.clock ?? systemClock,
      );
      const owned = new OwnedPartitions(
        copy,
        options.registry,
        self.id,
        options.dataDir,
        options.logConfigOf,
        logger,
        () => {
          routing.invalidate();
          topics.localChanged();
        },
      );
      const allocator = new AllocatorLeader(
        client,
        copy,
        { id: self.id, createRevision: member.createRevision },
        (line) => logger.info(line),
        options.defaultReplication,
      );
      node = new ClusterNode(
        client,
        member,
        copy,
        routing,
        topics,
        owned,
        allocator,
        new PeerProxy(new PeerPool(options.peerDial, options.peerSecurity ?? plaintextPeers)),
        replication,
        options,
      );
      return node;
    } catch (error) {
      client.close();
      throw error;
    }
  }

  /**
   * Opens the partitions this broker owns (recovering each, restoring a store's history). Called once
   * the broker's handlers and hooks read this node's topic table, so an opening finds its spec.
   */
  openOwned(): Promise<void> {
    return this.owned.sync();
  }

  /** Creates the topics of `booblik.topics` that no broker has created yet. */
  async ensureTopics(configured: readonly { name: string; partitions: number }[]): Promise<void> {
    const missing = configured.filter((t) => this.copy.specs.get(t.name) === undefined);
    if (missing.length === 0) return;
    const outcome = await this.topics.apply({
      changes: missing.map((t) => ({ op: 'upsert', spec: topicSpecWithDefaults({ ...t, revision: 0 }) })),
      dryRun: false,
    });
    // Another broker of the cluster created them first: as good.
    if (outcome.code === ErrorCode.NONE || outcome.code === ErrorCode.REVISION_MISMATCH) return;
    this.options.logger.warn(`booblik.topics not created in the cluster: ${JSON.stringify(outcome)}`);
  }

  /**
   * Gives a partition to another live member. Nothing copies records yet, so a partition that holds
   * any moves only with `abandonRecords`. Resolves with the revision at which the copy shows the new
   * primary (or the move's revision after 5 s).
   */
  async move(
    topic: string,
    partition: number,
    member: string,
    abandonRecords: boolean,
    /** `member` is the broker to move the partition away from (a drain), not to. */
    away = false,
    /** Make `member`, a replica out of sync, primary of a partition with no live in-sync replica. */
    unclean = false,
  ): Promise<MoveOutcome> {
    const copy = this.copy;
    const spec = copy.specs.get(topic);
    if (spec === undefined || partition >= spec.partitions)
      return { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    const target = copy.members.get(member);
    if (target === undefined && !away) {
      return invalid(
        `member: ${JSON.stringify(member.slice(0, 64))} is not a live member (${[...copy.members.keys()].join(', ')})`,
      );
    }
    const owner = copy.ownerOf(topic, partition);
    if (owner?.member === member && !away && !unclean)
      return { code: ErrorCode.NONE, revision: copy.revision };
    if (unclean && (owner === undefined || owner.replicas.length <= 1)) {
      return invalid(`${topic}-${partition}: has one copy; an unclean election picks among replicas`);
    }
    if (owner !== undefined && owner.replicas.length > 1) {
      const deps = {
        etcd: this.client,
        copy,
        until: (condition: () => boolean, ms: number) => this.topics.until(condition, ms),
        log: (line: string) => this.options.logger.info(line),
      };
      const moved = unclean
        ? await electUnclean(deps, topic, partition, member)
        : await moveReplicated(deps, topic, partition, member, away);
      if (moved.code !== ErrorCode.NONE) return moved;
      await this.topics.until(() => this.routing.routeOf(topic, partition).primary !== '', ROUTED_WAIT_MS);
      return { code: ErrorCode.NONE, revision: Math.max(moved.revision, copy.revision) };
    }
    if (away) {
      if (owner?.member !== member) return { code: ErrorCode.NONE, revision: copy.revision };
      return invalid(
        `${topic}-${partition}: its one copy is on ${member}; nothing can copy it away (move it to another broker with ABANDON_RECORDS, or give the topic replicas)`,
      );
    }
    if (!abandonRecords) {
      const holds = await this.recordsHeld(topic, partition, owner?.member);
      if (holds !== 0) {
        return invalid(
          holds === null
            ? `${topic}-${partition}: its owner ${owner?.member} is away, so whether it holds records is unknown; moving would leave them behind (ABANDON_RECORDS to move anyway)`
            : `${topic}-${partition}: has ${holds} record(s) written, which a move would leave behind (nothing copies them before replication; ABANDON_RECORDS to move anyway)`,
        );
      }
    }
    const ks = copy.keyspace;
    const key = ks.ownerKey(topic, partition);
    let revision: number;
    try {
      const result = await this.client
        .if(key, 'Mod', '==', owner?.modRevision ?? 0)
        .then(
          this.client
            .put(key)
            .value(
              encodeOwner({ member, replicas: [member], isr: [member], epoch: (owner?.epoch ?? 0) + 1 }),
            ),
        )
        .commit();
      if (!result.succeeded)
        return invalid(`${topic}-${partition}: its owner changed meanwhile; look again and retry`);
      revision = Number(result.header.revision);
    } catch (error) {
      return { code: ErrorCode.CLUSTER_UNAVAILABLE, message: String(error) };
    }
    await copy.waitForRevision(revision).catch(() => {});
    await this.topics.until(
      () => this.routing.routeOf(topic, partition).primary === target?.address,
      ROUTED_WAIT_MS,
    );
    this.options.logger.info(
      `cluster: ${topic}-${partition} moved from ${owner?.member ?? 'nobody'} to ${member}`,
    );
    return { code: ErrorCode.NONE, revision: Math.max(revision, copy.revision) };
  }

  /**
   * The owner's log end (records ever written: a log whose start moved on still handed out those
   * offsets, and the new owner would start again at 0), or null when that cannot be known.
   */
  private async recordsHeld(
    topic: string,
    partition: number,
    owner: string | undefined,
  ): Promise<number | null> {
    if (owner === undefined) return 0;
    if (owner === this.memberId)
      return this.options.registry.get(topic, partition)?.highWatermark.value ?? null;
    const address = this.copy.members.get(owner)?.address;
    if (address === undefined) return null;
    try {
      const answer = await this.proxy.localMetadata(address, [topic]);
      return answer.topics[0]?.partitions.find((x) => x.partition === partition)?.highWatermark ?? null;
    } catch {
      return null;
    }
  }

  /** Whether this broker holds a live lease: /readyz says not ready otherwise. */
  get ready(): boolean {
    return this.member?.state === 'alive';
  }

  /**
   * Only a replicated partition's primary uploads its segments: a replica holds the same ones
   * (boundaries follow the bytes) and reads the primary's manifest afresh when it becomes primary.
   */
  uploadsHere(topic: string, id: number): boolean {
    const owner = this.copy.ownerOf(topic, id);
    return owner === undefined || owner.replicas.length <= 1 || this.replication.isServing(topic, id);
  }

  /** What replication needs of this broker's lease; null while it has none (lost, rejoining). */
  private membership(): { leaseCertain: boolean; createRevision: number } | null {
    return this.member === null
      ? null
      : { leaseCertain: this.member.leaseCertain, createRevision: this.member.createRevision };
  }

  get memberId(): string {
    return this.options.member.id;
  }

  /**
   * The first step of a clean stop: replicated partitions this broker is primary of are handed to
   * in-sync replicas (see ReplicationService.handOff).
   */
  async handOff(timeoutMs: number): Promise<number> {
    const handed = await this.replication.handOff(timeoutMs);
    // Then leave at once: primaries of partitions replicated here drop this broker from their
    // in-sync sets when its member key goes, rather than waiting out the lag bound for it.
    this.stopped = true;
    try {
      await this.member?.leave();
    } catch (error) {
      this.options.logger.warn(`cluster: leaving: ${String(error)} (the lease expires by itself)`);
    }
    return handed;
  }

  /** Stops acting as a member: the lease is revoked, so its assignments go at once. */
  async close(): Promise<void> {
    this.stopped = true;
    this.rejoin.cancel();
    this.allocator.stop();
    this.replication.close();
    this.owned.stop();
    this.proxy.close();
    try {
      await this.member?.leave();
    } catch (error) {
      this.options.logger.warn(`cluster: leaving: ${String(error)} (the lease expires by itself)`);
    }
    await this.copy.close();
    this.client.close();
  }

  private watchLease(member: Member): void {
    member.once('lost', (error) => {
      if (this.stopped) return;
      this.member = null;
      this.options.logger.warn(`cluster: ${error.message}; serving what is open here, joining again`);
      this.rejoin.start();
    });
  }
}
