import { readFileSync } from 'node:fs';
import type { Connection } from '@booblik/client';
import { ApiKey } from '@booblik/protocol';

/** Whether the broker answers METADATA v4: each partition's epoch and replicas with zones and lag. */
export async function speaksMetadataV4(connection: Connection): Promise<boolean> {
  const versions = await connection.apiVersions();
  return (versions.find((v) => v.apiKey === ApiKey.METADATA)?.maxVersion ?? 0) >= 4;
}

/** This command's version: the one in its package.json, installed beside dist/ by npm. */
export function cliVersion(): string {
  const file = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
