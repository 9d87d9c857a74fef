import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BrokerProcess } from '@booblik/testkit';
import { booblik } from '../test-support/spawn.js';

describe('booblik against a real broker with booblik.auth=required', () => {
  it('users add, then produce as that user; a token issued from the keys file reads; no credentials is refused', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cli-auth-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const keys = path.join(dir, 'keys');
    fs.writeFileSync(keys, `k1 ${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    const broker = await BrokerProcess.start(t, {
      http: false,
      env: { BOOBLIK_BOOTSTRAP_USER: 'admin:admin-pw' },
      flags: [
        '--topics=orders:1',
        '--booblik.auth=required',
        '--booblik.auth.superusers=admin',
        `--booblik.auth.token.keys.file=${keys}`,
      ],
    });
    const env = { BOOBLIK_BROKER: broker.address };
    const add = await booblik(['users', 'add', 'app', '--password-stdin', '--user', 'admin'], {
      input: 'app-pw\n',
      env: { ...env, BOOBLIK_PASSWORD: 'admin-pw' },
    });
    assert.equal(add.code, 0, add.stderr);
    const produce = await booblik(['produce', 'orders'], {
      input: 'hello\n',
      env: { ...env, BOOBLIK_USER: 'app', BOOBLIK_PASSWORD: 'app-pw' },
    });
    assert.equal(produce.code, 0, produce.stderr);
    const listByApp = await booblik(['users', 'list'], {
      env: { ...env, BOOBLIK_USER: 'app', BOOBLIK_PASSWORD: 'app-pw' },
    });
    assert.equal(listByApp.code, 1);
    assert.match(listByApp.stderr, /USERS LIST refused: NOT_AUTHORIZED/);

    const issue = await booblik([
      'tokens',
      'issue',
      '--subject',
      'reader',
      '--ttl',
      '1h',
      '--keys-file',
      keys,
    ]);
    assert.equal(issue.code, 0, issue.stderr);
    const consume = await booblik(['consume', 'orders'], {
      env: { ...env, BOOBLIK_TOKEN: issue.stdout.toString().trim() },
    });
    assert.equal(consume.code, 0, consume.stderr);
    assert.equal(consume.stdout.toString(), 'hello\n');

    const anonymous = await booblik(['metadata'], { env });
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /requires authentication/);
  });
});
