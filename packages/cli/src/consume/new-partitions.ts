/**
 * `consume --follow` keeps an eye on its topic (a LIST watch on `name=TOPIC`): partitions added while
 * it runs are handed to `onAdded`, and the topic's deletion ends the run with a clear message. A
 * broker without LIST has nothing to watch with: the follower reads the partitions it started with.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerError, isConnectionLoss } from '@booblik/client';
import { FOLLOW_RETRY_DELAY_MS, FOLLOW_RETRY_DELAY_MS_MAX } from '../constants.js';
import { TopicDeletedError } from '../errors.js';
import type { ReadContext } from './partition-reader.js';

export async function watchPartitions(
  ctx: ReadContext,
  partitionsKnown: number,
  onAdded: (partition: number) => void,
): Promise<void> {
  let known = partitionsKnown;
  let failures = 0;
  while (!ctx.signal.aborted) {
    try {
      for await (const listing of ctx.client.watchTopics(`name=${ctx.topic}`, { signal: ctx.signal })) {
        failures = 0;
        const topic = listing.topics.find((t) => t.spec.name === ctx.topic);
        if (topic === undefined) throw new TopicDeletedError(ctx.topic);
        for (let p = known; p < topic.spec.partitions; p++) onAdded(p);
        known = Math.max(known, topic.spec.partitions);
      }
      return; // the signal ended the watch
    } catch (error) {
      if (error instanceof TopicDeletedError) throw error;
      if (ctx.signal.aborted) return;
      // The readers say when the broker is away; the watch only comes back quietly.
      const heals = isConnectionLoss(error) || (error instanceof BrokerError && error.retriable);
      if (!heals) return; // UNSUPPORTED_VERSION: a broker without LIST
      const stepMs = Math.min(
        FOLLOW_RETRY_DELAY_MS_MAX,
        FOLLOW_RETRY_DELAY_MS * 2 ** Math.min(failures++, 30),
      );
      await sleep(stepMs, undefined, { signal: ctx.signal }).catch(() => {});
    }
  }
}
