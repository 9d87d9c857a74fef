import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { topicSpecWithDefaults } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { SpecStoreConflictError, SpecStoreCorruptError } from '../errors.js';
import { FileSpecStore, SPEC_FILE_NAME } from './file-spec-store.js';

const childScript = new URL('../test-support/spec-store-child.js', import.meta.url);

/** Runs the child until it has printed `ready` plus a random number of revisions, SIGKILLs it; returns the last one it acknowledged. */
function applyThenKill(dataDir: string, revisionsBeforeKill: number, extraDelayMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript.pathname, dataDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acknowledged = 0;
    let seen = 0;
    let buffered = '';
    let killing = false;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line !== 'ready') {
          acknowledged = Number(line);
          seen++;
        }
        if (!killing && seen >= revisionsBeforeKill) {
          killing = true;
          setTimeout(() => child.kill('SIGKILL'), extraDelayMs);
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acknowledged);
      else reject(new Error(`the child exited by itself (code ${code})`));
    });
  });
}

describe('the spec file', () => {
  it('SIGKILL at any moment of 50 rounds of replacing leaves the old set or the new one, never a torn one', async (t) => {
    const dir = tempDir(t);
    // Every random choice from one seed, named in each failure: BOOBLIK_TEST_SEED replays it.
    const seed = Number(process.env.BOOBLIK_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
    let rng = seed;
    const random = () => {
      rng = (Math.imul(rng, 1103515245) + 12345) >>> 0;
      return rng / 2 ** 32;
    };
    let last = 0;
    for (let round = 0; round < 50; round++) {
      const revisionsBeforeKill = Math.floor(random() * 3);
      const delayMs = random() * 8;
      const acknowledged = await applyThenKill(dir, revisionsBeforeKill, delayMs);
      const state = await new FileSpecStore(dir).load();
      const why = `seed ${seed}, round ${round} (kill after ${revisionsBeforeKill} revisions + ${delayMs.toFixed(1)} ms)`;
      if (state === null) {
        // Killed before the first replace was done: the old set is no file at all.
        assert.equal(last, 0, `${why}: the file is gone after revision ${last}`);
        assert.equal(acknowledged, 0, `${why}: revision ${acknowledged} was acknowledged, and no file`);
        continue;
      }
      assert.ok(
        state.revision >= acknowledged,
        `${why}: revision ${state.revision} lost acknowledged ${acknowledged}`,
      );
      assert.ok(state.revision >= last, `${why}: went back from ${last} to ${state.revision}`);
      // Self-describing: revision k holds exactly s0..s(k+199), each labelled with k.
      assert.equal(state.specs.length, state.revision + 200, why);
      for (const [i, spec] of state.specs.entries()) {
        assert.equal(spec.name, `s${i}`, why);
        assert.equal(spec.labels.round, String(state.revision), why);
      }
      last = state.revision;
    }
    assert.ok(last > 0, 'some replaces happened');
    assert.ok(
      !fs.existsSync(path.join(dir, `${SPEC_FILE_NAME}.tmp`)),
      'a leftover temporary file was removed at load',
    );
  });

  it('refuses a replace from a stale revision and keeps the stored set', async (t) => {
    const dir = tempDir(t);
    const store = new FileSpecStore(dir);
    assert.equal(await store.load(), null);
    const specs = [topicSpecWithDefaults({ name: 'a', partitions: 1, revision: 1 })];
    await store.replace(0, { revision: 1, specs });
    await assert.rejects(store.replace(0, { revision: 1, specs: [] }), SpecStoreConflictError);
    assert.deepEqual(await new FileSpecStore(dir).load(), { revision: 1, specs });
  });

  it('a file that is not a spec set stops the load, naming the file and what is wrong', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, SPEC_FILE_NAME);
    const spec = topicSpecWithDefaults({ name: 'a', partitions: 1, revision: 1 });
    for (const [text, message] of [
      ['{"format":1,"revision":1,"topics":[', /not JSON/],
      ['{"format":2,"revision":1,"topics":[]}', /format 2, expected 1/],
      [
        JSON.stringify({ format: 1, revision: 1, topics: [{ ...spec, partitions: 0 }] }),
        /topics\[0\]: partitions: 0/,
      ],
      [JSON.stringify({ format: 1, revision: 1, topics: [spec, spec] }), /topic a twice/],
      [
        JSON.stringify({ format: 1, revision: 1, topics: [{ ...spec, revision: 5 }] }),
        /topics\[0\].revision 5, expected 1\.\.1/,
      ],
      [JSON.stringify({ format: 1, revision: 1, topics: [{ name: 'a' }] }), /topics\[0\]: not a spec/],
    ] as const) {
      fs.writeFileSync(file, text);
      await assert.rejects(new FileSpecStore(dir).load(), (e: unknown) => {
        assert.ok(e instanceof SpecStoreCorruptError);
        assert.ok(e.message.startsWith(file), e.message);
        assert.match(e.message, message);
        return true;
      });
    }
  });
});
