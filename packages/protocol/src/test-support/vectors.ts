import { readFileSync } from 'node:fs';

/**
 * Reads one of the protocol's golden-vector TSVs (`crc32c.tsv`, `partitioner-fnv1a.tsv`), for the
 * tests of any package (`@booblik/protocol/testing`): `#` lines are comments, the last comment
 * is the header, fields are hex.
 */
export function readVectors(file: string): Record<string, string>[] {
  const text = readFileSync(new URL(`../../vectors/${file}`, import.meta.url), 'utf8');
  const lines = text.split('\n').filter((l) => l.length > 0);
  const comments = lines.filter((l) => l.startsWith('#'));
  const header = comments[comments.length - 1]!.slice(1).trim().split('\t');
  return lines
    .filter((l) => !l.startsWith('#'))
    .map((l) => {
      const fields = l.split('\t');
      return Object.fromEntries(header.map((h, i) => [h, fields[i] ?? '']));
    });
}
