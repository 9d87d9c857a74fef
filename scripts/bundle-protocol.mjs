#!/usr/bin/env node
// `npm pack` of @booblik/client bundles @booblik/protocol (bundleDependencies), so that the tarball
// installs anywhere without asking the registry for a package of that name, which is not ours there.
// In the workspace the protocol package is a link at the root, which npm does not bundle; `prepack`
// puts a copy of what protocol itself would pack into packages/client/node_modules, `postpack` removes it.
//
//   node scripts/bundle-protocol.mjs add | remove      (run from packages/client by npm)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const protocol = path.join(root, 'packages', 'protocol');
const copy = path.join(root, 'packages', 'client', 'node_modules', '@booblik', 'protocol');

rmSync(copy, { recursive: true, force: true });
if (process.argv[2] === 'remove') {
  // The folders the copy needed, if nothing else is in them (the workspace hoists everything else).
  for (const dir of [path.dirname(copy), path.dirname(path.dirname(copy))]) {
    try {
      if (readdirSync(dir).length === 0) rmdirSync(dir);
    } catch {
      // already gone
    }
  }
} else {
  // Exactly the files protocol's own package.json lets into a tarball (no tests, no build info).
  const listed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: protocol,
    encoding: 'utf8',
  });
  if (listed.status !== 0) {
    process.stderr.write(listed.stderr);
    process.exit(1);
  }
  for (const { path: file } of JSON.parse(listed.stdout)[0].files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    cpSync(path.join(protocol, file), path.join(copy, file));
  }
}
