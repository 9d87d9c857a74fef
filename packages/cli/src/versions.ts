import { readFileSync } from 'node:fs';
import type { Connection } from '@booblik/client';
import { ApiKey } from '@booblik/protocol';

/** The highest METADATA version the broker answers (4: epochs and replicas; 5: where offsets come from). */
export async function metadataVersion(connection: Connection): Promise<number> {
  const versions = await connection.apiVersions();
  return versions.find((v) => v.apiKey === ApiKey.METADATA)?.maxVersion ?? 1;
}

/** Whether the broker answers METADATA v4: each partition's epoch and replicas with zones and lag. */
export async function speaksMetadataV4(connection: Connection): Promise<boolean> {
  return (await metadataVersion(connection)) >= 4;
}

/** This command's version: the one in its package.json, installed beside dist/ by npm. */
export function cliVersion(): string {
  const file = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
