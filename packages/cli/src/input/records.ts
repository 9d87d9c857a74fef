/**
 * Records from a byte stream (stdin), chunked any way at all: one per line, or length-prefixed
 * (`int32 length` big-endian, then that many bytes, as on the PRODUCE wire). Nothing beyond one
 * record is held in memory, and no record may exceed INPUT_RECORD_BYTES_MAX.
 */
import { frameBytesMax, requestHeaderBytes } from '@booblik/protocol';
import { INPUT_RECORD_BYTES_MAX, LENGTH_PREFIX_BYTES } from '../constants.js';
import { InputError } from '../errors.js';

/**
 * The largest record one PRODUCE to `topic` can carry and one FETCH answer can return: the least of
 * INPUT_RECORD_BYTES_MAX and the frame less PRODUCE's fields (header, topic string, partition, ack,
 * record count, the record's size). A topic whose segments are smaller holds less: the broker says so.
 */
export function recordBytesMaxFor(topic: string): number {
  const produceFieldsBytes = requestHeaderBytes + 2 + Buffer.byteLength(topic) + 4 + 1 + 4 + 4;
  return Math.min(INPUT_RECORD_BYTES_MAX, frameBytesMax - produceFieldsBytes);
}

const NEWLINE = 0x0a;

/** Lines without their '\n' (a '\r' before it is kept: records are bytes). A last line without '\n' counts. */
export async function* readLines(
  input: AsyncIterable<Buffer | string>,
  recordBytesMax = INPUT_RECORD_BYTES_MAX,
): AsyncGenerator<Buffer> {
  let pieces: Buffer[] = [];
  let carried = 0;
  let line = 1;
  for await (const raw of input) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      if (carried + nl - start > recordBytesMax) throw tooLong(line, recordBytesMax);
      const piece = chunk.subarray(start, nl);
      yield carried === 0 ? piece : Buffer.concat([...pieces, piece]);
      pieces = [];
      carried = 0;
      start = nl + 1;
      line++;
    }
    if (start < chunk.length) {
      carried += chunk.length - start;
      if (carried > recordBytesMax) throw tooLong(line, recordBytesMax);
      pieces.push(chunk.subarray(start));
    }
  }
  if (carried > 0) yield Buffer.concat(pieces);
}

function tooLong(line: number, max: number): InputError {
  return new InputError(
    `line ${line} is longer than ${max} bytes, the most one record can hold (one PRODUCE frame and one ` +
      'FETCH answer hold 8 MiB with their headers)',
  );
}

/** Records as `int32 length, bytes`; input that ends inside a record is an error, never a short record. */
export async function* readLengthPrefixed(
  input: AsyncIterable<Buffer | string>,
  recordBytesMax = INPUT_RECORD_BYTES_MAX,
): AsyncGenerator<Buffer> {
  const buffered = new ByteQueue();
  let index = 1;
  let need = -1; // the current record's length once its prefix arrived
  for await (const raw of input) {
    buffered.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
    for (;;) {
      if (need < 0) {
        if (buffered.length < LENGTH_PREFIX_BYTES) break;
        need = buffered.take(LENGTH_PREFIX_BYTES).readInt32BE(0);
        if (need < 0 || need > recordBytesMax) {
          throw new InputError(
            `record ${index}: length prefix ${need}, expected 0..${recordBytesMax} (the most one record can hold)`,
          );
        }
      }
      if (buffered.length < need) break;
      yield buffered.take(need);
      need = -1;
      index++;
    }
  }
  if (need >= 0) {
    throw new InputError(
      `input ends inside record ${index}: ${buffered.length} of its ${need} bytes arrived`,
    );
  }
  if (buffered.length > 0) {
    throw new InputError(`input ends inside the length prefix of record ${index} (${buffered.length} bytes)`);
  }
}

/** Chunks in arrival order; take(n) copies only when a record spans chunks. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  take(n: number): Buffer {
    this.length -= n;
    const first = this.chunks[0];
    if (first && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const head = this.chunks[0]!;
      const part = Math.min(head.length, n - at);
      head.copy(out, at, 0, part);
      at += part;
      if (part === head.length) this.chunks.shift();
      else this.chunks[0] = head.subarray(part);
    }
    return out;
  }
}
