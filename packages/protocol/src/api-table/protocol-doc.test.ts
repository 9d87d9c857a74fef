import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { capabilityNames } from './capabilities.js';
import { apiRows } from './table.js';

/** docs/protocol.md, from dist/api-table/ (the test runs built). */
const doc = readFileSync(new URL('../../../../docs/protocol.md', import.meta.url), 'utf8');

/** The table rows (after the header and its rule) of the section titled `heading`. */
function tableOf(heading: string): string[][] {
  const start = doc.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/protocol.md has no "${heading}"`);
  const rows: string[][] = [];
  for (const line of doc.slice(start + heading.length + 2).split('\n')) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|')) continue;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(2);
}

describe('docs/protocol.md says what the API table says', () => {
  it('"API keys and versions": each key, its name, its versions and how it is authorized', () => {
    const documented = tableOf('### API keys and versions').map(([key, name, versions, operation]) => ({
      apiKey: Number(key),
      name,
      versions: versions!.replaceAll('**', ''),
      operation,
    }));
    assert.deepEqual(
      documented,
      apiRows.map((row) => ({
        apiKey: row.apiKey,
        name: row.name,
        versions: row.versions.map((v) => v.version).join(', '),
        operation: row.operation,
      })),
    );
  });

  it('"What a version means": each capability and the versions that have it', () => {
    const documented = tableOf('### What a version means').map(([name, versions]) => [
      name!.replaceAll('`', ''),
      versions,
    ]);
    const table = capabilityNames.map((name) => [
      name,
      apiRows
        .map((row) => ({
          row,
          numbers: row.versions.filter((v) => v.capabilities[name]).map((v) => v.version),
        }))
        .filter(({ numbers }) => numbers.length > 0)
        .map(({ row, numbers }) => `${row.name} ${numbers.join(', ')}`)
        .join('; '),
    ]);
    assert.deepEqual(documented, table);
  });
});
