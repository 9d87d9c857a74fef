/**
 * What `booblik partitions move` prints while the broker copies a partition to its new member: the
 * new replica's distance behind the primary, from METADATA v4, asked on a connection of its own while
 * the MOVE waits. A line when the state changes, at most one a second; nothing from a broker
 * without METADATA v4.
 */
import { Connection, type ConnectOptions } from '@booblik/client';
import { ReplicaFlag } from '@booblik/protocol';
import { metadataSpeaks } from '../versions.js';

const POLL_MS = 250;
const LINE_EVERY_MS = 1000;

export interface CatchUpWatch {
  stop(): Promise<void>;
}

export function watchCatchUp(
  address: string,
  topic: string,
  partition: number,
  member: string,
  write: (line: string) => void,
  /** The command's TLS settings: the watch dials the same broker the same way. */
  options: Pick<ConnectOptions, 'tls'> = {},
): CatchUpWatch {
  let stopped = false;
  let wake: (() => void) | undefined;
  const startedAt = performance.now();
  const running = (async () => {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect(address, options);
      if (!(await metadataSpeaks(connection))('replicaRoutes')) return;
      let last = '';
      let lastAt = Number.NEGATIVE_INFINITY;
      while (!stopped) {
        const answer = await connection.metadataWithReplicas([topic]);
        const route = answer.topics[0]?.partitions.find((p) => p.partition === partition)?.route;
        const replica = route?.replicas.find((r) => r.member === member);
        const state =
          replica === undefined
            ? 'not a replica yet'
            : (replica.flags & ReplicaFlag.IN_SYNC) !== 0
              ? 'in sync'
              : replica.lagRecords < 0
                ? 'catching up'
                : `catching up, ${replica.lagRecords.toLocaleString('en-US')} records behind`;
        const now = performance.now();
        if (state !== last && now - lastAt >= LINE_EVERY_MS) {
          write(`${topic}-${partition}: ${member} ${state} (${((now - startedAt) / 1000).toFixed(1)} s)\n`);
          last = state;
          lastAt = now;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, POLL_MS).unref();
        });
      }
    } catch {
      // Progress is a courtesy: the MOVE's own answer says whether the move happened.
    } finally {
      connection?.destroy();
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}
