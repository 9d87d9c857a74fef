import type { TopicSpec } from '@booblik/protocol';

/**
 * The label that sets how many replicas must hold a record before it is acknowledged:
 * `minInSync: 2` in a topic's labels. A label, as `compression` is: TopicSpec's bytes are fixed by
 * APPLY v1 and LIST v1.
 *
 * The default is a majority of the replicas (2 of 3): every acknowledged record is then on two disks,
 * so one broker can die without losing any, and writes go on while one replica is away.
 */
export const MIN_IN_SYNC_LABEL = 'minInSync';

export function minInSyncOf(spec: Pick<TopicSpec, 'labels'> | undefined, replicas: number): number {
  const majority = Math.floor(replicas / 2) + 1;
  const raw = spec?.labels[MIN_IN_SYNC_LABEL];
  if (raw === undefined || !/^[1-5]$/.test(raw)) return majority;
  return Math.min(Number(raw), replicas);
}

/** Why a spec's minInSync label cannot be used, or null. */
export function minInSyncProblem(spec: Pick<TopicSpec, 'labels' | 'replication'>): string | null {
  const raw = spec.labels[MIN_IN_SYNC_LABEL];
  if (raw === undefined) return null;
  const max = spec.replication > 0 ? spec.replication : 5;
  if (!/^[1-5]$/.test(raw) || Number(raw) > max) {
    return `labels.${MIN_IN_SYNC_LABEL}: ${JSON.stringify(raw)}, expected 1..${max} (at most the replication)`;
  }
  return null;
}
