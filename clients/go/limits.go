package booblik

import (
	"fmt"
	"time"
)

// Every limit and default of the client lives here, each with its reason. Relations between them
// are checked in init, so a change that breaks one fails at once instead of on the wire.

const (
	// frameBytesMax caps a frame's length field both ways (protocol section 1): a larger request
	// makes the broker drop the connection, and a larger answer means the stream is out of step.
	frameBytesMax = 8 << 20

	// requestHeaderBytes is apiKey, apiVersion and correlationId: what follows the length field.
	requestHeaderBytes = 8

	// responseHeaderBytes is correlationId and errorCode: the shortest answer there is.
	responseHeaderBytes = 6

	// fetchAnswerHeaderBytes is highWatermark and payloadBytes, in front of the records.
	fetchAnswerHeaderBytes = 12

	// recordHeaderBytes is a stored record's size and crc32c, in front of its payload.
	recordHeaderBytes = 8

	// topicNameRunesMax is the protocol's longest topic name (section 2).
	topicNameRunesMax = 249

	// fetchMaxBytesMax keeps a full FETCH answer inside one frame.
	fetchMaxBytesMax = frameBytesMax - responseHeaderBytes - fetchAnswerHeaderBytes

	// fetchWaitMax is where the broker caps a long poll; asking for more only gets an earlier
	// empty answer, so the client asks for at most this.
	fetchWaitMax = 60 * time.Second

	// owedAnswersMax bounds the answers a Conn still owes to calls abandoned while waiting. That
	// many unanswered requests in a row means the broker is not answering; queueing behind them
	// forever would hide it, so the Conn gives up instead.
	owedAnswersMax = 64

	// producerQueuedBytesMax bounds what a Producer holds for a broker slower than its callers:
	// past it, Send waits for room instead of letting memory grow without end.
	producerQueuedBytesMax = 64 << 20

	// scramIterationsMin is the wire's floor (RFC 7677's minimum): a broker asking fewer weakens
	// the stored keys, and the client refuses it.
	scramIterationsMin = 4096
	// scramIterationsMax bounds the PBKDF2 work a broker can ask of the client: ten million is
	// seconds of one core, far above any sane setting (4096 to a few hundred thousand).
	scramIterationsMax = 10_000_000

	// scramNonceBytes is the client nonce's randomness (base64 on the wire): 144 bits, far past guessing.
	scramNonceBytes = 18

	// tokenRefreshAhead is how long before its expiry a token from TokenFunc is replaced: room for
	// a request in flight and for the clocks of client and broker to differ by a few seconds.
	tokenRefreshAhead = 5 * time.Second
)

// Defaults, each a named constant with its reason.
const (
	// DefaultMaxWait is how long a Consumer asks the broker to hold a fetch that finds nothing:
	// long enough that an idle consumer costs one request per wait, short enough that a dead
	// connection is noticed within seconds.
	DefaultMaxWait = 5 * time.Second

	// DefaultFetchMaxBytes is what one fetch asks for when the caller does not say: many records per
	// round trip, and well under the frame limit.
	DefaultFetchMaxBytes = 1 << 20

	// DefaultMaxBatchSize is how many records a Producer puts in one PRODUCE request, the same in
	// every booblik client: enough that the per-request cost is shared a hundred ways, few enough
	// that a request of records of a few KiB stays well under the frame limit.
	DefaultMaxBatchSize = 100

	// DefaultLinger is how long the first record of a batch waits for company, the same in every
	// booblik client: short next to a network round trip, long enough to gather a burst from many
	// goroutines.
	DefaultLinger = 5 * time.Millisecond

	// DefaultMetadataMaxAge is how old a Topic's partition list may get before Send reads it again,
	// so partitions added at runtime get records within this long: one small METADATA per topic
	// every few seconds of sending. Five seconds, as in the TypeScript and Python clients.
	DefaultMetadataMaxAge = 5 * time.Second

	// DefaultRequestTimeout bounds one PRODUCE exchange of a Producer, FORCED acks included (a
	// disk sync under load can take a second or more).
	DefaultRequestTimeout = 30 * time.Second

	// DefaultRouteAttemptsMax is how many sends a Client makes for one call across route changes
	// and failures. Eight covers a NOT_PRIMARY hop or two plus pauses of 0.1 + 0.2 + ... + 2 s
	// (about 8 s in all): longer than a broker lease (5 s by default) takes to expire and its
	// partitions to show who serves them next.
	DefaultRouteAttemptsMax = 8
	// DefaultRouteRetryDelay is a Client's first pause after NO_PRIMARY or a lost connection,
	// doubled up to DefaultRouteRetryDelayMax.
	DefaultRouteRetryDelay    = 100 * time.Millisecond
	DefaultRouteRetryDelayMax = 2 * time.Second
)

// OffsetUnknown is the offset of a record sent with AckNone: no answer, so no offset.
const OffsetUnknown int64 = -1

func init() {
	check := func(ok bool, what string) {
		if !ok {
			panic(fmt.Sprintf("booblik: limits: %s", what))
		}
	}
	check(fetchMaxBytesMax+responseHeaderBytes+fetchAnswerHeaderBytes == frameBytesMax,
		"a full fetch answer must fit one frame")
	check(DefaultFetchMaxBytes <= fetchMaxBytesMax, "the default fetch size must be allowed")
	check(DefaultMaxWait <= fetchWaitMax, "the default wait must be one the broker honours")
	check(producerQueuedBytesMax >= frameBytesMax, "the producer must hold at least one full request")
	check(scramIterationsMin <= scramIterationsMax, "some SCRAM iteration count must be accepted")
}
