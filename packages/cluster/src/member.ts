import { EventEmitter } from 'node:events';
import { type Clock, systemClock } from '@booblik/protocol';
import type { Etcd3, Lease } from 'etcd3';
import { LeaseLostError, MemberIdTakenError } from './errors.js';
import { clusterError } from './etcd-client.js';
import { Keyspace } from './keyspace.js';
import { LeaseFence, type MemberState } from './lease-fence.js';
import { encodeMember, type MemberInfo, memberInfoProblem } from './values.js';

/**
 * A member's lease TTL. A SIGKILLed broker's partitions go unserved for up to this long, so short;
 * but a live broker must renew within it (every third of it) through GC pauses and a loaded 2-core
 * machine, so not shorter than a few seconds. etcd grants whole seconds, at least 2.
 */
export const DEFAULT_LEASE_MS = 5000;
const LEASE_MS_MIN = 2000;

export interface JoinOptions {
  cluster: string;
  member: MemberInfo;
  leaseMs?: number;
  /** Times the keepalives for the lease fence (the system's unless a test drives it). */
  clock?: Clock;
}

export type { MemberState } from './lease-fence.js';

/**
 * One broker's membership: an etcd lease kept alive by the client (a keepalive every third of its
 * TTL), and the member key `/<cluster>/members/<id>` written under it, so it disappears by itself
 * when the process dies. `lost` fires once if the lease goes while the member still means to be one:
 * etcd says it expired or was revoked, or etcd was unreachable past the TTL.
 *
 *   alive --lease expired / revoked / unreachable--> lost
 *   alive --leave()--> left
 */
export class Member extends EventEmitter<{ lost: [LeaseLostError]; renewed: [] }> {
  private renewedAt = Date.now();
  private readonly fence: LeaseFence;

  private constructor(
    readonly keyspace: Keyspace,
    readonly info: MemberInfo,
    readonly leaseMs: number,
    /** etcd's lease id (decimal), e.g. to revoke it from outside in a test. */
    readonly leaseId: string,
    /** The member key's create revision: the oldest member is the natural leader (Gazette's rule). */
    readonly createRevision: number,
    private readonly lease: Lease,
    grantAskedAt: number,
    clock: Clock,
  ) {
    super();
    this.fence = new LeaseFence(leaseMs, clock, grantAskedAt);
    lease.on('lost', (error) => this.markLost(error));
    lease.on('keepaliveFired', () => this.fence.keepaliveSent());
    lease.on('keepaliveSucceeded', () => {
      this.renewedAt = Date.now();
      this.fence.keepaliveConfirmed();
      this.emit('renewed');
    });
  }

  /**
   * Whether the lease certainly has not expired at etcd yet: etcd counts the TTL from when it received
   * the last keepalive it confirmed, which is after we sent it, so sent + TTL is the earliest the lease
   * can end (less a margin for the clocks' rates). A primary of a replicated partition acknowledges
   * nothing once this is false: by then another broker may be promoted in its place.
   */
  get leaseCertain(): boolean {
    return this.fence.certain;
  }

  /** When etcd last confirmed the lease (ms since the epoch): a readiness check can judge by it. */
  get lastRenewedAt(): number {
    return this.renewedAt;
  }

  /** Takes a lease, announces `info` under it, and resolves once etcd holds the member key. */
  static async join(client: Etcd3, options: JoinOptions): Promise<Member> {
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < LEASE_MS_MIN || leaseMs % 1000 !== 0) {
      throw new RangeError(
        `leaseMs: ${leaseMs}, expected whole seconds >= ${LEASE_MS_MIN} (etcd grants seconds)`,
      );
    }
    const problem = memberInfoProblem(options.member);
    if (problem !== null) throw new RangeError(problem);
    const keyspace = new Keyspace(options.cluster);
    const key = keyspace.memberKey(options.member.id);
    const clock = options.clock ?? systemClock;
    const grantAskedAt = clock.now();
    const lease = client.lease(leaseMs / 1000);
    // A grant that fails is reported by join's rejection; the lease's own 'lost' has no listener yet.
    lease.on('lost', () => {});
    try {
      const leaseId = await lease.grant();
      const result = await announce(client, key, options.member, leaseId, leaseMs, clock);
      return new Member(keyspace, options.member, leaseMs, leaseId, result, lease, grantAskedAt, clock);
    } catch (error) {
      await lease.revoke().catch(() => {});
      throw error instanceof RangeError || error instanceof MemberIdTakenError
        ? error
        : clusterError(error, `joining cluster ${options.cluster}`);
    }
  }

  get state(): MemberState {
    return this.fence.state;
  }

  /** Leaves the cluster now: revokes the lease, so the member key (and every key under it) goes at once. */
  async leave(): Promise<void> {
    if (this.fence.state !== 'alive') {
      this.lease.release();
      return;
    }
    this.fence.transition('left');
    try {
      await this.lease.revoke();
    } catch (error) {
      // Unreachable etcd: the key expires with the lease instead.
      throw clusterError(error, `leaving cluster ${this.keyspace.cluster}`);
    }
  }

  private markLost(cause: unknown): void {
    if (this.fence.state !== 'alive') return;
    this.fence.transition('lost');
    this.emit(
      'lost',
      new LeaseLostError(`member ${this.info.id} lost its lease ${this.leaseId}: ${String(cause)}`, {
        cause,
      }),
    );
  }
}

/**
 * Writes the member key under the lease if no other lease holds it, and returns its create revision.
 * A broker restarted after a crash finds its old key still there until the old lease expires: it
 * waits for that (as Gazette's Announce does), at most one lease and a margin; a key that outlives
 * that is held by a live broker with the same id, and joining is refused.
 */
async function announce(
  client: Etcd3,
  key: string,
  info: MemberInfo,
  leaseId: string,
  leaseMs: number,
  clock: Clock,
): Promise<number> {
  const deadline = clock.now() + leaseMs + EXPIRY_MARGIN_MS;
  for (;;) {
    const result = await client
      .if(key, 'Create', '==', 0)
      .then(client.put(key).value(encodeMember(info)).lease(leaseId))
      .else(client.get(key))
      .commit();
    if (result.succeeded) return Number(result.header.revision);
    const left = deadline - clock.now();
    if (left <= 0 || !(await keyDeleted(client, key, Number(result.header.revision), left, clock))) {
      throw new MemberIdTakenError(
        `member id ${info.id}: another live broker holds ${key} (its lease outlived ${leaseMs} ms)`,
      );
    }
  }
}

/** etcd expires leases on a 500 ms tick; a margin on top of the TTL covers it and the round trips. */
const EXPIRY_MARGIN_MS = 1500;

/** Resolves true once `key` is deleted after `revision`, false after `timeoutMs`. */
async function keyDeleted(
  client: Etcd3,
  key: string,
  revision: number,
  timeoutMs: number,
  clock: Clock,
): Promise<boolean> {
  const watcher = await client
    .watch()
    .key(key)
    .startRevision(String(revision + 1))
    .create();
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = clock.setTimeout(() => resolve(false), timeoutMs);
      watcher.on('delete', () => {
        clock.clearTimeout(timer);
        resolve(true);
      });
    });
  } finally {
    await watcher.cancel();
  }
}
