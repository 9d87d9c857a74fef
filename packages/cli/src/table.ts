import { TABLE_CELL_CHARS_MAX } from './constants.js';

/**
 * Rows of cells as aligned columns, two spaces apart. A cell longer than TABLE_CELL_CHARS_MAX is
 * cut with an ellipsis so the other columns stay readable; the last column is neither padded nor
 * cut (it widens no other row).
 */
export function formatTable(rows: string[][]): string {
  const cut = rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : shorten(cell))));
  const widths: number[] = [];
  for (const row of cut) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, charCount(cell));
    });
  }
  return cut
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - charCount(cell))))
        .join('  '),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** Characters as a reader counts them (code points), so a cut never splits a surrogate pair. */
function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function shorten(cell: string): string {
  if (charCount(cell) <= TABLE_CELL_CHARS_MAX) return cell;
  return `${[...cell].slice(0, TABLE_CELL_CHARS_MAX - 1).join('')}…`;
}
