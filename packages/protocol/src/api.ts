/** API keys and the versions this protocol package speaks (spec sections 3 to 5). */

export const ApiKey = {
  PRODUCE: 1,
  FETCH: 2,
  METADATA: 3,
} as const;

export type ApiKeyValue = (typeof ApiKey)[keyof typeof ApiKey];

/** Versions each API has; anything else is UNSUPPORTED_VERSION. */
export const apiVersions: Readonly<Record<ApiKeyValue, readonly number[]>> = {
  [ApiKey.PRODUCE]: [1],
  [ApiKey.FETCH]: [1, 2],
  [ApiKey.METADATA]: [1],
};

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
