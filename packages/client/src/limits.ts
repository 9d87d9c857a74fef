/**
 * Every default and limit of the client, in one place, each with its reason. Relations between them
 * are asserted at load, so a change that breaks one fails at startup rather than in production.
 */
import { fetchWaitMsMax, frameBytesMax, scramIterationsMin, scramSaltBytesMin } from '@booblik/protocol';

/** Port a bare host (no `:port`) connects to: the broker's default listener. */
export const DEFAULT_PORT = 9092;

/** Giving up on a TCP connect: long enough for a slow network, short enough that a typo fails fast. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long an answer may take beyond any wait the request itself asked for. A FORCED produce waits
 * for an fdatasync, which takes seconds on a busy disk; thirty is well past that and still bounded.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** After close() ends the socket, how long to wait for the broker to close its side before cutting it. */
export const CLOSE_WAIT_MS = 2_000;

/** Producer: how long a batch waits for company. Short: a lone record costs at most this much latency. */
export const DEFAULT_LINGER_MS = 5;

/** Producer: records per PRODUCE request; a full batch goes at once, without waiting out the linger. */
export const DEFAULT_MAX_BATCH_RECORDS = 100;

/** Producer: PRODUCE requests awaiting an answer at once; enough to keep the pipe full on a LAN. */
export const DEFAULT_MAX_IN_FLIGHT = 5;

/**
 * Producer: PRODUCE requests of one partition awaiting an answer at once. One keeps the partition in
 * send order across a failover: a batch the Client resends is never overtaken by a later one.
 */
export const DEFAULT_MAX_IN_FLIGHT_PER_PARTITION = 1;

/**
 * Producer: records accepted but not yet answered (in open batches and in flight). Beyond this,
 * send() waits: memory stays bounded when the broker is slower than the caller.
 */
export const DEFAULT_MAX_QUEUED_RECORDS = 10_000;

/** Consumer: how long the broker may hold a fetch for new records (a long poll); 0 answers at once. */
export const DEFAULT_MAX_WAIT_MS = 5_000;

/** Consumer: bytes asked for per fetch. A record larger than this can never arrive (an error says so). */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

/** Consumer: the broker answers a long fetch as soon as anything at all is there. */
export const DEFAULT_MIN_BYTES = 1;

/** Consumer: first pause before reconnecting; doubled per failed attempt up to the cap. */
export const DEFAULT_RECONNECT_DELAY_MS = 100;

/** Consumer: longest pause between reconnect attempts, so a returning broker is found within seconds. */
export const DEFAULT_RECONNECT_DELAY_MS_MAX = 5_000;

/**
 * Client: sends of one request across route changes and failures. Eight covers a NOT_PRIMARY hop
 * or two plus pauses of 0.1 + 0.2 + ... + 2 s (about 8 s in all): longer than a broker lease (5 s
 * by default) takes to expire and its partitions to show who serves them next.
 */
export const DEFAULT_ROUTE_ATTEMPTS_MAX = 8;

/** Client: first pause after NO_PRIMARY or a lost connection before METADATA is asked again. */
export const DEFAULT_ROUTE_RETRY_DELAY_MS = 100;

/** Client: longest such pause, doubled from the first. */
export const DEFAULT_ROUTE_RETRY_DELAY_MS_MAX = 2_000;

/**
 * "HTTP" read as a big-endian int32 frame length: what an HTTP server's answer (`HTTP/1.1 400 ...`)
 * looks like to a client pointed at the wrong port. Far above the frame limit, so never a real frame.
 */
export const HTTP_AS_FRAME_LENGTH = Buffer.from('HTTP').readInt32BE(0);

/** users: PBKDF2 iterations of a new user's credentials: RFC 7677's minimum, which the broker requires. */
export const DEFAULT_SCRAM_ITERATIONS = scramIterationsMin;

/** users: random salt of a new user's credentials: the broker's minimum (RFC 5802 asks for a random one). */
export const SCRAM_SALT_BYTES = scramSaltBytesMin;

/**
 * SCRAM: most iterations a broker may ask the client to pay. The client computes PBKDF2 on its own
 * thread: a broker (or an impostor) asking for billions would freeze it. A million takes about a
 * second; deployments that hash harder than that are not known to us.
 */
export const SCRAM_ITERATIONS_MAX = 1_000_000;

/**
 * A provided token this close to its end is refreshed before a PRODUCE with ack NONE, whose refusal
 * as expired would never be seen: covers a few seconds of clock skew between client and broker.
 */
export const TOKEN_REFRESH_MARGIN_MS = 5_000;

/** Correlation ids count up from 1 and wrap before leaving the positive int32 range. */
export { CORRELATION_ID_MAX } from '@booblik/protocol';
/** int32 fields on the wire (partition, maxBytes, waits): a number outside cannot be encoded. */
export const INT32_MAX = 0x7fff_ffff;

function assert(condition: boolean, message: string): void {
  if (!condition) throw new Error(`client limits: ${message}`);
}

assert(DEFAULT_MAX_WAIT_MS <= fetchWaitMsMax, 'the default wait must not exceed what the broker honours');
assert(DEFAULT_MIN_BYTES <= DEFAULT_MAX_BYTES, 'minBytes > maxBytes is a refused request');
assert(DEFAULT_RECONNECT_DELAY_MS <= DEFAULT_RECONNECT_DELAY_MS_MAX, 'backoff must start below its cap');
assert(
  DEFAULT_ROUTE_RETRY_DELAY_MS <= DEFAULT_ROUTE_RETRY_DELAY_MS_MAX,
  'route pauses must start below their cap',
);
assert(HTTP_AS_FRAME_LENGTH > frameBytesMax, 'an HTTP answer must never pass for a frame');
assert(DEFAULT_MAX_BATCH_RECORDS <= DEFAULT_MAX_QUEUED_RECORDS, 'a full batch must fit in the queue');
assert(
  DEFAULT_SCRAM_ITERATIONS <= SCRAM_ITERATIONS_MAX,
  'the client must be able to log in as the users it makes',
);
