/**
 * The suite's floor server must answer the suite's booblik driver as a broker would, or the figures
 * measured beside the brokers compare unlike things: every record stored with its CRC and read back,
 * FORCED answered, a held FETCH woken by the next write, answers in request order behind a held one.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { encodeFetchRequestV2 } from '@booblik/protocol';
import { makeBenchCertificates } from './certs.js';
import { booblikDriver, makeDriver, RecordPool } from './drivers.js';
import { type Server, startNodeFloor } from './servers.js';
import { BooblikWire } from './wire/booblik.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-node-floor-'));
const pool = new RecordPool(128);
let server: Server;

before(async () => {
  server = await startNodeFloor(here, dir, path.join(dir, 'floor.log'));
});
after(async () => {
  await server.stop(2000);
  fs.rmSync(dir, { recursive: true, force: true });
});

const noDeadline = () => false;

test('records produced WRITTEN and FORCED are all read back from the start with valid CRCs', async () => {
  const written = booblikDriver({ port: server.port, pool, forced: false });
  const forced = booblikDriver({ port: server.port, pool, forced: true });
  const a = await written.open();
  const b = await forced.open();
  const start = await written.stored();
  await a.produce(10, 0);
  await Promise.all([b.produce(1, 10), b.produce(1, 11), b.produce(3, 12)]);
  await a.produce(1, 15);
  assert.equal(await written.stored(), start + 16);
  // readAll verifies every record's CRC-32C and counts only whole records.
  const read = await a.readAll(start + 16, 1 << 20, true, noDeadline);
  assert.equal(read.records, start + 16);
  a.close();
  b.close();
  written.close();
  forced.close();
});

test('reads of about 300 bytes start mid-PRODUCE and still get every record once, in order (W4 on the floor)', async () => {
  const driver = booblikDriver({ port: server.port, pool, forced: false });
  const h = await driver.open();
  const start = await driver.stored();
  for (let i = 0; i < 30; i++) await h.produce(1 + (i % 7), i);
  const produced = (await driver.stored()) - start;
  // Each fetch holds two or three of the 136-byte stored records: most begin inside a PRODUCE.
  const read = await h.readAll(start + produced, 300, true, noDeadline);
  assert.equal(read.records, start + produced);
  h.close();
  driver.close();
});

test('with a certificate the floor serves TLS only: a TLS driver reads back what it stored', async (t) => {
  const tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-node-floor-tls-'));
  const certs = makeBenchCertificates(path.join(tlsDir, 'tls'));
  const floor = await startNodeFloor(here, tlsDir, path.join(tlsDir, 'floor.log'), process.execPath, certs);
  t.after(async () => {
    await floor.stop(2000);
    fs.rmSync(tlsDir, { recursive: true, force: true });
  });
  const driver = makeDriver('node-floor-tls', { port: floor.port, pool, forced: false, tlsCaFile: certs.ca });
  const h = await driver.open();
  for (let i = 0; i < 5; i++) await h.produce(100, i * 100);
  assert.equal(await driver.stored(), 500);
  assert.deepEqual(await h.readAll(500, 1 << 20, true, noDeadline), { records: 500, bytes: 500 * 128 });
  h.close();
  driver.close();
  const plaintext = booblikDriver({ port: floor.port, pool, forced: false });
  await assert.rejects(plaintext.stored(), 'a plaintext request gets no answer from a TLS floor');
  plaintext.close();
});

test('a FETCH held at the log end is answered by the next write, before its wait ends', async () => {
  const driver = booblikDriver({ port: server.port, pool, forced: false });
  const consumer = await driver.open();
  const producer = await driver.open();
  const tailer = await consumer.tail(30_000);
  const next = tailer.next();
  const t0 = performance.now();
  await producer.produceRecords([Buffer.from('wake up')]);
  const got = await next;
  assert.deepEqual(
    got.map((b) => b.toString()),
    ['wake up'],
  );
  assert.ok(performance.now() - t0 < 10_000, 'woken by the write, not by the end of the wait');
  consumer.close();
  producer.close();
  driver.close();
});

test('answers keep request order on a connection when a held FETCH comes first', async () => {
  const driver = booblikDriver({ port: server.port, pool, forced: false });
  const end = await driver.stored();
  driver.close();
  const wire = await BooblikWire.connect(server.port);
  const order: string[] = [];
  const fetch = encodeFetchRequestV2(0, {
    topic: 'bench',
    partition: 0,
    fetchOffset: end,
    maxBytes: 65536,
    maxWaitMs: 300,
    minBytes: 1,
  });
  const held = wire.send(fetch).then(() => order.push('fetch, empty at the end of its wait'));
  // METADATA is refused at once by the floor; its refusal must still wait for the FETCH's answer.
  const metadata = Buffer.from([0, 0, 0, 10, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0]);
  const refused = wire.send(metadata).catch(() => order.push('metadata refused'));
  await Promise.all([held, refused]);
  assert.deepEqual(order, ['fetch, empty at the end of its wait', 'metadata refused']);
  wire.close();
});
