import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Logger } from '@booblik/log';
import { type ObjectStore, openStore } from '@booblik/store';
import { emptyManifest, loadManifest } from './manifest.js';
import { manifestKey } from './object-names.js';

async function store(t: TestContext): Promise<ObjectStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-manifest-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return openStore(`file://${dir}`);
}

function logged(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
}

const put = (s: ObjectStore, value: unknown) =>
  s.put(manifestKey('t', 0), Buffer.from(JSON.stringify(value)));

describe('store manifest: epochs and high watermark', () => {
  it('a manifest from before epochs were kept loads as it is, with none', async (t) => {
    const s = await store(t);
    await put(s, { ...emptyManifest('t', 0), generation: 3 });
    const { manifest, rebuilt } = await loadManifest(s, 't', 0, logged());
    assert.equal(rebuilt, false);
    assert.equal(manifest.epochs, undefined);
    assert.equal(manifest.highWatermark, undefined);
  });

  it('one whose epochs go back, or whose high watermark is not an offset, is not trusted: rebuilt from a listing', async (t) => {
    const s = await store(t);
    for (const [fields, problem] of [
      [
        {
          epochs: [
            { epoch: 2, startOffset: 5 },
            { epoch: 1, startOffset: 9 },
          ],
        },
        'malformed epochs',
      ],
      [
        {
          epochs: [
            { epoch: 1, startOffset: 9 },
            { epoch: 2, startOffset: 5 },
          ],
        },
        'malformed epochs',
      ],
      [{ highWatermark: -1 }, 'highWatermark -1'],
    ] as const) {
      await put(s, { ...emptyManifest('t', 0), ...fields });
      const logger = logged();
      const { manifest, rebuilt } = await loadManifest(s, 't', 0, logger);
      assert.equal(rebuilt, true, problem);
      assert.equal(manifest.epochs, undefined);
      assert.ok(
        logger.lines.some((l) => l.includes(`store manifest ${problem}; rebuilt from a listing`)),
        logger.lines.join('\n'),
      );
    }
  });
});
