import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeAuth, FakeBroker, MemoryLog } from '@booblik/client/testing';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { booblik } from '../test-support/spawn.js';

const brokers: FakeBroker[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cli-auth-'));
after(async () => {
  for (const b of brokers) await b.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A broker with booblik.auth=required: `admin` (password admin-pw), and the tokens `accept` takes. */
async function serve(accept: (token: string) => boolean = () => false) {
  const auth = new FakeAuth({
    users: { admin: 'admin-pw' },
    tokens: (token) => (accept(token) ? { principal: 'svc', expiresAtMs: Date.now() + 60_000 } : undefined),
  });
  const frames: Buffer[] = [];
  const inner = auth.wrap(new MemoryLog({ t: 1 }).handle);
  const broker = await FakeBroker.start((req) => {
    frames.push(req.frame);
    return inner(req);
  });
  brokers.push(broker);
  return { auth, broker, frames };
}

function file(name: string, text: string): string {
  const at = path.join(dir, name);
  fs.writeFileSync(at, text);
  return at;
}

const secret1 = randomBytes(32);
const secret2 = randomBytes(32);
const keysFile = file(
  'keys',
  `# the first key signs\nk1 ${secret1.toString('base64url')}\nk0 ${secret2.toString('base64url')}\n`,
);

describe('booblik users', () => {
  it('add reads the password from stdin and sends only keys; the new user then connects with it', async () => {
    const { broker, frames } = await serve();
    const add = await booblik(['users', 'add', 'bob', '--password-stdin', '--user', 'admin'], {
      input: 'bobs-pw\nnot part of it\n',
      env: { BOOBLIK_BROKER: broker.address, BOOBLIK_PASSWORD: 'admin-pw' },
    });
    assert.equal(add.code, 0, add.stderr);
    assert.equal(add.stdout.toString(), 'user bob: credentials set (SCRAM-SHA-256, 4096 iterations)\n');
    for (const frame of frames) assert.equal(frame.includes('bobs-pw'), false, 'the password was sent');
    const byFile = await booblik(['metadata', '--user', 'bob', '--password-file', file('pw', 'bobs-pw\n')], {
      env: { BOOBLIK_BROKER: broker.address },
    });
    assert.equal(byFile.code, 0, byFile.stderr);
    assert.match(byFile.stdout.toString(), /^t +0 +0 +0$/m);
    const byEnv = await booblik(['metadata'], {
      env: { BOOBLIK_BROKER: broker.address, BOOBLIK_USER: 'bob', BOOBLIK_PASSWORD: 'bobs-pw' },
    });
    assert.equal(byEnv.code, 0, byEnv.stderr);
  });

  it('list prints a table, or with --format json an array; remove of an unknown user is exit 1', async () => {
    const { broker } = await serve();
    const env = { BOOBLIK_BROKER: broker.address, BOOBLIK_USER: 'admin', BOOBLIK_PASSWORD: 'admin-pw' };
    const list = await booblik(['users', 'list'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.toString(), 'NAME   MECHANISM      ITERATIONS\nadmin  SCRAM-SHA-256  4096\n');
    const json = await booblik(['users', 'list', '--format', 'json'], { env });
    assert.deepEqual(JSON.parse(json.stdout.toString()), [
      { name: 'admin', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
    ]);
    const remove = await booblik(['users', 'remove', 'nobody'], { env });
    assert.equal(remove.code, 1);
    assert.match(remove.stderr, /USERS REMOVE nobody refused: no user nobody/);
  });

  it('add without --password-stdin is a usage error, and nothing connects', async () => {
    const { broker } = await serve();
    const run = await booblik(['users', 'add', 'bob', '--broker', broker.address]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--password-stdin/);
    assert.equal(broker.peers.length, 0);
  });
});

describe('booblik credentials', () => {
  it("a wrong password is exit 1 with the broker's reason, and the password is printed nowhere", async () => {
    const { broker } = await serve();
    const run = await booblik(['--user', 'admin', 'metadata'], {
      env: { BOOBLIK_BROKER: broker.address, BOOBLIK_PASSWORD: 'hunter2-not-it' },
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /authentication failed: wrong user name or password/);
    assert.doesNotMatch(run.stderr + run.stdout.toString(), /hunter2/);
  });

  it('no credentials for a broker that requires them: exit 1 saying so', async () => {
    const { broker } = await serve();
    const run = await booblik(['metadata', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /METADATA refused: the broker requires authentication/);
  });

  it('--user without a password, or with --token-file too, is a usage error before connecting', async () => {
    const none = await booblik(['metadata', '--user', 'admin', '--broker', '127.0.0.1:1']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--user admin needs a password: set BOOBLIK_PASSWORD, or give --password-file/);
    const both = await booblik([
      'metadata',
      '--user',
      'a',
      '--token-file',
      keysFile,
      '--broker',
      '127.0.0.1:1',
    ]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give one of them/);
    const missing = await booblik([
      'metadata',
      '--token-file',
      path.join(dir, 'nope'),
      '--broker',
      '127.0.0.1:1',
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--token-file .*nope: cannot read it \(ENOENT\)/);
  });

  it('a token from --token-file or BOOBLIK_TOKEN authenticates; a flag wins over the environment', async () => {
    const issue = await booblik([
      'tokens',
      'issue',
      '--subject',
      'svc',
      '--ttl',
      '1h',
      '--keys-file',
      keysFile,
    ]);
    assert.equal(issue.code, 0, issue.stderr);
    const token = issue.stdout.toString().trim();
    const { broker } = await serve((t) => t === token);
    const env = { BOOBLIK_BROKER: broker.address };
    const byFile = await booblik(['metadata', '--token-file', file('token', `${token}\n`)], { env });
    assert.equal(byFile.code, 0, byFile.stderr);
    const byEnv = await booblik(['metadata'], { env: { ...env, BOOBLIK_TOKEN: token } });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    const flagWins = await booblik(
      ['metadata', '--user', 'admin', '--password-file', file('apw', 'admin-pw')],
      {
        env: { ...env, BOOBLIK_TOKEN: 'not-a-token' },
      },
    );
    assert.equal(flagWins.code, 0, flagWins.stderr);
    const refused = await booblik(['metadata'], { env: { ...env, BOOBLIK_TOKEN: 'secret-but-wrong' } });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /AUTHENTICATE TOKEN refused: authentication failed: the token is not valid/);
    assert.doesNotMatch(refused.stderr, /secret-but-wrong/);
  });
});

describe('booblik tokens issue', () => {
  it('prints only an HS256 JWT signed with the first key, its id as kid, with sub, iat, exp and the claims', async () => {
    const run = await booblik([
      'tokens',
      'issue',
      '--subject',
      'reporting',
      '--ttl',
      '15m',
      '--claim',
      'groups=ops,dev',
      '--claim',
      'team=payments',
      '--keys-file',
      keysFile,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.toString().split('\n');
    assert.deepEqual(lines.slice(1), [''], 'one line: the token alone');
    const token = lines[0]!;
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT', kid: 'k1' });
    const { payload } = await jwtVerify(token, secret1, { algorithms: ['HS256'] });
    assert.equal(payload.sub, 'reporting');
    assert.equal(payload.exp! - payload.iat!, 15 * 60);
    assert.ok(Math.abs(payload.iat! - Date.now() / 1000) < 60);
    assert.deepEqual(payload.groups, ['ops', 'dev']);
    assert.equal(payload.team, 'payments');
    await assert.rejects(jwtVerify(token, secret2), 'not signed with the second key');
  });

  it('a reserved claim, a bad --ttl, or a keys file that is not one is a usage error that keeps the secret out', async () => {
    const base = ['tokens', 'issue', '--subject', 's', '--keys-file', keysFile];
    const sub = await booblik([...base, '--ttl', '1h', '--claim', 'sub=root']);
    assert.equal(sub.code, 2);
    assert.match(sub.stderr, /--claim sub: set by --subject and --ttl/);
    const ttl = await booblik([...base, '--ttl', '1 hour']);
    assert.equal(ttl.code, 2);
    assert.match(ttl.stderr, /--ttl: "1 hour", expected a duration/);
    const short = randomBytes(8).toString('base64url');
    const bad = await booblik([
      'tokens',
      'issue',
      '--subject',
      's',
      '--ttl',
      '1h',
      '--keys-file',
      file('bad', `k ${short}\n`),
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad:1: key k: the secret is 8 bytes, at least 32/);
    assert.doesNotMatch(bad.stderr, new RegExp(short));
  });
});
