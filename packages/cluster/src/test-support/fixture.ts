import { randomBytes } from 'node:crypto';
import { type TopicSpec, topicSpecWithDefaults } from '@booblik/protocol';
import type { KeyspaceCopy } from '../keyspace-copy.js';

/** A cluster name no other test uses, so tests can share one etcd. */
export function uniqueCluster(): string {
  return `test-${randomBytes(5).toString('hex')}`;
}

/** A spec as an APPLY sends it; `revision` is the revision expected. */
export function specOf(name: string, revision: number, partitions = 1): TopicSpec {
  return topicSpecWithDefaults({ name, partitions, revision });
}

/**
 * Resolves once `holds()` is true of the copy, checked now and after each change the watch
 * delivers (never by polling); rejects naming `what` after `timeoutMs`.
 */
export function untilCopy(
  copy: KeyspaceCopy,
  what: string,
  holds: () => boolean,
  timeoutMs: number,
): Promise<void> {
  if (holds()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onChange = () => {
      if (!holds()) return;
      clearTimeout(timer);
      copy.off('change', onChange);
      resolve();
    };
    const timer = setTimeout(() => {
      copy.off('change', onChange);
      reject(new Error(`${what}: not seen within ${timeoutMs} ms (copy at revision ${copy.revision})`));
    }, timeoutMs);
    copy.on('change', onChange);
  });
}

/** Resolves with how long it took for `emitter` to emit `event`; rejects after `timeoutMs`. */
export function untilEvent(
  emitter: {
    once(event: string, listener: (...args: unknown[]) => void): unknown;
    off(event: string, listener: (...args: unknown[]) => void): unknown;
  },
  event: string,
  timeoutMs: number,
  matches: (...args: unknown[]) => boolean = () => true,
): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const listener = (...args: unknown[]) => {
      if (!matches(...args)) {
        emitter.once(event, listener);
        return;
      }
      clearTimeout(timer);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.once(event, listener);
  });
}
