/**
 * APPLY request v1 => dryRun:int8 changeCount:int32 [change]*changeCount
 *   change => op:int8 (1 upsert => spec:TopicSpec | 2 delete => name:string expectedRevision:int64)
 * APPLY response v1 (success body) => revision:int64
 * Error bodies: REVISION_MISMATCH, INVALID_ARGUMENT (requests/error-details.ts)
 *
 * Every change or none: the broker checks each expected revision (0 must not exist, -1 any, N must be
 * at N) and each spec, then applies them all as one step of the spec store, whose new revision is
 * the answer. With dryRun 1 it checks everything, changes nothing and answers the current revision.
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter, writeInt64 } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { writeResponseHeader } from '../../frame/header.js';
import { applyChangesMax, lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { readTopicSpec, type TopicSpec, topicSpecBytes, writeTopicSpec } from '../../topics/spec.js';

/** Change ops; DELETE_PURGING_STORE (3) is APPLY v2's (requests/apply/v2.ts), refused by v1. */
export const ApplyOp = { UPSERT: 1, DELETE: 2, DELETE_PURGING_STORE: 3 } as const;

export type TopicChange =
  /** Creates or replaces the spec; `spec.revision` is the revision expected. */
  | { op: 'upsert'; spec: TopicSpec }
  /**
   * Deletes the topic. `purgeStore` (APPLY v2 only) also removes its history from its fragment
   * store; without it the store's objects stay.
   */
  | { op: 'delete'; name: string; expectedRevision: number; purgeStore?: boolean };

export interface ApplyRequest {
  dryRun: boolean;
  changes: TopicChange[];
}

export function decodeApplyRequest(frame: Buffer, payloadStart: number): ApplyRequest {
  return readApplyRequest(frame, payloadStart, 1);
}

/** v1's body, or v2's (the same, op 3 allowed). */
export function readApplyRequest(frame: Buffer, payloadStart: number, version: 1 | 2): ApplyRequest {
  const reader = new WireReader(frame, payloadStart);
  const dryRunByte = reader.int8('dryRun');
  if (dryRunByte !== 0 && dryRunByte !== 1) throw fieldError('dryRun', dryRunByte, '0 or 1');
  const changeCount = reader.int32('changeCount');
  if (changeCount < 0 || changeCount > applyChangesMax) {
    throw fieldError('changeCount', changeCount, `0..${applyChangesMax}`);
  }
  // The smallest change is a delete of an empty name: op, u16 length, revision.
  if (changeCount * 11 > reader.remaining) {
    throw fieldError(
      'changeCount',
      changeCount,
      `at most ${Math.floor(reader.remaining / 11)} in this frame`,
    );
  }
  const changes: TopicChange[] = [];
  for (let i = 0; i < changeCount; i++) {
    const field = `changes[${i}]`;
    const op = reader.int8(`${field}.op`);
    if (op === ApplyOp.UPSERT) {
      changes.push({ op: 'upsert', spec: readTopicSpec(reader, `${field}.spec`) });
    } else if (op === ApplyOp.DELETE || (op === ApplyOp.DELETE_PURGING_STORE && version >= 2)) {
      const name = reader.string(`${field}.name`);
      const expectedRevision = reader.int64(`${field}.expectedRevision`);
      changes.push(
        op === ApplyOp.DELETE
          ? { op: 'delete', name, expectedRevision }
          : { op: 'delete', name, expectedRevision, purgeStore: true },
      );
    } else {
      throw fieldError(
        `${field}.op`,
        op,
        version >= 2 ? '1 (upsert), 2 (delete) or 3 (delete, purging the store)' : '1 (upsert) or 2 (delete)',
      );
    }
  }
  return { dryRun: dryRunByte === 1, changes };
}

function changeBytes(change: TopicChange): number {
  return 1 + (change.op === 'upsert' ? topicSpecBytes(change.spec) : stringBytes(change.name) + 8);
}

/** v1 has no way to ask for a purge: a change asking for one needs encodeApplyRequestV2. */
export function encodeApplyRequest(correlationId: number, req: ApplyRequest): Buffer {
  if (req.changes.some((c) => c.op === 'delete' && c.purgeStore === true)) {
    throw new RangeError('a delete with purgeStore needs APPLY v2 (encodeApplyRequestV2)');
  }
  return writeApplyRequest(correlationId, req, 1);
}

export function writeApplyRequest(correlationId: number, req: ApplyRequest, version: 1 | 2): Buffer {
  let payloadBytes = 1 + 4;
  for (const c of req.changes) payloadBytes += changeBytes(c);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.APPLY)
    .int16(version)
    .int32(correlationId);
  w.int8(req.dryRun ? 1 : 0).int32(req.changes.length);
  for (const c of req.changes) {
    if (c.op === 'upsert') {
      w.int8(ApplyOp.UPSERT);
      writeTopicSpec(w, c.spec);
    } else {
      w.int8(c.purgeStore === true ? ApplyOp.DELETE_PURGING_STORE : ApplyOp.DELETE)
        .string(c.name)
        .int64(c.expectedRevision);
    }
  }
  return w.done();
}

export function encodeApplyResponse(correlationId: number, revision: number): Buffer {
  const buf = Buffer.allocUnsafe(lengthPrefixBytes + responseHeaderBytes + 8);
  writeInt64(buf, revision, writeResponseHeader(buf, correlationId, ErrorCode.NONE, 8));
  return buf;
}

export function decodeApplyResponse(body: Buffer): { revision: number } {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  if (revision < 0) throw fieldError('revision', revision, '>= 0');
  return { revision };
}
