/**
 * Which modules a broker process loaded, seen from outside it: `moduleLogEnv(file)` is the
 * environment that makes Node import this file first (`--import`), which registers it as a module
 * resolve hook; every module the process resolves is then appended to `file`, one URL a line.
 * `moduleLog(file)` reads it back. Imported by a test, it only reads.
 */
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const LOG_FILE_ENV = 'BOOBLIK_TEST_MODULE_LOG';

/** Set by `initialize` in the hooks' own thread (the file path registered below). */
let logFile: string | undefined;

// Registered only in a process started with the environment below, and only once: Node loads this
// file again in the thread that runs the hooks, where it must not register itself a second time.
if (isMainThread && process.env[LOG_FILE_ENV]) register(import.meta.url, { data: process.env[LOG_FILE_ENV] });

export function initialize(file: string): void {
  logFile = file;
}

type Resolved = { url: string };
export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<Resolved>,
): Promise<Resolved> {
  const resolved = await next(specifier, context);
  if (logFile !== undefined && !resolved.url.startsWith('node:'))
    fs.appendFileSync(logFile, `${resolved.url}\n`);
  return resolved;
}

/** The environment for a child process whose module loads go to `file`. */
export function moduleLogEnv(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${new URL(import.meta.url).pathname}`, [LOG_FILE_ENV]: file };
}

/** The modules the log names, and the npm packages among them (`etcd3`, `@aws-sdk/client-s3`). */
export function moduleLog(file: string): { urls: string[]; packages: Set<string> } {
  const urls = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const packages = new Set<string>();
  for (const url of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) packages.add(m[1]!);
  }
  return { urls, packages };
}
