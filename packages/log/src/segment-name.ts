/** Segment files are named by their base offset as 20 decimal digits: `00000000000000000000.log`. */

const SEGMENT_FILE = /^(\d{20})\.log$/;

export function segmentFileName(baseOffset: number): string {
  return `${String(baseOffset).padStart(20, '0')}.log`;
}

/** The base offset a file name carries, or null when the file is not a segment. */
export function parseSegmentFileName(name: string): number | null {
  const match = SEGMENT_FILE.exec(name);
  if (!match) return null;
  const offset = Number(match[1]);
  return Number.isSafeInteger(offset) ? offset : null;
}

/** A partition's directory name: `<topic>-<partition>`. */
export function partitionDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}
