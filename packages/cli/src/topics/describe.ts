/** What an APPLY will do, one line per topic, for `topics apply` and its `--dry-run`. */
import { type TopicSpec, toWireSpec } from '@booblik/client';
import {
  REPLICATION_DEFAULT,
  RETENTION_DEFAULT,
  RETENTION_UNLIMITED,
  SEGMENT_BYTES_DEFAULT,
  TopicFlag,
} from '@booblik/protocol';
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

const retentionText = (value: number) =>
  value === RETENTION_DEFAULT ? 'default' : value === RETENTION_UNLIMITED ? 'unlimited' : String(value);

/**
 * Every field of a spec as the topic file names it, with the value a user reads: "default" for the
 * broker's default (the wire's -2 and 0), "unlimited" for -1, "none" for no store.
 */
function fieldsOf(spec: TopicSpec): [name: string, value: string][] {
  return [
    ['partitions', String(spec.partitions)],
    ['labels', labelText(spec.labels)],
    ['retentionBytes', retentionText(spec.retentionBytes)],
    ['retentionMs', retentionText(spec.retentionMs)],
    ['segmentBytes', spec.segmentBytes === SEGMENT_BYTES_DEFAULT ? 'default' : String(spec.segmentBytes)],
    ['readOnly', String((spec.flags & TopicFlag.READ_ONLY) !== 0)],
    ['replication', spec.replication === REPLICATION_DEFAULT ? 'default' : String(spec.replication)],
    ['store', spec.storeUrl === '' ? 'none' : spec.storeUrl],
  ];
}

/** Values that leave a field as the broker has it: a `create` line leaves such fields out. */
const DEFAULT_TEXT = new Set(['default', 'false', 'none']);

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
      const set = fieldsOf(next)
        .slice(2)
        .filter(([, value]) => !DEFAULT_TEXT.has(value))
        .map(([name, value]) => `, ${name} ${value}`)
        .join('');
      return {
        file,
        effective: true,
        line: `create ${next.name}: ${next.partitions} partition(s), labels ${labelText(next.labels)}${set}`,
      };
    }
    const before = fieldsOf(existing);
    const diffs = fieldsOf(next)
      .map(([name, after], i) => [name, before[i]![1], after] as const)
      .filter(([, was, now]) => was !== now)
      .map(([name, was, now]) => `${name} ${was} -> ${now}`);
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
