import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { EPOCH_HISTORY_FILE, EpochHistory } from './epoch-history.js';
import { EpochHistoryError } from './errors.js';

const fileOf = (dir: string) => fs.readFileSync(path.join(dir, EPOCH_HISTORY_FILE), 'utf8');

describe('epoch history', () => {
  it('a partition without the file has an empty history: latest epoch 0, every record epoch 0', (t) => {
    const history = EpochHistory.open(tempDir(t), 0);
    assert.equal(history.latestEpoch, 0);
    assert.deepEqual(history.entries, []);
    assert.equal(history.epochAt(123), 0);
    assert.deepEqual(history.endOf(5, 40), { epoch: 0, endOffset: 40 });
  });

  it('begin is durable: a reopen reads the same entries, one "epoch start" line each', (t) => {
    const dir = tempDir(t);
    const history = EpochHistory.open(dir, 0);
    history.begin(1, 0);
    history.begin(1, 50); // the same epoch: nothing new
    history.begin(3, 10);
    history.begin(4, 25);
    assert.equal(fileOf(dir), '1 0\n3 10\n4 25\n');
    const again = EpochHistory.open(dir, 30);
    assert.deepEqual(again.entries, [
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
      { epoch: 4, startOffset: 25 },
    ]);
    assert.equal(again.latestEpoch, 4);
    assert.deepEqual(fs.readdirSync(dir), [EPOCH_HISTORY_FILE], 'no temporary file left');
  });

  it('begin refuses an older epoch or a start before the latest entry’s, changing nothing', (t) => {
    const dir = tempDir(t);
    const history = EpochHistory.open(dir, 0);
    history.begin(2, 10);
    assert.throws(() => history.begin(1, 20), RangeError);
    assert.throws(() => history.begin(3, 9), RangeError);
    assert.throws(() => history.begin(0, 20), RangeError);
    assert.throws(() => history.begin(3, -1), RangeError);
    assert.deepEqual(history.entries, [{ epoch: 2, startOffset: 10 }]);
    assert.equal(fileOf(dir), '2 10\n');
  });

  it('an epoch that began where the latest began replaces it: the latest held no record', (t) => {
    const history = EpochHistory.open(tempDir(t), 0);
    history.begin(1, 0);
    history.begin(2, 5);
    history.begin(3, 5);
    assert.deepEqual(history.entries, [
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 5 },
    ]);
    assert.equal(history.epochAt(5), 3);
  });

  it('epochAt gives the epoch of the entry with the largest start at or below the offset', (t) => {
    const history = EpochHistory.open(tempDir(t), 0);
    history.begin(2, 5);
    history.begin(4, 9);
    const at = [0, 4, 5, 8, 9, 100].map((o) => history.epochAt(o));
    assert.deepEqual(at, [0, 0, 2, 2, 4, 4]);
  });

  it('endOf answers as OffsetsForLeaderEpoch: the largest epoch at or below, ending where the next starts', (t) => {
    const history = EpochHistory.open(tempDir(t), 0);
    history.begin(2, 5);
    history.begin(4, 9);
    history.begin(7, 20);
    const logEnd = 31;
    assert.deepEqual(history.endOf(2, logEnd), { epoch: 2, endOffset: 9 });
    assert.deepEqual(history.endOf(3, logEnd), { epoch: 2, endOffset: 9 }, 'an epoch this log never had');
    assert.deepEqual(history.endOf(4, logEnd), { epoch: 4, endOffset: 20 });
    assert.deepEqual(
      history.endOf(7, logEnd),
      { epoch: 7, endOffset: logEnd },
      'the latest ends at the log end',
    );
    assert.deepEqual(history.endOf(9, logEnd), { epoch: 7, endOffset: logEnd });
    assert.deepEqual(history.endOf(1, logEnd), { epoch: 0, endOffset: 5 }, 'before the first: epoch 0');
  });

  it('truncateTo drops the entries starting at or after the offset, durably', (t) => {
    const dir = tempDir(t);
    const history = EpochHistory.open(dir, 0);
    history.begin(1, 0);
    history.begin(2, 10);
    history.begin(3, 15);
    history.truncateTo(15);
    assert.equal(history.latestEpoch, 2);
    history.truncateTo(11);
    assert.equal(fileOf(dir), '1 0\n2 10\n');
    history.truncateTo(10);
    assert.equal(fileOf(dir), '1 0\n');
    assert.deepEqual(EpochHistory.open(dir, 100).entries, [{ epoch: 1, startOffset: 0 }]);
  });

  it('open drops entries that start past the log end (a crash after the log was cut) and rewrites the file', (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, EPOCH_HISTORY_FILE), '1 0\n2 10\n3 12\n');
    const history = EpochHistory.open(dir, 10);
    assert.deepEqual(history.entries, [
      { epoch: 1, startOffset: 0 },
      { epoch: 2, startOffset: 10 },
    ]);
    assert.equal(fileOf(dir), '1 0\n2 10\n');
  });

  it('a damaged file is a clear error naming the line, and the file is left as found', (t) => {
    const cases: [string, RegExp][] = [
      ['1 0\n2 x\n', /line 2: "2 x", expected "epoch startOffset"/],
      ['1 0\n1 5\n', /line 2: epoch 1, expected > 1/],
      ['0 0\n', /line 1: epoch 0, expected > 0/],
      ['1 10\n2 5\n', /line 2: start 5, expected >= 10/],
      ['1 0\n2 1', /the last line is not ended/],
      ['1  0\n', /line 1/],
    ];
    for (const [text, message] of cases) {
      const dir = tempDir(t);
      fs.writeFileSync(path.join(dir, EPOCH_HISTORY_FILE), text);
      assert.throws(
        () => EpochHistory.open(dir, 100),
        (e: unknown) => e instanceof EpochHistoryError && message.test(e.message),
        JSON.stringify(text),
      );
      assert.equal(fileOf(dir), text);
    }
  });
});

describe('epoch history: spans and adoption', () => {
  it('spanAt: the epoch of a record and where the next epoch starts, null for the latest', (t) => {
    const history = EpochHistory.open(tempDir(t), 0);
    assert.deepEqual(history.spanAt(7), { epoch: 0, nextStartOffset: null });
    history.begin(2, 10);
    history.begin(5, 30);
    assert.deepEqual(history.spanAt(0), { epoch: 0, nextStartOffset: 10 });
    assert.deepEqual(history.spanAt(10), { epoch: 2, nextStartOffset: 30 });
    assert.deepEqual(history.spanAt(29), { epoch: 2, nextStartOffset: 30 });
    assert.deepEqual(history.spanAt(30), { epoch: 5, nextStartOffset: null });
  });

  it('adopt takes a history kept elsewhere, durably; one that breaks the rules changes nothing', (t) => {
    const dir = tempDir(t);
    const history = EpochHistory.open(dir, 100);
    assert.throws(
      () =>
        history.adopt([
          { epoch: 2, startOffset: 5 },
          { epoch: 2, startOffset: 9 },
        ]),
      /epoch: 2/,
    );
    assert.throws(
      () =>
        history.adopt([
          { epoch: 1, startOffset: 5 },
          { epoch: 2, startOffset: 4 },
        ]),
      /startOffset: 4/,
    );
    assert.deepEqual(history.entries, []);
    history.adopt([
      { epoch: 1, startOffset: 5 },
      { epoch: 3, startOffset: 5 },
    ]);
    assert.equal(fileOf(dir), '1 5\n3 5\n');
    assert.throws(() => history.adopt([{ epoch: 4, startOffset: 6 }]), /holds 2 entries already/);
  });
});
