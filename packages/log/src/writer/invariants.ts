import { InvariantError } from '@booblik/protocol';
import type { Group } from './types.js';

/**
 * What must hold before `group` is acknowledged, or the error that stops the partition: a group is
 * never acknowledged past the log end, and a primary's high watermark (the end acknowledged last)
 * never goes back. (A second acknowledgement is refused by the group's move to `answered`.)
 */
export function brokenBeforeAcknowledging(
  log: { readonly name: string; readonly logEndOffset: number },
  group: Group,
  acknowledgedEnd: number,
): InvariantError | null {
  const { name, logEndOffset } = log;
  if (group.endOffset > logEndOffset)
    return new InvariantError(
      `${name}: acknowledging up to ${group.endOffset}, past the log end ${logEndOffset}`,
    );
  if (!group.replica && group.endOffset < acknowledgedEnd)
    return new InvariantError(
      `${name}: the high watermark would go back from ${acknowledgedEnd} to ${group.endOffset}`,
    );
  return null;
}
