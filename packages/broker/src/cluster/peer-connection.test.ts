import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { encodeMetadataRequest, encodeProduceResponse } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { PeerConnection } from './peer-connection.js';

/** A peer that reads requests and answers only when the test says so. */
function silentPeer() {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
  });
  return { server, sockets };
}

interface Answered {
  frame: Buffer | null;
  failure: string | undefined;
  at: number;
}

describe('PeerConnection', () => {
  const peer = silentPeer();
  let address = '';
  before(async () => {
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(peer.server.address() as net.AddressInfo).port}`;
  });
  after(() => {
    for (const socket of peer.sockets) socket.destroy();
    peer.server.close();
  });

  function connect(clock: ManualClock): Promise<PeerConnection> {
    const connection = new PeerConnection(address, () => {}, address, clock);
    return new Promise((resolve) => peer.server.once('connection', () => resolve(connection)));
  }

  function send(connection: PeerConnection, clock: ManualClock, timeoutMs: number): Promise<Answered> {
    return new Promise((resolve) =>
      connection.send([encodeMetadataRequest(0, { topics: [] })], timeoutMs, (frame, failure) =>
        resolve({ frame, failure, at: clock.now() }),
      ),
    );
  }

  it('a short deadline sent after a long one fails the connection at its own time, on the clock given', async () => {
    const clock = new ManualClock();
    const connection = await connect(clock);
    const long = send(connection, clock, 10_000);
    const short = send(connection, clock, 500);
    assert.equal(clock.pendingTimers, 1, 'one timer for both deadlines');
    clock.advance(499);
    assert.equal(connection.isDead, false);
    clock.advance(1);
    assert.equal(connection.isDead, true);
    const [longAnswer, shortAnswer] = await Promise.all([long, short]);
    assert.equal(shortAnswer.failure, `${address}: no answer within 500 ms`);
    assert.equal(shortAnswer.at, 500);
    assert.equal(longAnswer.failure, shortAnswer.failure, 'the rest fail with it');
    assert.equal(connection.inflight, 0);
  });

  it('answers that come out of order each reach their own request, by correlation id', async () => {
    const clock = new ManualClock();
    const connection = await connect(clock);
    const answered: number[] = [];
    const ids: number[] = [];
    let bothAnswered!: () => void;
    const done = new Promise<void>((resolve) => {
      bothAnswered = resolve;
    });
    for (let i = 0; i < 2; i++) {
      const frame = encodeMetadataRequest(0, { topics: [] });
      connection.send([frame], 1000, (answer) => {
        answered.push(answer?.readInt32BE(0) ?? -1);
        if (answered.length === 2) bothAnswered();
      });
      ids.push(frame.readInt32BE(8));
    }
    const socket = peer.sockets.at(-1)!;
    socket.write(encodeProduceResponse(ids[1]!, { baseOffset: 0, logEndOffset: 1 }));
    socket.write(encodeProduceResponse(ids[0]!, { baseOffset: 0, logEndOffset: 1 }));
    await done;
    assert.deepEqual(answered, [ids[1], ids[0]]);
    assert.equal(connection.isDead, false);
    connection.close();
  });
});
