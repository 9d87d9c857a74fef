/** API keys (spec sections 3 to 5); each key's versions and what they mean are its row in api-table/. */

export const ApiKey = {
  PRODUCE: 1,
  FETCH: 2,
  METADATA: 3,
  /** Additions after v1: topics at runtime and capability discovery (docs/protocol.md). */
  APPLY: 4,
  LIST: 5,
  API_VERSIONS: 6,
  /** Where each segment of a partition is: local disk, store, or both (fragment stores). */
  LIST_FRAGMENTS: 7,
  /** The cluster: give a partition to another member. */
  MOVE: 8,
  /** Broker to broker: a primary's write groups (and copies) to a replica. */
  REPLICATE: 9,
  /** Who is connecting: SCRAM-SHA-256 or a token (docs/security.md). */
  AUTHENTICATE: 10,
  /** The SCRAM users the broker knows: list, add or replace, remove. */
  USERS: 11,
} as const;

export type ApiKeyValue = (typeof ApiKey)[keyof typeof ApiKey];

/** What API_VERSIONS answers; a broker that predates it refuses it with UNSUPPORTED_VERSION. */
export interface ApiVersionRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

/** The versions of a broker that predates API_VERSIONS (it answers that request UNSUPPORTED_VERSION). */
export const apiVersionsBeforeDiscovery: readonly ApiVersionRange[] = [
  { apiKey: ApiKey.PRODUCE, minVersion: 1, maxVersion: 1 },
  { apiKey: ApiKey.FETCH, minVersion: 1, maxVersion: 2 },
  { apiKey: ApiKey.METADATA, minVersion: 1, maxVersion: 1 },
];

export const AckPolicy = {
  /** No answer at all, ever: not even a refusal. */
  NONE: 0,
  /** Answered once the batch is in the log (readable by FETCH; in the OS page cache). */
  WRITTEN: 1,
  /** Answered once the batch is on stable storage (fdatasync). */
  FORCED: 2,
} as const;

export type AckPolicyValue = (typeof AckPolicy)[keyof typeof AckPolicy];

export function ackPolicyName(ack: number): string {
  switch (ack) {
    case AckPolicy.NONE:
      return 'NONE';
    case AckPolicy.WRITTEN:
      return 'WRITTEN';
    case AckPolicy.FORCED:
      return 'FORCED';
    default:
      return `UNKNOWN(${ack})`;
  }
}
