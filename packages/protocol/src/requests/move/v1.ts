/**
 * MOVE request v1  => topic:string partition:int32 member:string flags:int8
 * MOVE response v1 (success body) => revision:int64
 * Error body: INVALID_ARGUMENT (requests/error-details.ts)
 *
 * Gives a partition of a cluster to another member (`booblik partitions move`). A partition with one
 * copy moves only if empty, unless flags bit 0 (ABANDON_RECORDS) says its records may be left
 * behind. A replicated one is copied to the member first, which then becomes its primary; with bit 1
 * (AWAY) `member` is the broker it leaves instead (`booblik brokers drain`). Answered once the
 * broker's copy shows the new primary, with that revision. A single broker answers INVALID_ARGUMENT.
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

export const MoveFlag = {
  /** Move a partition that holds records: they stay behind on the old owner and are removed. */
  ABANDON_RECORDS: 1,
  /** A replicated partition: `member` is the broker it moves away from (a drain); a replacement is chosen. */
  AWAY: 2,
  /**
   * A replicated partition with no live in-sync replica: make `member`, a live replica out of sync,
   * its primary anyway (`booblik partitions elect --unclean`). What only the in-sync set held is lost.
   */
  UNCLEAN: 4,
} as const;

export interface MoveRequest {
  topic: string;
  partition: number;
  /** The member id to give the partition to. */
  member: string;
  flags: number;
}

export function decodeMoveRequest(frame: Buffer, payloadStart: number): MoveRequest {
  const reader = new WireReader(frame, payloadStart);
  const topic = checkTopicName(readTopicBytes(reader), 'topic');
  const partition = reader.int32('partition');
  if (partition < 0) throw fieldError('partition', partition, '>= 0');
  const member = reader.string('member');
  const flags = reader.int8('flags');
  if ((flags & ~(MoveFlag.ABANDON_RECORDS | MoveFlag.AWAY | MoveFlag.UNCLEAN)) !== 0)
    throw fieldError('flags', flags, 'only bits 0 (ABANDON_RECORDS), 1 (AWAY) and 2 (UNCLEAN)');
  return { topic, partition, member, flags };
}

export function encodeMoveRequest(correlationId: number, req: MoveRequest): Buffer {
  const payloadBytes = stringBytes(req.topic) + 4 + stringBytes(req.member) + 1;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.MOVE)
    .int16(1)
    .int32(correlationId);
  w.string(req.topic).int32(req.partition).string(req.member).int8(req.flags);
  return w.done();
}

export function encodeMoveResponse(correlationId: number, revision: number): Buffer {
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + 8);
  w.int32(responseHeaderBytes + 8)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  return w.int64(revision).done();
}

export function decodeMoveResponse(body: Buffer): { revision: number } {
  const revision = new WireReader(body).int64('revision');
  if (revision < 0) throw fieldError('revision', revision, '>= 0');
  return { revision };
}
