/**
 * The API table as the code reads it: the rows of rows.ts, checked at load, with the questions the
 * decoder, the broker and the clients ask of it.
 */
import { ApiKey, type ApiVersionRange } from '../api.js';
import { type ApiRow, type ApiVersion, assertTable, buildRow } from './build.js';
import type { Capability } from './capabilities.js';
import { apiRowDefs } from './rows.js';

export type { ApiRow, ApiVersion } from './build.js';

/** Every row, by apiKey. */
export const apiRows: readonly ApiRow[] = Object.freeze(
  Object.entries(ApiKey).map(([name, apiKey]) => buildRow(name, apiKey, apiRowDefs[apiKey])),
);

/** The highest apiKey: arrays indexed by apiKey (the broker's handlers and counters) have one more slot. */
export const apiKeyMax: number = Math.max(...apiRows.map((r) => r.apiKey));

/** Rows indexed by apiKey, holes undefined: one array read per request (a row's versions, by version - 1). */
const rowsByKey: (ApiRow | undefined)[] = Array.from({ length: apiKeyMax + 1 }, () => undefined);
for (const row of apiRows) {
  assertTable(rowsByKey[row.apiKey] === undefined, `apiKey ${row.apiKey} has two rows`);
  assertTable(
    apiRows.filter((r) => r.metricLabel === row.metricLabel).length === 1,
    `metric label ${row.metricLabel} is not one API's`,
  );
  rowsByKey[row.apiKey] = row;
}

export function apiRowOf(apiKey: number): ApiRow | undefined {
  return rowsByKey[apiKey];
}

/** The version `version` of `apiKey`, or undefined when the API has no such version (or is unknown). */
export function apiVersionOf(apiKey: number, version: number): ApiVersion | undefined {
  return rowsByKey[apiKey]?.versions[version - 1];
}

/**
 * Whether a broker that answered `ranges` (API_VERSIONS: it serves every version of each range)
 * serves a version of `apiKey` this package knows with `capability`.
 */
export function speaks(ranges: readonly ApiVersionRange[], apiKey: number, capability: Capability): boolean {
  const range = ranges.find((r) => r.apiKey === apiKey);
  if (range === undefined) return false;
  return (apiRowOf(apiKey)?.versions ?? []).some(
    (v) => v.capabilities[capability] && v.version >= range.minVersion && v.version <= range.maxVersion,
  );
}

/** This package's versions as API_VERSIONS ranges, by key: what a broker answers API_VERSIONS. */
export function supportedApiVersions(): ApiVersionRange[] {
  return apiRows.map((row) => ({
    apiKey: row.apiKey,
    minVersion: row.versions[0]!.version,
    maxVersion: row.versions[row.versions.length - 1]!.version,
  }));
}
