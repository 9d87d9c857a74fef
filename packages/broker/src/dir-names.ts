import fs from 'node:fs';
import path from 'node:path';
import { partitionDirName } from '@booblik/log';
import { topicNameCharsMax, topicPartitionsMax } from '@booblik/protocol';

/**
 * Enough for any partition directory a valid spec can need: a name of 249 characters of 4 bytes
 * each in UTF-8, and "-9999". A file system that takes this many takes every name.
 */
export const DIR_NAME_BYTES_NEEDED_MAX = Buffer.byteLength(
  partitionDirName('\u{10000}'.repeat(topicNameCharsMax), topicPartitionsMax - 1),
);
/** Probe names carry a "+", which no topic name has: a probe left by a crash is never a partition. */
const PROBE_PREFIX = 'booblik-name-probe+';

/**
 * The longest directory name, in bytes, that `dir`'s file system takes (capped at what a topic can
 * need), found by making and removing probe directories in it: Node does not expose pathconf's
 * NAME_MAX, and the usual 255 bytes is not every file system's (eCryptfs takes 143).
 */
export function dirNameBytesMax(dir: string): number {
  const fits = (bytes: number): boolean => {
    const probe = path.join(dir, `${PROBE_PREFIX}${process.pid}-`.padEnd(bytes, 'x'));
    try {
      fs.mkdirSync(probe);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENAMETOOLONG') return false;
      if (code !== 'EEXIST') throw error;
    }
    fs.rmdirSync(probe);
    return true;
  };
  if (fits(DIR_NAME_BYTES_NEEDED_MAX)) return DIR_NAME_BYTES_NEEDED_MAX;
  // Bisect between a length every file system takes and one this one refuses.
  let low = PROBE_PREFIX.length + 16;
  let high = DIR_NAME_BYTES_NEEDED_MAX;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid;
  }
  return low;
}

/**
 * Why the data directory cannot hold a topic's partition directories (`<name>-<partition>`, the
 * longest being the last partition's), or null. Names the field, the bytes needed and the limit.
 */
export function dirNameProblem(name: string, partitions: number, bytesMax: number): string | null {
  const longest = partitionDirName(name, Math.max(0, partitions - 1));
  const bytes = Buffer.byteLength(longest);
  if (bytes <= bytesMax) return null;
  const shown = [...name].length > 40 ? `${[...name].slice(0, 40).join('')}...` : name;
  return `name: ${JSON.stringify(shown)} needs a partition directory of ${bytes} bytes in UTF-8 ("<name>-${partitions - 1}"), expected at most ${bytesMax} (the longest file name the data directory's file system takes)`;
}
