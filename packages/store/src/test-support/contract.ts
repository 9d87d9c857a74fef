import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import {
  InvalidKeyError,
  ObjectExistsError,
  ObjectNotFoundError,
  StoreRefusedError,
  StoreUnavailableError,
} from '../errors.js';
import type { ObjectInfo, ObjectStore } from '../object-store.js';

/** Makes a fresh, empty store for one test (gone after it); `listPageSize` small to make listings page. */
export type StoreFactory = (t: TestContext, options: { listPageSize?: number }) => Promise<ObjectStore>;

export async function collect(listing: AsyncIterable<ObjectInfo>): Promise<ObjectInfo[]> {
  const found: ObjectInfo[] = [];
  for await (const info of listing) found.push(info);
  return found;
}

/** Every byte value, then random bytes: a store that mangles any byte (text decoding, CRLF) fails. */
function binary(size: number): Buffer {
  const bytes = randomBytes(size);
  for (let i = 0; i < Math.min(256, size); i++) bytes[i] = i;
  return bytes;
}

/** The behaviour every store promises (object-store.ts), run against each implementation. */
export function storeContract(name: string, open: StoreFactory): void {
  const withStore = async (
    t: TestContext,
    options: { listPageSize?: number },
    body: (store: ObjectStore) => Promise<void>,
  ) => {
    const store = await open(t, options);
    try {
      await body(store);
    } finally {
      store.close();
    }
  };

  describe(`${name}: the object store contract`, () => {
    it('put then get returns the same bytes, for empty, small and 3 MiB binary objects', (t) =>
      withStore(t, {}, async (store) => {
        for (const [key, bytes] of [
          ['empty', Buffer.alloc(0)],
          ['small', binary(300)],
          ['nested/deeper/large', binary(3 << 20)],
        ] as const) {
          await store.put(key, bytes);
          assert.ok((await store.get(key)).equals(bytes), `${key} came back different`);
        }
      }));

    it('putFile streams a file into an object: same bytes; ifAbsent holds; a missing file stores nothing', (t) =>
      withStore(t, {}, async (store) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-putfile-'));
        t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
        const file = path.join(dir, 'segment');
        const bytes = binary(5 << 20);
        fs.writeFileSync(file, bytes);
        const { etag } = await store.putFile('seg/1', file, { ifAbsent: true });
        assert.ok((await store.get('seg/1')).equals(bytes));
        assert.equal((await store.head('seg/1')).etag, etag);
        await assert.rejects(store.putFile('seg/1', file, { ifAbsent: true }), ObjectExistsError);
        await assert.rejects(store.putFile('seg/2', path.join(dir, 'missing')), (error: unknown) => {
          assert.ok(error instanceof StoreRefusedError, `got ${error}`);
          assert.match(error.message, /cannot read .*missing/);
          return true;
        });
        await assert.rejects(store.head('seg/2'), ObjectNotFoundError);
      }));

    it("put and putFile with the bytes' SHA-256 store the same bytes", (t) =>
      withStore(t, {}, async (store) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-putsha-'));
        t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
        const file = path.join(dir, 'segment');
        const bytes = binary(5 << 20);
        fs.writeFileSync(file, bytes);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        await store.putFile('seg/1', file, { sha256 });
        await store.put('seg/2', bytes, { sha256 });
        assert.ok((await store.get('seg/1')).equals(bytes));
        assert.ok((await store.get('seg/2')).equals(bytes));
      }));

    it('ranged get: first byte, last byte, a middle slice; past the end is cut, at or after it empty', (t) =>
      withStore(t, {}, async (store) => {
        const bytes = binary(1000);
        await store.put('r', bytes);
        assert.deepEqual(await store.get('r', 0, 1), bytes.subarray(0, 1));
        assert.deepEqual(await store.get('r', 999, 1000), bytes.subarray(999));
        assert.deepEqual(await store.get('r', 999), bytes.subarray(999));
        assert.deepEqual(await store.get('r', 10, 510), bytes.subarray(10, 510));
        assert.deepEqual(await store.get('r', 990, 5000), bytes.subarray(990), 'a range past the end is cut');
        assert.equal((await store.get('r', 1000, 1010)).length, 0, 'a range starting at the end is empty');
        assert.equal((await store.get('r', 5000)).length, 0, 'a range starting past the end is empty');
        assert.equal((await store.get('r', 7, 7)).length, 0, 'an empty range is empty');
        await store.put('zero', Buffer.alloc(0));
        assert.equal((await store.get('zero', 0, 10)).length, 0, 'any range of an empty object is empty');
      }));

    it('get and head of a missing key fail with ObjectNotFoundError, not retriable', (t) =>
      withStore(t, {}, async (store) => {
        for (const call of [
          () => store.get('missing'),
          () => store.get('missing', 0, 10),
          () => store.head('no/such'),
        ]) {
          await assert.rejects(call, (error: unknown) => {
            assert.ok(error instanceof ObjectNotFoundError, `got ${error}`);
            assert.equal(error.retriable, false);
            return true;
          });
        }
        await assert.rejects(store.get('missing', 3, 3), ObjectNotFoundError, 'an empty range of nothing');
      }));

    it('list with a prefix returns every matching key once, in key order, across several pages', (t) =>
      withStore(t, { listPageSize: 2 }, async (store) => {
        const inside = ['p/a', 'p/b/1', 'p/b/2', 'p/b/3/x', 'p/c', 'p/d-1', 'p/d-2', 'p/e'];
        const outside = ['q/a', 'p-sibling', 'pa'];
        for (const key of [...outside, ...inside].reverse()) await store.put(key, Buffer.from(key));
        const listed = await collect(store.list('p/'));
        assert.deepEqual(
          listed.map((o) => o.key),
          [...inside].sort(),
        );
        for (const o of listed) assert.equal(o.size, Buffer.byteLength(o.key));
        assert.deepEqual(
          (await collect(store.list('p/d-'))).map((o) => o.key),
          ['p/d-1', 'p/d-2'],
          'a prefix ending inside a name',
        );
        assert.equal(
          (await collect(store.list())).length,
          inside.length + outside.length,
          'no prefix lists all',
        );
        assert.deepEqual(await collect(store.list('nothing/')), []);
      }));

    it('delete removes the object from get, head and list; deleting it again is not an error', (t) =>
      withStore(t, {}, async (store) => {
        await store.put('d/gone', Buffer.from('x'));
        await store.put('d/kept', Buffer.from('y'));
        await store.delete('d/gone');
        await assert.rejects(store.get('d/gone'), ObjectNotFoundError);
        await assert.rejects(store.head('d/gone'), ObjectNotFoundError);
        assert.deepEqual(
          (await collect(store.list('d/'))).map((o) => o.key),
          ['d/kept'],
        );
        await store.delete('d/gone');
        await store.delete('never/was');
      }));

    it('head gives the size and the etag put returned; replacing the object changes the etag', (t) =>
      withStore(t, {}, async (store) => {
        const first = await store.put('h', binary(1234));
        const info = await store.head('h');
        assert.equal(info.key, 'h');
        assert.equal(info.size, 1234);
        assert.equal(info.etag, first.etag);
        assert.ok(
          Math.abs(info.modifiedMs - Date.now()) < 10 * 60_000,
          `modifiedMs ${info.modifiedMs} is not now`,
        );
        const second = await store.put('h', binary(1234));
        assert.notEqual(second.etag, first.etag);
        assert.equal((await store.head('h')).etag, second.etag);
        const [listed] = await collect(store.list('h'));
        assert.equal(listed?.etag, second.etag, 'list shows the same etag as head');
      }));

    it('a put replacing an object is never seen torn: readers get the old or the new bytes whole', (t) =>
      withStore(t, {}, async (store) => {
        const size = 4 << 20;
        const versions = [Buffer.alloc(size, 0xaa), Buffer.alloc(size, 0xbb), Buffer.alloc(size, 0xcc)];
        await store.put('atomic', versions[0]!);
        let writing = true;
        const writes = (async () => {
          for (const v of versions.slice(1)) await store.put('atomic', v);
          writing = false;
        })();
        let reads = 0;
        let refused = 0;
        while (writing || reads === 0) {
          let got: Buffer;
          try {
            got = await store.get('atomic');
          } catch (error) {
            // "None" is allowed: an answer the SDK's checksum check caught as inconsistent is a
            // retriable failure, never bytes.
            if (!(error instanceof StoreUnavailableError)) throw error;
            refused++;
            continue;
          }
          reads++;
          assert.ok(
            versions.some((v) => v.equals(got)),
            `read ${reads} is no whole version (${got.length} bytes, first ${got[0]}, last ${got.at(-1)})`,
          );
        }
        assert.ok(refused <= reads, `${refused} reads failed and only ${reads} succeeded`);
        await writes;
        assert.ok((await store.get('atomic')).equals(versions[2]!));
      }));

    it('put ifAbsent: the first writer wins, a later or concurrent one gets ObjectExistsError', (t) =>
      withStore(t, {}, async (store) => {
        await store.put('m/1', Buffer.from('first'), { ifAbsent: true });
        await assert.rejects(store.put('m/1', Buffer.from('second'), { ifAbsent: true }), ObjectExistsError);
        assert.equal((await store.get('m/1')).toString(), 'first', 'the loser wrote nothing');
        const racers = await Promise.allSettled(
          ['a', 'b', 'c', 'd'].map((who) => store.put('m/2', Buffer.from(who), { ifAbsent: true })),
        );
        const won = racers.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `exactly one racer wins, got ${won.length}`);
        for (const r of racers) if (r.status === 'rejected') assert.ok(r.reason instanceof ObjectExistsError);
        assert.deepEqual(
          (await collect(store.list('m/'))).map((o) => o.key),
          ['m/1', 'm/2'],
          'no leftovers from the losers',
        );
      }));

    it('keys and ranges no store accepts are refused before any I/O', (t) =>
      withStore(t, {}, async (store) => {
        for (const key of [
          '',
          '/abs',
          'a//b',
          'a/',
          '../up',
          'a/../b',
          './a',
          'a/.hidden',
          'nul\0',
          'x'.repeat(1025),
        ]) {
          await assert.rejects(
            store.put(key, Buffer.from('x')),
            InvalidKeyError,
            `put ${JSON.stringify(key)}`,
          );
          await assert.rejects(store.get(key), InvalidKeyError, `get ${JSON.stringify(key)}`);
        }
        await store.put('ok', Buffer.from('abc'));
        await assert.rejects(store.get('ok', -1), InvalidKeyError);
        await assert.rejects(store.get('ok', 2, 1), InvalidKeyError);
        await assert.rejects(store.get('ok', 0.5), InvalidKeyError);
        await assert.rejects(collect(store.list('/x')), InvalidKeyError);
      }));
  });
}
