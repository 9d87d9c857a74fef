import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileChecksum } from './checksum.js';

/** Long enough for the worker to hash the file many times over, even on a loaded machine. */
const BLOCKED_MS = 1000;

function fileOf(t: TestContext, bytes: Buffer): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-checksum-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'segment');
  fs.writeFileSync(file, bytes);
  return file;
}

/** Turns of the event loop until `promise` settles. */
async function turnsUntil(promise: Promise<unknown>): Promise<number> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  let turns = 0;
  while (!settled) {
    await new Promise((resolve) => setImmediate(resolve));
    turns++;
  }
  return turns;
}

describe('segment checksums', () => {
  it("a file's SHA-256 is the hash of its bytes", async (t) => {
    const bytes = randomBytes(9 << 20);
    assert.equal(await fileChecksum(fileOf(t, bytes)), createHash('sha256').update(bytes).digest('hex'));
    assert.equal(await fileChecksum(fileOf(t, Buffer.alloc(0))), createHash('sha256').digest('hex'));
  });

  it('a segment is hashed while the event loop is busy: the answer waits for one turn, not a turn per read', async (t) => {
    const file = fileOf(t, randomBytes(32 << 20));
    await fileChecksum(file); // the worker started
    const hashing = fileChecksum(file);
    const until = performance.now() + BLOCKED_MS;
    while (performance.now() < until); // the loop held, as a burst of PRODUCEs holds it
    const turns = await turnsUntil(hashing);
    assert.ok(
      turns <= 3,
      `${turns} turns of the loop after it was free again (reads on the loop need 8 or more)`,
    );
  });

  it('a file that is gone is an error with its code, and the next file is hashed', async (t) => {
    await assert.rejects(fileChecksum('/nonexistent/booblik-segment.log'), { code: 'ENOENT' });
    const bytes = Buffer.from('after');
    assert.equal(await fileChecksum(fileOf(t, bytes)), createHash('sha256').update(bytes).digest('hex'));
  });
});
