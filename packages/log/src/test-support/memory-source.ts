import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { Fragment, FragmentSource, PersistCandidate } from '../fragment.js';

/** A store in memory: objects by key, with a count of reads. */
export class MemorySource implements FragmentSource {
  readonly objects = new Map<string, Buffer>();
  reads = 0;
  async read(fragment: Fragment, start: number, end: number): Promise<Buffer> {
    this.reads++;
    const object = this.objects.get(fragment.key);
    if (object === undefined) throw new Error(`no object ${fragment.key}`);
    return Buffer.from(object.subarray(start, end));
  }
}

/** A log or partition whose closed segments can be persisted. */
interface Persistable {
  persistCandidates(): PersistCandidate[];
  markPersisted(fragment: Fragment): boolean;
}

/** Uploads every closed segment "as on disk" and marks it persisted, as the broker's persister does. */
export function persistAll(
  log: Persistable,
  source: MemorySource,
  now = Date.now(),
  limit = Infinity,
): Fragment[] {
  const done: Fragment[] = [];
  for (const c of log.persistCandidates().slice(0, limit)) {
    const key = `t/0/${c.baseOffset}-${c.endOffset - 1}.log`;
    source.objects.set(key, fs.readFileSync(c.path));
    const fragment: Fragment = {
      key,
      baseOffset: c.baseOffset,
      endOffset: c.endOffset,
      sizeBytes: c.sizeBytes,
      lastWriteMs: c.lastWriteMs,
      persistedMs: now,
      index: c.index,
    };
    assert.ok(log.markPersisted(fragment));
    done.push(fragment);
  }
  return done;
}
