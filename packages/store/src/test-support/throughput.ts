// Throughput of each store on this machine: putFile of a 128 MiB file, then reading it back with
// ranged gets of 1 and 8 MiB, one or four at a time, and in one whole get. S3 is the kit's gateway
// on loopback. A measurement for the README, not a test:
//   node packages/store/dist/test-support/throughput.js
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../open-store.js';
import { S3TestServer, TEST_CREDENTIALS } from './s3-server.js';

const SIZE = 128 << 20;
const MiB = 1 << 20;

const server = await S3TestServer.start();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-throughput-'));
try {
  fs.mkdirSync(path.join(dir, 'store'));
  const file = path.join(dir, 'segment');
  const bytes = Buffer.alloc(SIZE);
  for (let i = 0; i < SIZE; i += 4) bytes.writeUInt32LE(i, i);
  fs.writeFileSync(file, bytes);
  const rate = (ms: number) => `${Math.round(SIZE / MiB / (ms / 1000))} MiB/s`;
  for (const [name, url] of [
    ['file://', `file://${dir}/store`],
    ['s3:// (versitygw, loopback)', server.url('throughput/')],
  ] as const) {
    const store = await openStore(url, { s3: { credentials: TEST_CREDENTIALS } });
    let started = performance.now();
    await store.putFile('segment', file);
    const results = [`putFile ${rate(performance.now() - started)}`];
    for (const [rangeMiB, parallel] of [
      [1, 1],
      [8, 1],
      [8, 4],
    ] as const) {
      started = performance.now();
      const offsets: number[] = [];
      for (let o = 0; o < SIZE; o += rangeMiB * MiB) offsets.push(o);
      for (let i = 0; i < offsets.length; i += parallel) {
        const parts = offsets.slice(i, i + parallel).map((o) => store.get('segment', o, o + rangeMiB * MiB));
        for (const part of await Promise.all(parts)) {
          if (part.length !== rangeMiB * MiB)
            throw new Error(`a ${rangeMiB} MiB range came back ${part.length} bytes`);
        }
      }
      results.push(`${rangeMiB} MiB ranges x${parallel} ${rate(performance.now() - started)}`);
    }
    started = performance.now();
    if (!(await store.get('segment')).equals(bytes))
      throw new Error(`${name}: the object came back different`);
    results.push(`whole get ${rate(performance.now() - started)}`);
    console.log(`${name}: ${results.join(', ')}`);
    store.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await server.close();
}
