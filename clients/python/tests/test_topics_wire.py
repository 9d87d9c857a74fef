"""The topic codec on its own: the same literal bytes the TypeScript codec tests pin
(packages/protocol/src/requests/apply/apply.test.ts, list/list.test.ts), round trips, and answers
whose counts lie."""

import unittest

from booblik import wire
from booblik.errors import (
    BrokerError,
    InvalidArgumentRefusal,
    OffsetMismatchError,
    ProtocolError,
    RevisionMismatchError,
)
from booblik.refusals import refusal
from booblik.topics import (
    Delete,
    ListedTopic,
    Route,
    TopicListing,
    TopicSpec,
    Upsert,
    decode_apply_response,
    decode_list_response,
    decode_spec,
    encode_apply_request,
    encode_list_request,
    encode_spec,
)

SPEC = TopicSpec(
    "a", 2, labels={"team": "p"}, retention_bytes=-1, retention_millis=-2, segment_bytes=0, flags=1, replication=1,
    store_url="", revision=0,
)
SPEC_HEX = (
    "000161"  # name "a"
    "00000002"  # partitions
    "00000001 00047465616d 000170"  # one label, team=p
    "ffffffffffffffff"  # retentionBytes -1 (unlimited)
    "fffffffffffffffe"  # retentionMillis -2 (the broker's default)
    "00000000"  # segmentBytes 0 (the broker's default)
    "00000001"  # flags: read-only
    "0001"  # replication
    "0000"  # storeUrl ""
    "0000000000000000"  # revision 0: must not exist
)


def apply_frame(correlation_id, changes, dry_run=False):
    payload = encode_apply_request(changes, dry_run)
    return wire.encode_request(wire.API_APPLY, wire.APPLY_VERSION, correlation_id, payload)


def split_error(hex_frame):
    """(errorCode, body) of a response frame given with its length prefix."""
    frame = bytes.fromhex(hex_frame)
    _, code, body = wire.split_response(frame[4:])
    return code, body


class ApplyGoldenBytesTest(unittest.TestCase):
    def test_a_delete_carries_its_expected_revision(self):
        frame = apply_frame(7, [Delete("x", 3)])
        want = "00000019 0004 0001 00000007 00 00000001 02 000178 0000000000000003"
        self.assertEqual(frame.hex(), bytes.fromhex(want).hex())

    def test_an_upsert_carries_the_whole_spec_with_dry_run_set(self):
        frame = apply_frame(7, [Upsert(SPEC)], dry_run=True)
        self.assertEqual(frame.hex(), bytes.fromhex("00000046 0004 0001 00000007 01 00000001 01" + SPEC_HEX).hex())

    def test_labels_travel_sorted_by_key_whatever_order_they_were_given_in(self):
        shuffled = TopicSpec("a", 1, labels={"z": "1", "a": "2", "m": ""})
        in_order = TopicSpec("a", 1, labels={"a": "2", "m": "", "z": "1"})
        self.assertEqual(encode_spec("spec", shuffled), encode_spec("spec", in_order))

    def test_the_answer_is_the_new_revision(self):
        code, body = split_error("0000000e 00000002 0000 0000000000000009")
        self.assertEqual((code, decode_apply_response(body)), (0, 9))

    def test_a_negative_revision_in_the_answer_is_a_protocol_error(self):
        with self.assertRaisesRegex(ProtocolError, "revision -1"):
            decode_apply_response(bytes.fromhex("ffffffffffffffff"))


class ListGoldenBytesTest(unittest.TestCase):
    def test_a_request_with_a_selector_and_no_watch(self):
        frame = wire.encode_request(wire.API_LIST, wire.LIST_VERSION, 9, encode_list_request("team=p"))
        want = "0000001c 0005 0001 00000009 0006 7465616d3d70 ffffffffffffffff 00000000"
        self.assertEqual(frame.hex(), bytes.fromhex(want).hex())

    def test_the_answer_holds_the_store_revision_each_spec_and_a_route_per_partition(self):
        code, body = split_error(
            "0000004e 00000009 0000 0000000000000005 00000001"
            "000161 00000001 00000000 ffffffffffffffff ffffffffffffffff 00000400 00000000 0001 0000 0000000000000004"
            "00000001 0003683a31 00000000"
        )
        spec = TopicSpec("a", 1, {}, -1, -1, 1024, 0, 1, "", 4)
        self.assertEqual(code, 0)
        self.assertEqual(decode_list_response(body), TopicListing(5, [ListedTopic(spec, (Route("h:1", ()),))]))

    def test_a_topic_count_larger_than_the_answer_is_refused_before_allocating(self):
        with self.assertRaisesRegex(ProtocolError, "topicCount 2147483647"):
            decode_list_response(bytes.fromhex("0000000000000001 7fffffff"))

    def test_label_and_route_counts_that_lie_are_protocol_errors(self):
        spec_with_huge_labels = "000161 00000001 7fffffff" + "00" * 44
        with self.assertRaisesRegex(ProtocolError, "labelCount 2147483647"):
            decode_list_response(bytes.fromhex("0000000000000001 00000001" + spec_with_huge_labels))
        spec = encode_spec("spec", TopicSpec("a", 1, revision=1)).hex()
        with self.assertRaisesRegex(ProtocolError, "routeCount 2147483647"):
            decode_list_response(bytes.fromhex("0000000000000001 00000001" + spec + "7fffffff"))

    def test_bytes_after_the_last_topic_are_a_protocol_error(self):
        with self.assertRaisesRegex(ProtocolError, "1 unexpected bytes"):
            decode_list_response(bytes.fromhex("0000000000000001 00000000 00"))


