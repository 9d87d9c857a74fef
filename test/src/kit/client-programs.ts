/**
 * The Python and Go clients driven from a TypeScript test: a program run to its end with its output,
 * and a Go program built offline against the repo's Go client (it has no dependencies).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const PYTHON_CLIENT_DIR = path.resolve(import.meta.dirname, '../../../clients/python');
const GO_CLIENT_DIR = path.resolve(import.meta.dirname, '../../../clients/go');
const GO_MODULE = 'github.com/youndie/booblik/clients/go';

/** Runs `command` to its end: its exit code and everything it wrote (stdout and stderr). */
export function runProgram(
  command: string,
  args: readonly string[],
): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args);
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.stderr.on('data', (d) => {
      text += d;
    });
    child.on('close', (code) => resolve({ code, text }));
  });
}

/** Builds `source` (a main package) against the local Go client; call `remove` when done. */
export function buildGoProgram(source: string): { binary: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-go-program-'));
  try {
    // Offline: a replace to the local client.
    const env = { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOWORK: 'off' };
    execFileSync('go', ['mod', 'init', 'example.com/program'], { cwd: dir, env, stdio: 'pipe' });
    fs.writeFileSync(path.join(dir, 'main.go'), source);
    execFileSync('go', ['mod', 'edit', `-replace=${GO_MODULE}=${GO_CLIENT_DIR}`], {
      cwd: dir,
      env,
      stdio: 'pipe',
    });
    execFileSync('go', ['get', GO_MODULE], { cwd: dir, env, stdio: 'pipe' });
    execFileSync('go', ['build', '-o', 'program', '.'], { cwd: dir, env, stdio: 'pipe' });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    binary: path.join(dir, 'program'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
