import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TABLE_CELL_CHARS_MAX } from './constants.js';
import { formatTable } from './table.js';

describe('tables', () => {
  it('one 249-character name does not widen every row: it is cut with an ellipsis', () => {
    const long = 'x'.repeat(249);
    const lines = formatTable([
      ['TOPIC', 'PARTITION', 'HIGH_WATERMARK'],
      [long, '0', '12'],
      ['short', '1', '3'],
    ]).split('\n');
    assert.equal(lines[1], `${'x'.repeat(TABLE_CELL_CHARS_MAX - 1)}…  0          12`);
    assert.equal(lines[2], `short${' '.repeat(TABLE_CELL_CHARS_MAX - 5)}  1          3`);
    assert.ok(
      lines.every((l) => l.length < 80),
      'every row fits a terminal',
    );
  });

  it('the last column is kept whole, and a cut never splits a character', () => {
    const emoji = '🚀'.repeat(60);
    const [, row] = formatTable([
      ['A', 'B'],
      [emoji, 'y'.repeat(100)],
    ]).split('\n');
    assert.equal(row, `${'🚀'.repeat(TABLE_CELL_CHARS_MAX - 1)}…  ${'y'.repeat(100)}`);
  });

  it('cells within the limit are padded to their column as before', () => {
    assert.equal(
      formatTable([
        ['NAME', 'N'],
        ['ab', '1'],
      ]),
      'NAME  N\nab    1\n',
    );
  });
});
