import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { ObjectNotFoundError, StoreRefusedError, StoreUnavailableError } from './errors.js';
import { FileStore } from './file-store.js';
import { openStore } from './open-store.js';
import { collect, storeContract } from './test-support/contract.js';

storeContract('file://', (t, options) => openStore(`file://${tempDir(t, 'file-store')}`, options));

const childScript = new URL('./test-support/crash-put-child.js', import.meta.url).pathname;

/** Runs a put in a child that is SIGKILLed between writing the temporary file and renaming it. */
function crashedPut(root: string, key: string, size: number, mode = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, root, key, String(size), mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`the child was not killed mid-put: ${out}`)),
    );
  });
}

describe('file://', () => {
  it('a put killed between writing and renaming leaves no object, and the previous one whole', async (t) => {
    const root = tempDir(t, 'file-crash');
    const store = new FileStore(root);
    await crashedPut(root, 'seg/new', 1 << 20);
    await assert.rejects(store.get('seg/new'), ObjectNotFoundError);
    await assert.rejects(store.head('seg/new'), ObjectNotFoundError);
    const leftovers = fs.readdirSync(path.join(root, 'seg'));
    assert.equal(leftovers.length, 1, 'the crash did leave its temporary file behind');
    assert.deepEqual(await collect(store.list()), [], 'a listing never shows a temporary file');

    const previous = Buffer.from('the manifest before');
    await store.put('manifest', previous);
    await crashedPut(root, 'manifest', 1 << 20);
    assert.ok(
      (await store.get('manifest')).equals(previous),
      'the object replaced by the crashed put is intact',
    );
    await crashedPut(root, 'manifest-2', 1000, 'ifAbsent');
    await store.put('manifest-2', Buffer.from('written after'), { ifAbsent: true });
    assert.equal(
      (await store.get('manifest-2')).toString(),
      'written after',
      'a crashed ifAbsent put claims nothing',
    );
  });

  it('a store whose directory is missing (not mounted) is unavailable, and put does not create it', async (t) => {
    const root = path.join(tempDir(t, 'file-unmounted'), 'mnt');
    const store = new FileStore(root);
    for (const call of [
      () => store.put('a', Buffer.from('x')),
      () => store.get('a'),
      () => store.head('a'),
      () => store.delete('a'),
      () => collect(store.list()),
    ]) {
      await assert.rejects(call, (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError, `got ${error}`);
        assert.equal(error.retriable, true);
        assert.match(error.message, /mnt does not exist/);
        return true;
      });
    }
    assert.equal(fs.existsSync(root), false, 'the root was created behind the mount point');
    fs.mkdirSync(root);
    await store.put('a', Buffer.from('x'));
    assert.equal((await store.get('a')).toString(), 'x', 'works once the directory is there');
  });

  it('a root that vanishes after a put checked it (an unmount mid-upload) is not created again', async (t) => {
    const root = path.join(tempDir(t, 'file-unmounted-mid-put'), 'mnt');
    fs.mkdirSync(root);
    const store = new FileStore(root);
    // The root is taken away right after the put's check of it, before the put makes its folders.
    const stat = fs.promises.stat;
    t.after(() => {
      fs.promises.stat = stat;
    });
    fs.promises.stat = (async (...args: Parameters<typeof stat>) => {
      const result = await stat(...args);
      if (args[0] === root) {
        fs.promises.stat = stat;
        fs.renameSync(root, `${root}.away`);
      }
      return result;
    }) as typeof stat;
    await assert.rejects(store.put('topic/0/segment', Buffer.from('x')), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError, `got ${error}`);
      assert.match(error.message, /mnt does not exist/);
      return true;
    });
    assert.equal(fs.existsSync(root), false, 'the put grew a new, empty store where the old one was');
  });

  it('a key below an object (a file where a folder must be) is refused, not retried', async (t) => {
    const store = new FileStore(tempDir(t, 'file-refused'));
    await store.put('a', Buffer.from('x'));
    await assert.rejects(store.put('a/b', Buffer.from('y')), StoreRefusedError);
    await assert.rejects(store.get('a/b'), ObjectNotFoundError);
  });
});
