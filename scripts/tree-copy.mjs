// A copy of this working tree as git sees it (tracked files and untracked ones not ignored, with the
// changes not yet committed) for a run under another Node (scripts/node-versions.mjs). Files keep
// their mode and modification time, and only changed ones are copied again, so the copy's own
// node_modules, dist/ and incremental build stay valid from one run to the next; a file gone from
// the tree is removed from the copy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The record of what the last sync copied, to remove what has left the tree since. */
const MANIFEST = '.booblik-tree-files';

export function syncTree(root, copy) {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  })
    .split('\0')
    .filter(
      (f) => f !== '' && fs.existsSync(path.join(root, f)) && fs.lstatSync(path.join(root, f)).isFile(),
    );
  fs.mkdirSync(copy, { recursive: true });
  const manifest = path.join(copy, MANIFEST);
  const before = fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8').split('\n') : [];
  const now = new Set(listed);
  for (const gone of before) if (gone && !now.has(gone)) fs.rmSync(path.join(copy, gone), { force: true });
  let copied = 0;
  for (const file of listed) {
    const from = path.join(root, file);
    const to = path.join(copy, file);
    const source = fs.statSync(from);
    const target = fs.existsSync(to) ? fs.statSync(to) : undefined;
    // Whole milliseconds: the copy's time is set through a double, which rounds below that.
    if (target && target.size === source.size && Math.floor(target.mtimeMs) === Math.floor(source.mtimeMs))
      continue;
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.chmodSync(to, source.mode);
    fs.utimesSync(to, source.atimeMs / 1000, source.mtimeMs / 1000);
    copied++;
  }
  fs.writeFileSync(manifest, listed.join('\n'));
  // What the tree has built once and every copy may share: the S3 test server (scripts/install-versitygw.mjs).
  const bin = path.join(copy, '.cache', 'bin');
  if (!fs.existsSync(bin) && fs.existsSync(path.join(root, '.cache', 'bin'))) {
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    fs.symlinkSync(path.join(root, '.cache', 'bin'), bin);
  }
  process.stderr.write(`tree copy ${copy}: ${copied} of ${listed.length} files copied\n`);
}
