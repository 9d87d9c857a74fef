import { createHash } from 'node:crypto';
import fs from 'node:fs';

/** SHA-256 of a file's bytes, as hex, read as a stream (a segment need not fit in memory). */
export async function fileChecksum(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk);
  return hash.digest('hex');
}

export function bytesChecksum(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
