/**
 * The suite's booblik-tls system must measure the broker with TLS, not something else: the lean
 * driver over TLS stores and reads back what plaintext does (every CRC checked, reads arriving in
 * TLS-record-sized pieces), and it trusts only the run's CA, so a figure cannot come from a
 * connection that verified nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeBenchCertificates } from './certs.js';
import { makeDriver, RecordPool } from './drivers.js';
import { type Server, startBooblik } from './servers.js';
import { BooblikWire } from './wire/booblik.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-bench-tls-'));
const pool = new RecordPool(128);
const noDeadline = () => false;
let certs: ReturnType<typeof makeBenchCertificates>;
let server: Server;

before(async () => {
  certs = makeBenchCertificates(path.join(dir, 'tls'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir);
  server = await startBooblik({ repoRoot, dataDir, logFile: path.join(dir, 'broker.log'), tls: certs });
});
after(async () => {
  await server?.stop(5000);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('booblik-tls: the lean driver over TLS reads back every record it stored, CRCs checked', {
  timeout: 20_000,
}, async () => {
  const driver = makeDriver('booblik-tls', { port: server.port, pool, forced: false, tlsCaFile: certs.ca });
  const h = await driver.open();
  for (let i = 0; i < 20; i++) await h.produce(100, i * 100);
  assert.equal(await driver.stored(), 2000);
  // 2000 records of 136 stored bytes: the answer comes in many TLS records, split mid-record.
  const read = await h.readAll(2000, 1 << 20, true, noDeadline);
  assert.deepEqual(read, { records: 2000, bytes: 2000 * 128 });
  h.close();
  driver.close();
});

test('booblik-tls: a driver that trusts another CA is refused, not connected unverified', {
  timeout: 20_000,
}, async () => {
  const other = makeBenchCertificates(path.join(dir, 'other'));
  await assert.rejects(BooblikWire.connect(server.port, fs.readFileSync(other.ca)), (e: Error) =>
    /self[- ]signed|unable to verify|certificate/i.test(e.message),
  );
});

test('booblik-tls: the system cannot run without a CA to trust', () => {
  assert.throws(() => makeDriver('booblik-tls', { port: server.port, pool, forced: false }), /no CA file/);
});
