import { readFileSync } from 'node:fs';
import type { Connection } from '@booblik/client';
import { ApiKey, type Capability, speaks } from '@booblik/protocol';

/**
 * The METADATA capabilities the broker serves, by the API table: `replicaRoutes` (each partition's
 * epoch and replicas with zones and lag), `offsetSources` (where its offsets come from).
 */
export async function metadataSpeaks(connection: Connection): Promise<(capability: Capability) => boolean> {
  const versions = await connection.apiVersions();
  return (capability) => speaks(versions, ApiKey.METADATA, capability);
}

/** This command's version: the one in its package.json, installed beside dist/ by npm. */
export function cliVersion(): string {
  const file = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
