import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

/** A fresh directory `booblik-<prefix>-XXXXXX` under the system's temp dir, removed when the test ends (passed or not). */
export function tempDir(t: Pick<TestContext, 'after'>, prefix = 'test'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `booblik-${prefix}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
