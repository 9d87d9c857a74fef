/**
 * Every limit of the wire protocol, in one place, each with its reason. Relations between them are
 * asserted at load, so a change that breaks one fails at startup rather than in production.
 */

/** Correlation ids are non-negative int32s; after the last one a connection's count starts again at 1. */
export const CORRELATION_ID_MAX = 0x7fff_ffff;

/** Request and response header sizes after the int32 length prefix. */
export const requestHeaderBytes = 8; // apiKey int16, apiVersion int16, correlationId int32
export const responseHeaderBytes = 6; // correlationId int32, errorCode int16
export const lengthPrefixBytes = 4;

/**
 * Largest frame either side accepts (bytes after the length prefix). A length prefix beyond it means
 * the stream can no longer be trusted, so the connection is closed rather than buffering it.
 */
export const frameBytesMax = 8 * 1024 * 1024;

/** Smallest request frame whose length is plausible; 1..7 is a short frame, answered CORRUPT_REQUEST. */
export const requestFrameBytesMin = 1;

/** A response always carries at least correlationId and errorCode. */
export const responseFrameBytesMin = responseHeaderBytes;

/** A stored record is `int32 size, int32 crc32c, payload`. */
export const recordHeaderBytes = 8;

/** Topic names: 1..249 characters (the spec's rule, shared with the original broker). */
export const topicNameCharsMax = 249;

/** The broker caps a long-poll wait; a longer request gets an earlier empty answer, not an error. */
export const fetchWaitMsMax = 60_000;

/** FETCH response body before the payload: int64 highWatermark, int32 payloadBytes. */
export const fetchResponseFixedBytes = 12;

/** FETCH v5 response body before the payload: v1's, plus int32 epoch and int64 epochEndOffset. */
export const fetchResponseV5FixedBytes = fetchResponseFixedBytes + 12;

/**
 * The largest stored record (header and payload) that a FETCH answer of every version can carry
 * whole: a frame minus the response header and the largest FETCH body's fixed fields (v5's). A record
 * past it could be stored but not read by every client, so the writer refuses it as RECORD_TOO_LARGE
 * whatever the segment size.
 */
export const fetchableRecordBytesMax = frameBytesMax - responseHeaderBytes - fetchResponseV5FixedBytes;

/** PRODUCE success body: int64 baseOffset, int64 logEndOffset. */
export const produceResponseBodyBytes = 16;

/** Offsets travel as int64 but are JavaScript numbers here; beyond this they would lose precision. */
export const offsetMax = Number.MAX_SAFE_INTEGER;

/** Sentinel a producer reports for a record sent with ack NONE: no offset exists until the broker writes it. */
export const OFFSET_UNKNOWN = -1;

/** Partitions of one topic: the `booblik.topics` bound, far past what one node serves well. */
export const topicPartitionsMax = 10_000;

/** Labels on one topic: enough to describe it, few enough that matching stays cheap. */
export const topicLabelsMax = 64;

/** A label key: short, like Kubernetes' label names (63). */
export const labelKeyCharsMax = 63;

/** A label value: room for a DNS name or a path (253, Kubernetes' DNS name length). */
export const labelValueCharsMax = 253;

/** A fragment store URL (for the cluster): room for a bucket, a prefix and a query. */
export const storeUrlCharsMax = 2048;

/** A LIST selector: far beyond any hand-written one, small enough to parse without a second thought. */
export const selectorCharsMax = 4096;

/** Changes in one APPLY: all of them are one transaction on the spec store, and the answer one frame. */
export const applyChangesMax = 10_000;

/** A LIST watch is held like a long FETCH, with the same cap (a longer wait gets an earlier answer). */
export const listWaitMsMax = fetchWaitMsMax;

/** The smallest segment: one record of one byte (8-byte header + 1), as the log allows. */
export const segmentBytesMin = recordHeaderBytes + 1;

/** Segment positions are uint32 in the index; int32 on the wire keeps every one well inside it. */
export const segmentBytesLimit = 2 ** 31 - 1;

function assert(condition: boolean, message: string): void {
  if (!condition) throw new Error(`protocol limits: ${message}`);
}

assert(requestFrameBytesMin >= 1, 'a frame must hold at least one byte');
assert(frameBytesMax < 2 ** 31, 'frame length is an int32');
assert(
  frameBytesMax > requestHeaderBytes + fetchResponseFixedBytes + recordHeaderBytes,
  'a frame must fit one record',
);
assert(topicNameCharsMax * 4 <= 0xffff, 'a topic name in UTF-8 must fit a u16 string length');
assert(applyChangesMax <= topicPartitionsMax * 10, 'an APPLY fits in reason');
assert(labelKeyCharsMax * 4 + labelValueCharsMax * 4 <= 0xffff, 'a label fits u16 strings');
assert(selectorCharsMax * 4 <= 0xffff, 'a selector in UTF-8 must fit a u16 string length');
assert(storeUrlCharsMax * 4 <= 0xffff, 'a store URL in UTF-8 must fit a u16 string length');
