import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROGRESS_AFTER_RECORDS, PROGRESS_INTERVAL_MS } from './constants.js';
import { Progress } from './progress.js';

describe('progress line', () => {
  it('stays silent for small inputs and off a terminal; redraws at most once per interval', () => {
    let time = 0;
    const lines: string[] = [];
    const off = new Progress(
      (t) => lines.push(t),
      false,
      () => time,
    );
    off.update(PROGRESS_AFTER_RECORDS * 2, 0);
    assert.equal(lines.length, 0, 'not a terminal: no line');
    const on = new Progress(
      (t) => lines.push(t),
      true,
      () => time,
    );
    on.update(PROGRESS_AFTER_RECORDS - 1, 0);
    assert.equal(lines.length, 0, 'small input: no line');
    time = 1000;
    on.update(PROGRESS_AFTER_RECORDS, 5000);
    on.update(PROGRESS_AFTER_RECORDS + 1, 5000);
    assert.equal(lines.length, 1, 'one redraw per interval');
    assert.match(lines[0]!, /10,000 records sent, 5,000 acknowledged \(5,000\/s\)/);
    time += PROGRESS_INTERVAL_MS;
    on.update(PROGRESS_AFTER_RECORDS + 2, 6000);
    assert.equal(lines.length, 2);
    on.done();
    assert.equal(lines[2], '\r\x1b[K');
  });
});
