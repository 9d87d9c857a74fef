import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { tempDir } from '@booblik/testkit';
import { ObjectNotFoundError } from './errors.js';
import { FileStore } from './file-store.js';
import { GzipStore } from './gzip-store.js';
import { openStore } from './open-store.js';
import { collect } from './test-support/contract.js';

/** Records-like content: compressible, as real segments are. */
const text = Buffer.from(Array.from({ length: 5000 }, (_, i) => `record ${i} payload\n`).join(''));

describe('gzip view of a store', () => {
  it('stores gzip bytes under key.gz and gives back the original bytes, whole and ranged', async (t) => {
    const plain = new FileStore(tempDir(t, 'gzip'));
    const store = new GzipStore(plain);
    await store.put('seg/1', text);
    const stored = await plain.get('seg/1.gz');
    assert.ok(stored.length < text.length / 3, `gzip stored ${stored.length} of ${text.length} bytes`);
    assert.ok(gunzipSync(stored).equals(text), 'the stored object is plain gzip, readable by any tool');
    assert.ok((await store.get('seg/1')).equals(text));
    assert.deepEqual(await store.get('seg/1', 7, 100), text.subarray(7, 100));
    assert.equal((await store.get('seg/1', text.length + 5)).length, 0);
    assert.equal((await store.head('seg/1')).size, stored.length, 'sizes are stored (compressed) bytes');
  });

  it('lists only compressed objects, without the suffix, and deletes them', async (t) => {
    const plain = new FileStore(tempDir(t, 'gzip-list'));
    const store = new GzipStore(plain);
    await store.put('p/a', randomBytes(10));
    await store.put('p/b', randomBytes(10));
    await plain.put('p/uncompressed', randomBytes(10));
    assert.deepEqual(
      (await collect(store.list('p/'))).map((o) => o.key),
      ['p/a', 'p/b'],
    );
    await store.delete('p/a');
    await assert.rejects(store.get('p/a'), ObjectNotFoundError);
    await assert.rejects(
      store.get('p/uncompressed'),
      ObjectNotFoundError,
      'a plain object is not a gzip one',
    );
  });

  it('openStore with compression gzip gives the gzip view', async (t) => {
    const store = await openStore(`file://${tempDir(t, 'gzip-open')}`, { compression: 'gzip' });
    await store.put('k', text);
    assert.match(store.url, /\(gzip\)$/);
    assert.ok((await store.get('k')).equals(text));
  });
});
