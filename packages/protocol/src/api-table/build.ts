/** A row of rows.ts made into what the code reads, checked as it is made. */
import type { ApiKeyValue } from '../api.js';
import { type Capabilities, capabilities, type OperationValue } from './capabilities.js';
import type { RequestDecoder, RowDef } from './rows.js';

/** One version of an API: how its request decodes, and what it means. */
export interface ApiVersion {
  readonly apiKey: ApiKeyValue;
  readonly version: number;
  readonly decode: RequestDecoder<unknown>;
  readonly capabilities: Capabilities;
}

export interface ApiRow {
  readonly apiKey: ApiKeyValue;
  /** As in ApiKey: PRODUCE, FETCH, ... */
  readonly name: string;
  readonly operation: OperationValue;
  /** The `api` label of booblik_requests_total. */
  readonly metricLabel: string;
  readonly beforeAuthentication: boolean;
  /** Lowest first, every version from 1 to the highest. */
  readonly versions: readonly ApiVersion[];
}

export function assertTable(condition: boolean, message: string): void {
  if (!condition) throw new Error(`API table: ${message}`);
}

export function buildRow(name: string, apiKey: ApiKeyValue, def: RowDef): ApiRow {
  const numbers = Object.keys(def.versions).map(Number);
  const versions = numbers.map((version, i): ApiVersion => {
    assertTable(version === i + 1, `${name} v${version}: versions run from 1 with no gap`);
    const { decode, has } = def.versions[version]!;
    const flags = capabilities(has);
    assertTable(
      !(flags.followsRoutes && flags.proxied),
      `${name} v${version}: follows routes and is proxied`,
    );
    return Object.freeze({ apiKey, version, decode, capabilities: flags });
  });
  assertTable(versions.length > 0, `${name} has no version`);
  return Object.freeze({
    apiKey,
    name,
    operation: def.operation,
    metricLabel: def.metricLabel,
    beforeAuthentication: def.beforeAuthentication,
    versions: Object.freeze(versions),
  });
}
