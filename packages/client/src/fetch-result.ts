/** What one FETCH brings back, decoded: whole records, checked, and what was cut at the end. */
import { type FetchPayloadIndex, recordHeaderBytes } from '@booblik/protocol';

export interface FetchedRecord {
  offset: number;
  /** A view into the response frame; copy it to keep a few bytes without keeping the whole frame. */
  payload: Buffer;
}

export interface FetchResult {
  highWatermark: number;
  /** The offset asked for: the first record's offset. */
  fetchOffset: number;
  /** Whole records only, each checked against its CRC-32C. */
  readonly records: FetchedRecord[];
  /** Whole records returned: records.length, without making the records. */
  readonly count: number;
  /** Record i's payload (offset fetchOffset + i), made on demand: a view into the response frame. */
  payloadAt(i: number): Buffer;
  /** Where the next fetch starts: the fetch offset plus the whole records returned. */
  nextOffset: number;
  /** Bytes of a record cut off at the end: dropped, to be fetched again from its start. */
  truncatedBytes: number;
  /** The cut record's size from its header, or -1 when its size field did not arrive. */
  truncatedRecordBytes: number;
  /** No whole record came back and the next one can never fit in maxBytes. */
  recordExceedsMaxBytes: boolean;
}

/**
 * Nothing per record is made until asked for: the consumer takes payloadAt(i) as it hands records out,
 * so a 1 MiB fetch of small records does not hold thousands of objects alive at once.
 */
export class DecodedFetch implements FetchResult {
  readonly count: number;
  readonly nextOffset: number;
  readonly truncatedBytes: number;
  readonly truncatedRecordBytes: number;
  readonly recordExceedsMaxBytes: boolean;
  private readonly bounds: readonly number[];
  private withOffsets: FetchedRecord[] | undefined;

  constructor(
    readonly highWatermark: number,
    readonly fetchOffset: number,
    /** The FETCH payload the index points into. */
    private readonly payload: Buffer,
    index: FetchPayloadIndex,
  ) {
    this.count = index.count;
    this.bounds = index.bounds;
    this.nextOffset = index.nextOffset;
    this.truncatedBytes = index.truncatedBytes;
    this.truncatedRecordBytes = index.truncatedRecordBytes;
    this.recordExceedsMaxBytes = index.recordExceedsMaxBytes;
  }

  payloadAt(i: number): Buffer {
    return this.payload.subarray(this.bounds[i]! + recordHeaderBytes, this.bounds[i + 1]);
  }

  get records(): FetchedRecord[] {
    if (!this.withOffsets) {
      this.withOffsets = new Array<FetchedRecord>(this.count);
      for (let i = 0; i < this.count; i++) {
        this.withOffsets[i] = { offset: this.fetchOffset + i, payload: this.payloadAt(i) };
      }
    }
    return this.withOffsets;
  }
}
