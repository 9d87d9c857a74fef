package booblik

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The same literal bytes the TypeScript codec tests pin (packages/protocol/src/requests/apply and
// list): a Go encoder that agreed only with its own decoder would pass a round trip, not these.

const goldenSpecHex = `
	000161                         // name "a"
	00000002                       // partitions
	00000001 00047465616d 000170   // one label: team=p
	ffffffffffffffff               // retentionBytes -1 (unlimited)
	fffffffffffffffe               // retentionMillis -2 (the broker's default)
	00000000                       // segmentBytes 0 (the broker's default)
	00000001                       // flags: read-only
	0001                           // replication
	0000                           // storeUrl ""
	0000000000000000               // revision 0: must not exist
`

var goldenSpec = TopicSpec{Name: "a", Partitions: 2, Labels: map[string]string{"team": "p"}, RetentionBytes: -1,
	RetentionMillis: -2, SegmentBytes: 0, Flags: FlagReadOnly, Replication: 1, Revision: RevisionMustNotExist}

func applyFrame(t *testing.T, changes []TopicChange, dryRun bool) []byte {
	t.Helper()
	b, err := appendApplyRequest(beginFrame(apiApply, applyVersion), changes, dryRun)
	if err != nil {
		t.Fatal(err)
	}
	return finishFrame(b, 7)
}

func TestApplyDeleteIsEncodedByteForByte(t *testing.T) {
	got := applyFrame(t, []TopicChange{DeleteTopic("x", 3)}, false)
	want := golden(t, `00000019 0004 0001 00000007 00 00000001 02 000178 0000000000000003`)
	if !bytes.Equal(got, want) {
		t.Fatalf("APPLY delete\n got %x\nwant %x", got, want)
	}
}

func TestApplyUpsertCarriesTheWholeSpecWithDryRunSet(t *testing.T) {
	got := applyFrame(t, []TopicChange{UpsertTopic(goldenSpec)}, true)
	want := golden(t, `00000046 0004 0001 00000007 01 00000001 01`+goldenSpecHex)
	if !bytes.Equal(got, want) {
		t.Fatalf("APPLY upsert\n got %x\nwant %x", got, want)
	}
}

func TestLabelsTravelSortedByKeyWhateverTheMapOrder(t *testing.T) {
	spec := NewTopicSpec("a", 1)
	spec.Labels = map[string]string{}
	for _, k := range strings.Split("q w e r t y u i o p a s d f g h j k l z x c v b n m", " ") {
		spec.Labels[k] = k
	}
	first := appendTopicSpec(nil, &spec)
	for i := 0; i < 20; i++ { // map iteration order changes from run to run
		if again := appendTopicSpec(nil, &spec); !bytes.Equal(first, again) {
			t.Fatal("the same spec encoded two ways")
		}
	}
	d := decoder{api: apiList, b: first}
	if got := readTopicSpec(&d, "spec"); d.done() != nil || !reflect.DeepEqual(got, spec) {
		t.Fatalf("round trip: %+v, %v", got, d.err)
	}
	if !bytes.Contains(first, []byte("\x00\x01a\x00\x01a\x00\x01b\x00\x01b\x00\x01c")) {
		t.Fatalf("labels not sorted: %x", first)
	}
}

func TestListRequestIsEncodedByteForByte(t *testing.T) {
	frame := appendString(beginFrame(apiList, listVersion), "team=p")
	frame = appendInt64(frame, noWatch)
	frame = finishFrame(appendInt32(frame, 0), 9)
	want := golden(t, `0000001c 0005 0001 00000009 0006 7465616d3d70 ffffffffffffffff 00000000`)
	if !bytes.Equal(frame, want) {
		t.Fatalf("LIST\n got %x\nwant %x", frame, want)
	}
}

func TestListAnswerIsDecodedFromLiteralBytes(t *testing.T) {
	body := golden(t, `
		0000000000000005 00000001                                  // revision 5, one topic
		000161 00000001 00000000                                   // "a", 1 partition, no labels
		ffffffffffffffff ffffffffffffffff 00000400 00000000 0001   // unlimited, 1 KiB segments
		0000 0000000000000004                                      // no store, revision 4
		00000001 0003683a31 00000000                               // one route: h:1, no replicas
	`)
	got, err := decodeListResponse(body, false)
	if err != nil {
		t.Fatal(err)
	}
	want := &TopicListing{Revision: 5, Topics: []ListedTopic{{
		Spec: TopicSpec{Name: "a", Partitions: 1, RetentionBytes: -1, RetentionMillis: -1, SegmentBytes: 1024,
			Replication: 1, Revision: 4},
		Routes: []Route{{Primary: "h:1"}},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v\nwant %+v", got, want)
	}
}

func TestListCountsThatLieAreRefusedBeforeAllocating(t *testing.T) {
	for name, body := range map[string]string{
		"topicCount": "0000000000000001 7fffffff",
		"labelCount": "0000000000000001 00000001 000161 00000001 7fffffff" + strings.Repeat("00", 44),
		"routeCount": "0000000000000001 00000001 000161 00000001 00000000" + strings.Repeat("00", 36) + "7fffffff",
	} {
		if _, err := decodeListResponse(golden(t, body), false); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want a protocol error naming it", name, err)
		}
	}
}

func TestRefusalDetailsAreDecodedFromLiteralBytes(t *testing.T) {
	err := refusal(CodeRevisionMismatch, apiApply, "APPLY a", golden(t, `00000001 000161 0000000000000003 0000000000000004`))
	var mismatch *RevisionMismatchError
	var refused *BrokerError
	if !errors.As(err, &mismatch) || mismatch.ChangeIndex != 1 || mismatch.Topic != "a" ||
		mismatch.ExpectedRevision != 3 || mismatch.ActualRevision != 4 {
		t.Fatalf("REVISION_MISMATCH: %#v", err)
	}
	if !errors.Is(err, ErrRevisionMismatch) || !errors.As(err, &refused) || refused.Code != CodeRevisionMismatch ||
		!strings.Contains(err.Error(), "topic a is at revision 4, change 1 expected 3") {
		t.Fatalf("REVISION_MISMATCH as a BrokerError: %v", err)
	}

	err = refusal(CodeOffsetMismatch, apiProduce, "PRODUCE t/0", golden(t, `000000000000000a`))
	var offset *OffsetMismatchError
	if !errors.As(err, &offset) || offset.LogEndOffset != 10 || !errors.Is(err, ErrOffsetMismatch) {
		t.Fatalf("OFFSET_MISMATCH: %#v", err)
	}

	err = refusal(CodeInvalidArgument, apiList, "LIST x", golden(t, `ffffffff 00016d`))
	var invalid *InvalidArgumentRefusal
	if !errors.As(err, &invalid) || invalid.Index != -1 || invalid.Detail != "m" || !errors.Is(err, ErrArgumentRefused) {
		t.Fatalf("INVALID_ARGUMENT: %#v", err)
	}
	if errors.Is(err, ErrInvalidArgument) {
		t.Fatal("the broker's refusal matches the client's own ErrInvalidArgument")
	}
}

func TestRefusalWithoutDetailsIgnoresStrayBytesAndCutDetailsAreProtocolErrors(t *testing.T) {
	err := refusal(CodeTopicReadOnly, apiProduce, "PRODUCE t/0", []byte{1, 2})
	if !errors.Is(err, ErrTopicReadOnly) || reflect.TypeOf(err) != reflect.TypeOf(&BrokerError{}) {
		t.Fatalf("%#v", err)
	}
	err = refusal(CodeRevisionMismatch, apiApply, "APPLY a", golden(t, `00000001 000161 0000000000000003`))
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "actualRevision") {
		t.Fatalf("%v", err)
	}
}

func TestChangesThatCannotGoOnTheWireAreRefusedNamingTheField(t *testing.T) {
	bad := func(edit func(*TopicSpec)) TopicChange {
		s := NewTopicSpec("t", 1)
		edit(&s)
		return UpsertTopic(s)
	}
	for want, change := range map[string]TopicChange{
		"changes[0].Upsert.Partitions: 0":      bad(func(s *TopicSpec) { s.Partitions = 0 }),
		"changes[0].Upsert.RetentionBytes: -3": bad(func(s *TopicSpec) { s.RetentionBytes = -3 }),
		"changes[0].Upsert.Revision: -2":       bad(func(s *TopicSpec) { s.Revision = -2 }),
		"changes[0].Upsert.Name":               bad(func(s *TopicSpec) { s.Name = "a b" }),
		"changes[0].ExpectedRevision: -5":      DeleteTopic("t", -5),
		"changes[0]: neither":                  {},
		"changes[0]: both":                     {Upsert: &TopicSpec{}, Delete: "t"},
	} {
		_, err := appendApplyRequest(nil, []TopicChange{change}, false)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

func TestProduceAtCarriesTheExpectedOffsetAfterTheAck(t *testing.T) {
	got := finishFrame(appendProduceRequestAt(beginFrame(apiProduce, produceExpectingVersion),
		"t", 0, AckWritten, 5, [][]byte{[]byte("x")}), 3)
	want := golden(t, `00000021 0001 0002 00000003 000174 00000000 01 0000000000000005 00000001 00000001 78`)
	if !bytes.Equal(got, want) {
		t.Fatalf("PRODUCE v2\n got %x\nwant %x", got, want)
	}
}
