/**
 * Wire helpers for the cluster tests: what a client sees of a cluster, asked with raw frames so a
 * test checks the bytes a broker answers, whatever the client libraries do.
 */
import {
  decodeApplyResponse,
  decodeListResponse,
  decodeListResponseV2,
  decodeMetadataResponseV3,
  decodeMetadataResponseV4,
  decodeProduceResponse,
  ErrorCode,
  encodeFetchRequestV2,
  encodeFetchRequestV4,
  encodeListRequest,
  encodeListRequestV2,
  encodeMetadataRequestV3,
  encodeMetadataRequestV4,
  encodeProduceRequest,
  errorName,
  type MetadataResponseV2,
  type MetadataResponseV4,
  NO_WATCH,
  type ResponseFrame,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { fetched, RawClient } from './raw-client.js';

export async function connect(address: string): Promise<RawClient> {
  const colon = address.lastIndexOf(':');
  return RawClient.connect(Number(address.slice(colon + 1)), address.slice(0, colon));
}

export function ok(frame: ResponseFrame, what: string): Buffer {
  if (frame.errorCode !== ErrorCode.NONE) throw new Error(`${what}: ${errorName(frame.errorCode)}`);
  return frame.body;
}

export async function createTopic(client: RawClient, name: string, partitions: number): Promise<number> {
  const frame = await client.apply([
    { op: 'upsert', spec: topicSpecWithDefaults({ name, partitions, revision: 0 }) },
  ]);
  return decodeApplyResponse(ok(frame, `APPLY ${name}`)).revision;
}

export async function metadata(
  client: RawClient,
  topics: string[],
  minRevision = 0,
): Promise<MetadataResponseV2> {
  const id = client.id();
  client.send(encodeMetadataRequestV3(id, { topics, minRevision, flags: 0 }));
  return decodeMetadataResponseV3(ok(await client.expect(id), 'METADATA v3'));
}

/** METADATA v4: each partition's RouteV2 (epoch, every replica with its zone, in-sync flag and lag). */
export async function metadataV4(client: RawClient, topics: string[]): Promise<MetadataResponseV4> {
  const id = client.id();
  client.send(encodeMetadataRequestV4(id, { topics, minRevision: 0, flags: 0 }));
  return decodeMetadataResponseV4(ok(await client.expect(id), 'METADATA v4'));
}

/** LIST v2 of every topic, no watch. */
export async function listV2(client: RawClient) {
  const id = client.id();
  client.send(encodeListRequestV2(id, { selector: '', watchRevision: NO_WATCH, maxWaitMs: 0 }));
  return decodeListResponseV2(ok(await client.expect(id), 'LIST v2'));
}

/** One FETCH v4 (a replica may answer it): the raw answer frame. */
export async function fetchV4(
  client: RawClient,
  topic: string,
  partition: number,
  fetchOffset: number,
  maxWaitMs = 0,
): Promise<ResponseFrame> {
  const id = client.id();
  client.send(
    encodeFetchRequestV4(id, { topic, partition, fetchOffset, maxBytes: 1 << 20, maxWaitMs, minBytes: 1 }),
  );
  return client.expect(id);
}

/** Each partition's primary address ('' for none), by id. */
export async function primaries(client: RawClient, topic: string): Promise<string[]> {
  const md = await metadata(client, [topic]);
  return md.topics[0]!.partitions.map((p) => p.route.primary);
}

/** PRODUCE v1 (what every original client sends): the base offset. */
export async function produceV1(
  client: RawClient,
  topic: string,
  partition: number,
  records: string[],
): Promise<number> {
  const id = client.id();
  client.send(
    encodeProduceRequest(id, { topic, partition, ack: 1, records: records.map((r) => Buffer.from(r)) }),
  );
  return decodeProduceResponse(ok(await client.expect(id), `PRODUCE ${topic}-${partition}`)).baseOffset;
}

/**
 * Every record from `offset` to the high watermark, as text: FETCH v2 after FETCH (one answer stops
 * at the end of a segment).
 */
export async function fetchAll(
  client: RawClient,
  topic: string,
  partition: number,
  offset = 0,
): Promise<string[]> {
  const records: string[] = [];
  for (let next = offset; ; ) {
    const id = client.id();
    client.send(
      encodeFetchRequestV2(id, {
        topic,
        partition,
        fetchOffset: next,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    );
    const frame = await client.expect(id);
    ok(frame, `FETCH ${topic}-${partition}`);
    const answer = fetched(frame, next);
    records.push(...answer.records);
    next += answer.records.length;
    if (next >= answer.highWatermark || answer.records.length === 0) return records;
  }
}

/** A LIST held as a watch from `revision`: resolves with the answer the broker sends when it changes. */
export async function watchList(client: RawClient, revision: number, maxWaitMs: number) {
  const id = client.id();
  client.send(encodeListRequest(id, { selector: '', watchRevision: revision, maxWaitMs }));
  return decodeListResponse(ok(await client.expect(id), 'LIST'));
}

/** Polls `read` until `check` holds, at most `timeoutMs`; returns how long it took. */
export async function until<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  what: string,
  timeoutMs: number,
): Promise<number> {
  const start = performance.now();
  let last: T | undefined;
  while (performance.now() - start < timeoutMs) {
    try {
      last = await read();
      if (check(last)) return performance.now() - start;
    } catch {
      // a broker restarting or refusing: try again
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

/**
 * Waits, on the broker's own LIST watch (no polling), until the listing satisfies `check`; returns
 * how long it took.
 */
export async function untilListed(
  client: RawClient,
  check: (listing: Awaited<ReturnType<typeof watchList>>) => boolean,
  what: string,
  timeoutMs: number,
): Promise<number> {
  const start = performance.now();
  let listing = await watchList(client, -1, 0);
  while (!check(listing)) {
    const left = timeoutMs - (performance.now() - start);
    if (left <= 0) throw new Error(`${what}: not within ${timeoutMs} ms (at revision ${listing.revision})`);
    const next = await watchList(client, listing.revision, Math.ceil(left));
    // An answer with no topics at the same revision: the wait ended with nothing changed.
    if (next.revision === listing.revision && next.topics.length === 0) continue;
    listing = next;
  }
  return performance.now() - start;
}
