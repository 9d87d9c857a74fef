/** What an APPLY will do, one line per topic, for `topics apply` and its `--dry-run`. */
import { type TopicSpec, toWireSpec } from '@booblik/client';
import type { FileChange } from './spec-file.js';

export interface PlannedChange {
  file: FileChange;
  /** Whether it changes anything (an unchanged spec with no revision named is not sent). */
  effective: boolean;
  line: string;
}

const labelText = (labels: Readonly<Record<string, string>>) =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '-';

export function planChanges(
  changes: readonly FileChange[],
  current: ReadonlyMap<string, TopicSpec>,
): PlannedChange[] {
  return changes.map((file) => {
    const c = file.change;
    if (c.op === 'delete') {
      const existing = current.get(c.name);
      return existing
        ? { file, effective: true, line: `delete ${c.name} (revision ${existing.revision})` }
        : {
            file,
            effective: file.revision !== undefined,
            line: `delete ${c.name}: no such topic, nothing to do`,
          };
    }
    const next = toWireSpec(c.spec);
    const existing = current.get(next.name);
    if (!existing) {
      return {
        file,
        effective: true,
        line: `create ${next.name}: ${next.partitions} partition(s), labels ${labelText(next.labels)}`,
      };
    }
    const diffs: string[] = [];
    const field = (name: string, before: unknown, after: unknown) => {
      if (before !== after) diffs.push(`${name} ${String(before)} -> ${String(after)}`);
    };
    field('partitions', existing.partitions, next.partitions);
    field('labels', labelText(existing.labels), labelText(next.labels));
    field('retentionBytes', existing.retentionBytes, next.retentionBytes);
    field('retentionMs', existing.retentionMs, next.retentionMs);
    field('segmentBytes', existing.segmentBytes, next.segmentBytes);
    field('readOnly', (existing.flags & 1) !== 0, (next.flags & 1) !== 0);
    field('replication', existing.replication, next.replication);
    field('storeUrl', existing.storeUrl || '""', next.storeUrl || '""');
    if (diffs.length === 0) {
      return {
        file,
        effective: file.revision !== undefined,
        line: `unchanged ${next.name} (revision ${existing.revision})`,
      };
    }
    return {
      file,
      effective: true,
      line: `update ${next.name} (revision ${existing.revision}): ${diffs.join(', ')}`,
    };
  });
}
