/**
 * The heavy clients of the overload check, in a process of their own, so the process timing the
 * probe is not the one busy writing gigabytes:
 *   - a client that pipelines FETCHes for 1 MiB answers from records no cache holds and never reads
 *     one (it writes until its socket buffer is full: the broker has stopped reading it);
 *   - producers faster than the disk: 4 connections x 16 FORCED batches of 1 MiB in flight, each
 *     waiting for an fdatasync, and an ack NONE stream that nothing but the broker can slow down.
 *   node overload-load.js <port>
 * Prints `running` once all are at it. Lines on stdin: `stopping` (the broker is being stopped: a
 * closed connection is no longer an error), `stop` (prints a JSON report and exits). Any failure
 * before `stopping` prints `error <message>` and exits 1.
 */
import net from 'node:net';
import { createInterface } from 'node:readline';
import {
  AckPolicy,
  encodeFetchRequestV2,
  encodeMetadataRequest,
  encodeProduceRequest,
} from '@booblik/protocol';
import { WireClient } from './wire-client.js';

const port = Number(process.argv[2]);
const MIB = 1024 * 1024;
let running = true;
let stopping = false;
let forcedAcks = 0;
let noneBytes = 0;
/** Time the ack NONE stream spent waiting for the broker to read on: proof it offered more than was taken. */
let noneBlockedMs = 0;

function fail(error: unknown): never {
  process.stdout.write(`error ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

async function connect(): Promise<net.Socket> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  return socket;
}

/** Writes FETCHes (and a METADATA now and then) until its own socket buffer backs up; reads nothing. */
async function neverReads(): Promise<{ socket: net.Socket; sentBytes: number }> {
  const socket = await connect();
  socket.pause();
  let sentBytes = 0;
  for (let i = 0; i < 100_000; i++) {
    const request =
      i % 8 === 7
        ? encodeMetadataRequest(i, { topics: [] })
        : encodeFetchRequestV2(i, {
            topic: 'load',
            partition: 0,
            fetchOffset: 0,
            maxBytes: MIB,
            maxWaitMs: 0,
            minBytes: 0,
          });
    sentBytes += request.length;
    if (!socket.write(request) && socket.writableLength > 4 * MIB) break;
  }
  return { socket, sentBytes };
}

const record = Buffer.alloc(64 * 1024, 0x42);

async function forcedProducer(): Promise<void> {
  const c = await WireClient.connect(port);
  const batch = Array.from({ length: 16 }, () => record);
  const one = async () => {
    while (running && !c.closed) {
      const answer = await c.produce('load', 1, AckPolicy.FORCED, batch);
      if (answer.errorCode !== 0)
        throw new Error(`a FORCED batch under load was refused with ${answer.errorCode}`);
      forcedAcks++;
    }
  };
  await Promise.all(
    Array.from({ length: 16 }, () =>
      one().catch((error: unknown) => {
        if (!stopping) fail(error);
      }),
    ),
  );
  c.close();
}

async function noneProducer(): Promise<void> {
  const socket = await connect();
  const frame = encodeProduceRequest(0, {
    topic: 'load',
    partition: 1,
    ack: AckPolicy.NONE,
    records: Array(16).fill(record),
  });
  while (running && !socket.destroyed) {
    noneBytes += frame.length;
    if (!socket.write(frame)) {
      const blocked = performance.now();
      await new Promise<void>((resolve) => {
        const done = () => {
          clearInterval(check);
          socket.off('drain', done).off('close', done);
          resolve();
        };
        socket.once('drain', done).once('close', done);
        const check = setInterval(() => !running && done(), 50); // `stop` while blocked
      });
      noneBlockedMs += performance.now() - blocked;
    }
  }
  if (socket.destroyed && !stopping) fail(new Error('the broker closed the ack NONE connection under load'));
  socket.destroy();
}

const hog = await neverReads().catch(fail);
const producers = [...Array.from({ length: 4 }, forcedProducer), noneProducer()].map((p) => p.catch(fail));
process.stdout.write('running\n');

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'stopping') stopping = true;
  if (line !== 'stop') return;
  running = false;
  hog.socket.destroy();
  await Promise.all(producers);
  process.stdout.write(
    `${JSON.stringify({ hogRequestBytes: hog.sentBytes, forcedAcks, noneBytes, noneBlockedMs })}\n`,
  );
  process.exit(0);
});
