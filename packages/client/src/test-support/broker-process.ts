/**
 * The real broker as a child process, for the client's tests of the topic APIs (the client imports
 * nothing of the broker: it is started from its built entry point, as a user would).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const brokerMain = fileURLToPath(new URL('../../../broker/dist/main.js', import.meta.url));

export async function startBrokerProcess(t: TestContext, args: string[] = []): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-client-'));
  const child = spawn(
    process.execPath,
    [brokerMain, '--port=0', '--http.port=-1', `--data.dir=${dataDir}`, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.after(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /booblik listening on (\S+):(\d+)/.exec(out);
      if (m) resolve(`${m[1]}:${m[2]}`);
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code} before listening: ${err}${out}`)));
  });
}