class ProduceExpectingGoldenBytesTest(unittest.TestCase):
    def test_produce_v2_carries_the_expected_offset_after_the_ack(self):
        payload = wire.encode_produce_request("t", 0, wire.AckPolicy.WRITTEN, [b"x"], expected_offset=5)
        frame = wire.encode_request(wire.API_PRODUCE, wire.PRODUCE_EXPECTING_VERSION, 3, payload)
        want = "00000021 0001 0002 00000003 000174 00000000 01 0000000000000005 00000001 00000001 78"
        self.assertEqual(frame.hex(), bytes.fromhex(want).hex())

    def test_a_negative_expected_offset_is_refused(self):
        with self.assertRaisesRegex(ValueError, "expected_offset: -1"):
            wire.encode_produce_request("t", 0, wire.AckPolicy.WRITTEN, [b"x"], expected_offset=-1)


class RefusalDetailsTest(unittest.TestCase):
    def test_revision_mismatch_names_the_change_the_topic_and_both_revisions(self):
        code, body = split_error("0000001d 00000002 0007 00000001 000161 0000000000000003 0000000000000004")
        error = refusal(code, "APPLY a", body)
        self.assertIsInstance(error, RevisionMismatchError)
        self.assertIsInstance(error, BrokerError)
        details = (error.change_index, error.topic, error.expected_revision, error.actual_revision)
        self.assertEqual(details, (1, "a", 3, 4))
        self.assertEqual((error.name, error.retriable), ("REVISION_MISMATCH", False))
        self.assertIn("topic a is at revision 4, change 1 expected 3", str(error))

    def test_offset_mismatch_carries_the_partitions_end(self):
        code, body = split_error("0000000e 00000002 0008 000000000000000a")
        error = refusal(code, "PRODUCE t/0", body, expected_offset=5)
        self.assertIsInstance(error, OffsetMismatchError)
        self.assertEqual((error.expected_offset, error.log_end_offset, error.name), (5, 10, "OFFSET_MISMATCH"))

    def test_invalid_argument_carries_the_index_and_the_message(self):
        code, body = split_error("0000000d 00000002 000b ffffffff 00016d")
        error = refusal(code, "LIST x", body)
        self.assertIsInstance(error, InvalidArgumentRefusal)
        self.assertEqual((error.index, error.detail), (-1, "m"))

    def test_a_code_without_details_is_a_plain_broker_error_and_stray_bytes_are_ignored(self):
        for body in (b"", b"\x01\x02"):
            error = refusal(12, "PRODUCE t/0", body)
            self.assertIs(type(error), BrokerError)
            self.assertEqual(error.name, "TOPIC_READ_ONLY")

    def test_details_cut_short_are_a_protocol_error_not_a_crash(self):
        with self.assertRaisesRegex(ProtocolError, "actualRevision"):
            refusal(7, "APPLY a", bytes.fromhex("00000001 000161 0000000000000003"))

    def test_errors_with_details_survive_pickling(self):
        import pickle

        for error in (RevisionMismatchError("APPLY a", 1, "a", 3, 4), InvalidArgumentRefusal("LIST", -1, "m"),
                      OffsetMismatchError("PRODUCE t/0", 5, 10)):
            copy = pickle.loads(pickle.dumps(error))
            self.assertEqual((type(copy), str(copy), copy.code), (type(error), str(error), error.code))


class RoundTripAndChecksTest(unittest.TestCase):
    def test_a_spec_comes_back_as_it_was_sent(self):
        labels = {"z": "1", "a": "", "x.y/z": "v:w@q"}
        spec = TopicSpec("заказы", 10_000, labels, 1 << 40, 60_000, 4096, 1, 1, "s3://b/p", 41)
        from booblik.wire import BodyReader

        reader = BodyReader("spec", encode_spec("spec", spec))
        self.assertEqual(decode_spec(reader, "spec"), spec)
        reader.end()

    def test_defaults_are_the_brokers_and_any_revision(self):
        spec = TopicSpec("orders", 3)
        self.assertEqual(
            (spec.retention_bytes, spec.retention_millis, spec.segment_bytes, spec.replication, spec.revision),
            (-2, -2, 0, 0, -1),
        )
        self.assertFalse(spec.read_only)

    def test_values_that_cannot_go_on_the_wire_are_refused_naming_the_field(self):
        for change, message in (
            (Upsert(TopicSpec("t", 0)), r"changes\[0\].spec.partitions: 0, expected 1 .. 10000"),
            (Upsert(TopicSpec("t", 1, retention_bytes=-3)), r"changes\[0\].spec.retention_bytes: -3"),
            (Upsert(TopicSpec("t", 1, replication=40_000)), r"changes\[0\].spec.replication: 40000"),
            (Upsert(TopicSpec("t", 1, revision=-2)), r"changes\[0\].spec.revision: -2"),
            (Delete("t", -5), r"changes\[0\].expected_revision: -5"),
        ):
            with self.subTest(message), self.assertRaisesRegex(ValueError, message):
                encode_apply_request([change])
        for change, message in (
            (Upsert(TopicSpec("t", 1, labels={"k": 1})), r"labels\['k'\]: expected str"),
            (Upsert(TopicSpec("t", 1, labels=[("k", "v")])), "labels: expected a dict"),
            ("orders", r"changes\[0\]: expected Upsert or Delete, got str"),
        ):
            with self.subTest(message), self.assertRaisesRegex(TypeError, message):
                encode_apply_request([change])
        with self.assertRaisesRegex(TypeError, "wrap it in a list"):
            encode_apply_request(Delete("t"))

    def test_a_watch_revision_below_minus_one_is_refused(self):
        with self.assertRaisesRegex(ValueError, "watch_revision: -2"):
            encode_list_request("", -2, 0)


if __name__ == "__main__":
    unittest.main()
