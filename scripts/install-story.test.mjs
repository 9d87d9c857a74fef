// The install recipes of the TypeScript client, the CLI and the broker, tried as a newcomer would: on
// a clone of this repository's HEAD that was never installed or built, from a project outside it.
// The broker comes from this checkout's build, on a free port, with its defaults (topic `default`, 1
// partition). Run by `npm test` as the `install-story` step; it may reach the npm registry for the
// clone's own dev dependencies (TypeScript and the rest of package-lock.json), never for a package
// named booblik.
//
//   node --test scripts/install-story.test.mjs
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'booblik-install-story-'));
const clone = path.join(work, 'clone');
/** Every step is bounded: a hung npm fails this test instead of the whole run. */
const STEP_TIMEOUT_MS = 180_000;

/** Runs a command to completion; its output is kept for the failure message. */
function run(command, args, cwd) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: STEP_TIMEOUT_MS,
    env: {
      ...process.env,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} in ${cwd} failed:\n${output}`);
  return result.stdout;
}

/** An empty project outside the clone, as a user's would be. */
function outsideProject(name) {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  return dir;
}

/** What a user writes first: produce a record to the default topic and read it back. */
const roundTrip = `
import { Connection, Producer } from '@booblik/client';
const address = process.argv[2];
const producer = await Producer.connect(address);
const offset = await producer.send('default', process.argv[3]);
await producer.close();
const connection = await Connection.connect(address);
for await (const record of connection.consumer('default', 0, offset, { maxWaitMs: 0 })) {
  console.log(JSON.stringify({ offset: record.offset, payload: record.payload.toString() }));
  break;
}
await connection.close();
`;

function tryRoundTrip(project, text) {
  writeFileSync(path.join(project, 'round-trip.mjs'), roundTrip);
  const out = run(process.execPath, ['round-trip.mjs', brokerAddress, text], project);
  assert.equal(JSON.parse(out.trim()).payload, text);
}

let broker;
let brokerAddress;
before(async () => {
  run('git', ['clone', '--quiet', root, clone], work);
  const dataDir = path.join(work, 'data');
  broker = spawn(
    process.execPath,
    [path.join(root, 'packages/broker/dist/main.js'), '--port=0', '--http.port=0', `--data.dir=${dataDir}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  brokerAddress = await new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the broker did not start:\n${seen}`)), 30_000);
    const onData = (chunk) => {
      seen += chunk;
      const m = /booblik listening on ([\d.]+:\d+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    broker.stdout.on('data', onData);
    broker.stderr.on('data', onData);
    broker.once('exit', (code) => reject(new Error(`the broker exited with ${code}:\n${seen}`)));
  });
});

after(async () => {
  if (broker && broker.exitCode === null) {
    const exited = new Promise((resolve) => broker.once('exit', resolve));
    broker.kill('SIGTERM');
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
});

describe('install story (TypeScript)', () => {
  it('npm install <clone>/packages/client works on a clone never built, and round-trips a record', () => {
    const project = outsideProject('from-folder');
    run('npm', ['install', path.join(clone, 'packages', 'client')], project);
    tryRoundTrip(project, 'hello from a folder install');
  });

  it('npm install -g <clone>/packages/cli gives a booblik command that reaches the broker', () => {
    // --prefix: a global install into a folder of the test's own, not the machine's.
    const prefix = path.join(work, 'global');
    run('npm', ['install', '-g', '--prefix', prefix, path.join(clone, 'packages', 'cli')], work);
    const out = run(path.join(prefix, 'bin', 'booblik'), ['metadata', '--broker', brokerAddress], work);
    assert.match(out, /^TOPIC +PARTITION +LOG_START +HIGH_WATERMARK\ndefault +0 /);
  });

  it('npm install -g <clone>/packages/broker gives a booblik-broker that serves from a properties file', async () => {
    // The operations guide's systemd recipe, minus systemd: the command, a properties file, a stop.
    const prefix = path.join(work, 'global-broker');
    run('npm', ['install', '-g', '--prefix', prefix, path.join(clone, 'packages', 'broker')], work);
    const properties = path.join(work, 'booblik.properties');
    writeFileSync(
      properties,
      `booblik.data.dir=${path.join(work, 'state')}\nbooblik.port=0\nbooblik.http.port=0\nbooblik.topics=default:1\n`,
    );
    const served = spawn(path.join(prefix, 'bin', 'booblik-broker'), [properties], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let seen = '';
    const exited = new Promise((resolve) => served.once('exit', (code) => resolve(code)));
    const listening = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`booblik-broker did not start:\n${seen}`)), 30_000);
      const onData = (chunk) => {
        seen += chunk;
        if (/booblik listening on [\d.]+:\d+/.test(seen)) {
          clearTimeout(timer);
          resolve();
        }
      };
      served.stdout.on('data', onData);
      served.stderr.on('data', onData);
      exited.then((code) => reject(new Error(`booblik-broker exited with ${code}:\n${seen}`)));
    });
    try {
      await listening;
    } finally {
      if (served.exitCode === null) served.kill('SIGTERM');
    }
    assert.equal(await exited, 0, seen);
    assert.match(seen, /booblik stopped/);
  });

  it('npm pack of the client lists no test files, and bundles the protocol package', () => {
    const [packed] = JSON.parse(
      run('npm', ['pack', '--dry-run', '--json'], path.join(clone, 'packages', 'client')),
    );
    const files = packed.files.map((f) => f.path);
    assert.deepEqual(
      files.filter((f) => /\.test\.|test-support|tsbuildinfo/.test(f)),
      [],
      'test files in the tarball',
    );
    assert.ok(files.includes('dist/index.js'), 'the client itself');
    assert.ok(
      files.includes('node_modules/@booblik/protocol/dist/index.js'),
      'the protocol package, bundled',
    );
    assert.deepEqual(packed.bundled, ['@booblik/protocol']);
    assert.ok(
      !readdirSync(path.join(clone, 'packages', 'client')).includes('node_modules'),
      'the copy bundled for the pack is removed after it',
    );
  });

  it('the packed client installs in another project with its own protocol copy, and round-trips', () => {
    const tarballs = path.join(work, 'tarballs');
    mkdirSync(tarballs);
    run('npm', ['pack', '--pack-destination', tarballs], path.join(clone, 'packages', 'client'));
    const [tarball] = readdirSync(tarballs);
    const project = outsideProject('from-tarball');
    run('npm', ['install', path.join(tarballs, tarball)], project);
    // Bundled inside the client, so npm never looked for a registry package of that name.
    const bundled = path.join(project, 'node_modules/@booblik/client/node_modules/@booblik/protocol');
    assert.ok(readdirSync(bundled).includes('dist'), 'protocol is the copy bundled with the client');
    tryRoundTrip(project, 'hello from a tarball');
  });
});
