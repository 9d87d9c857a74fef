import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, scramCredential } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { UserChangeError } from './errors.js';
import { FileUserStore, USERS_FILE_NAME } from './user-store.js';

const credential = () => scramCredential('pw', randomBytes(16), 4096);

describe('users file on one node', () => {
  it('a failed directory fsync after the rename is an unknown outcome, and the users served are those on disk', async (t) => {
    const dir = tempDir(t);
    const store = new FileUserStore(dir, () => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    store.load();
    const refusal = await store.upsert('alice', credential()).catch((e: unknown) => e);
    assert.ok(refusal instanceof UserChangeError, String(refusal));
    assert.equal(refusal.code, ErrorCode.OUTCOME_UNKNOWN, 'not a refusal: the file was replaced');
    assert.match(refusal.message, /directory's fsync failed \(EIO.*may not survive a crash/);
    assert.notEqual(store.get('alice'), undefined, 'served as the file holds it');
    const reread = new FileUserStore(dir);
    reread.load();
    assert.notEqual(reread.get('alice'), undefined, 'a restart without a crash reads it');
  });

  it('a write that fails before the rename changes nothing, on disk or served', async (t) => {
    const dir = tempDir(t);
    const store = new FileUserStore(dir);
    store.load();
    await store.upsert('alice', credential());
    const before = fs.readFileSync(path.join(dir, USERS_FILE_NAME), 'utf8');
    // The temporary file cannot be made: a directory stands in its place.
    fs.mkdirSync(path.join(dir, `${USERS_FILE_NAME}.tmp`));
    await assert.rejects(store.upsert('bob', credential()), /EISDIR|illegal operation on a directory/);
    assert.equal(store.get('bob'), undefined);
    assert.equal(await store.remove('alice').catch(() => 'refused'), 'refused');
    assert.notEqual(store.get('alice'), undefined, 'a refused removal removes nothing');
    assert.equal(fs.readFileSync(path.join(dir, USERS_FILE_NAME), 'utf8'), before);
  });
});
