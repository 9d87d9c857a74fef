import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, FakeBroker } from '@booblik/client/testing';
import {
  ErrorCode,
  encodeErrorResponse,
  encodeInvalidArgumentResponse,
  encodeListResponse,
  encodeMoveResponse,
  MoveFlag,
  type TopicSpec,
} from '@booblik/protocol';
import { booblik } from '../test-support/spawn.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

const spec = (name: string): TopicSpec => ({
  name,
  partitions: 1,
  labels: {},
  retentionBytes: -2,
  retentionMs: -2,
  segmentBytes: 0,
  flags: 0,
  replication: 0,
  storeUrl: '',
  revision: 3,
});

/** A cluster broker whose MOVE refuses topic "solo" as the broker does a single copy, and moves "rep". */
async function serve(refusal: string): Promise<FakeBroker> {
  const broker = await FakeBroker.start(({ request }) => {
    const id = request.correlationId;
    if (request.apiKey === ApiKey.LIST) {
      return encodeListResponse(id, {
        revision: 3,
        topics: ['rep', 'solo'].map((name) => ({
          spec: spec(name),
          routes: [{ primary: 'b2:9092', replicas: [] }],
        })),
      });
    }
    if (request.apiKey === ApiKey.MOVE) {
      return request.body.topic === 'solo'
        ? encodeInvalidArgumentResponse(id, { index: -1, message: refusal })
        : encodeMoveResponse(id, 4);
    }
    return encodeErrorResponse(id, ErrorCode.UNSUPPORTED_VERSION);
  });
  brokers.push(broker);
  return broker;
}

describe('booblik brokers drain', () => {
  it('says a partition stays ON the broker drained (not a move to it), in the CLI words, and exit 1', async () => {
    const broker = await serve(
      'solo-0: its one copy is on b2; nothing can copy it away (move it to another broker with ABANDON_RECORDS, or give the topic replicas)',
    );
    const run = await booblik(['brokers', 'drain', 'b2', '--broker', broker.address]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stdout.toString(),
      'solo-0: stays on b2: solo-0: its one copy is on b2; nothing can copy it away ' +
        '(move it to another broker with --abandon-records, or give the topic replicas)\n' +
        'b2: 1 of 2 partition(s) off it; 1 stay\n',
    );
    const moves = broker.received.filter((r) => r.apiKey === ApiKey.MOVE);
    assert.deepEqual(
      moves.map((r) => r.apiKey === ApiKey.MOVE && [r.body.topic, r.body.member, r.body.flags]),
      [
        ['rep', 'b2', MoveFlag.AWAY],
        ['solo', 'b2', MoveFlag.AWAY],
      ],
    );
  });
});

describe('booblik partitions move', () => {
  it('a refusal for records left behind names --abandon-records, the flag this command takes', async () => {
    const broker = await serve(
      'solo-0: has 3 record(s) written, which a move would leave behind (nothing copies them before replication; ABANDON_RECORDS to move anyway)',
    );
    const run = await booblik(['partitions', 'move', 'solo', '0', 'b3', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /moving solo-0 to b3 refused: .*; --abandon-records to move anyway\)\n$/);
    assert.doesNotMatch(run.stderr, /ABANDON_RECORDS/);
  });
});
