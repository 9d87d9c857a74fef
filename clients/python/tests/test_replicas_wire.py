"""RouteV2, METADATA v4, LIST v2 and FETCH v4 on the wire: the literal bytes of docs/protocol.md
(the same the TypeScript codec tests pin: packages/protocol/src/requests/metadata/v4.test.ts,
list/v2.test.ts), sent by a Connection and decoded, and answers broken one field at a time."""

import struct
import unittest

from booblik import Connection, ListedTopic, ReplicaFlag, ReplicaState, Route, RouteV2, TopicSpec
from booblik.errors import ProtocolError
from booblik.route_v2 import LAG_UNKNOWN, decode_list_response_v2
from booblik.routing import RoutedMetadata, RoutedPartition, RoutedTopic, decode_metadata_response_v4
from tests.fakebroker import FakeBroker

TIMEOUT = 5.0

# Revision 3, topic "a", partition 0 from 1 to 2, epoch 2, primary h:1; replicas b1 at h:1 in z1 (in
# sync, live, lag 0) and b2 at r:2 in z2 (live, not in sync, 5 records and 1 200 ms behind).
METADATA_V4_ANSWER = (
    "00000076 00000004 0000 0000000000000003 00000001 000161 00000001 00000000"
    " 0000000000000001 0000000000000002 00000002 0003683a31 00000002 00026231 0003683a31 00027a31 03"
    " 0000000000000000 0000000000000000 00026232 0003723a32 00027a32 02 0000000000000005"
    " 00000000000004b0"
)
ROUTE = RouteV2(
    2,
    "h:1",
    (
        ReplicaState("b1", "h:1", "z1", ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE, 0, 0),
        ReplicaState("b2", "r:2", "z2", ReplicaFlag.LIVE, 5, 1200),
    ),
)
# Where fields sit in METADATA_V4_ANSWER's body (after the 10-byte frame and response header).
EPOCH_AT = 8 + 4 + 3 + 4 + 20
LAG_RECORDS_OF_B2_AT = 112 - 16  # the body is 112 bytes; b2's lagRecords, then its lagMillis, end it

# LIST v1's example answer (revision 5, topic "a": 1 partition, no labels, retention unlimited,
# 1 024-byte segments, revision 4) with its route as a RouteV2: epoch 0, primary h:1, one replica b1
# at h:1, no zone, in sync and live, lags unknown (LIST never knows them).
LIST_V2_ANSWER = (
    "0000006e 00000009 0000 0000000000000005 00000001 000161 00000001 00000000"
    " ffffffffffffffff ffffffffffffffff 00000400 00000000 0001 0000 0000000000000004"
    " 00000001 00000000 0003683a31 00000001 00026231 0003683a31 0000 03 ffffffffffffffff ffffffffffffffff"
)


def body_of(hex_frame: str) -> bytes:
    frame = bytes.fromhex(hex_frame)
    (length,) = struct.unpack_from(">i", frame)
    assert length == len(frame) - 4, f"the frame says {length} bytes, has {len(frame) - 4}"
    return frame[10:]


def with_bytes(body: bytes, at: int, fmt: str, value: int) -> bytes:
    broken = bytearray(body)
    struct.pack_into(fmt, broken, at, value)
    return bytes(broken)


class MetadataV4AnswerTest(unittest.TestCase):
    def test_golden_bytes_name_the_epoch_every_replica_its_zone_in_sync_flag_and_lag(self):
        answer = decode_metadata_response_v4(body_of(METADATA_V4_ANSWER))
        # ``route`` stays a v1 Route: the primary and the other live in-sync replicas (b2 is not in sync).
        want = RoutedMetadata(3, (RoutedTopic("a", (RoutedPartition(0, 1, 2, Route("h:1", ()), ROUTE),)),))
        self.assertEqual(answer, want)
        b1, b2 = answer.topics[0].partitions[0].route_v2.replicas
        self.assertEqual((b1.in_sync, b1.live, b1.readable), (True, True, True))
        self.assertEqual((b2.in_sync, b2.live, b2.readable), (False, True, False))

    def test_a_lag_below_minus_one_is_refused_naming_the_field(self):
        body = body_of(METADATA_V4_ANSWER)
        with self.assertRaisesRegex(ProtocolError, r"topics\[0\]\.partitions\[0\]\.route\.replicas\[1\]\.lagMillis -2"):
            decode_metadata_response_v4(with_bytes(body, len(body) - 8, ">q", -2))
        with self.assertRaisesRegex(ProtocolError, r"route\.replicas\[1\]\.lagRecords -7"):
            decode_metadata_response_v4(with_bytes(body, LAG_RECORDS_OF_B2_AT, ">q", -7))

    def test_a_lag_of_minus_one_is_unknown_not_an_error(self):
        body = body_of(METADATA_V4_ANSWER)
        answer = decode_metadata_response_v4(with_bytes(body, len(body) - 8, ">q", LAG_UNKNOWN))
        self.assertEqual(answer.topics[0].partitions[0].route_v2.replicas[1].lag_millis, -1)

    def test_a_negative_epoch_is_refused_naming_the_field(self):
        body = with_bytes(body_of(METADATA_V4_ANSWER), EPOCH_AT, ">i", -1)
        with self.assertRaisesRegex(ProtocolError, r"topics\[0\]\.partitions\[0\]\.route\.epoch -1"):
            decode_metadata_response_v4(body)

    def test_a_negative_high_watermark_is_refused_naming_the_field(self):
        body = with_bytes(body_of(METADATA_V4_ANSWER), EPOCH_AT - 8, ">q", -1)
        with self.assertRaisesRegex(ProtocolError, r"partitions\[0\]\.highWatermark -1"):
            decode_metadata_response_v4(body)

    def test_a_replica_count_the_bytes_cannot_hold_is_refused_naming_the_field(self):
        body = with_bytes(body_of(METADATA_V4_ANSWER), EPOCH_AT + 4 + 5, ">i", 1000)
        with self.assertRaisesRegex(ProtocolError, r"route\.replicaCount 1000 does not fit"):
            decode_metadata_response_v4(body)

    def test_an_answer_cut_inside_a_replica_is_refused_naming_the_field(self):
        body = body_of(METADATA_V4_ANSWER)
        with self.assertRaisesRegex(ProtocolError, r"route\.replicas\[1\]\.lagMillis needs 8 bytes"):
            decode_metadata_response_v4(body[:-1])

    def test_bytes_after_the_last_partition_are_refused(self):
        with self.assertRaisesRegex(ProtocolError, "1 unexpected bytes"):
            decode_metadata_response_v4(body_of(METADATA_V4_ANSWER) + b"\0")


class ListV2AnswerTest(unittest.TestCase):
    def test_golden_bytes_routes_carry_the_epoch_and_each_replica_lags_unknown(self):
        listing = decode_list_response_v2(body_of(LIST_V2_ANSWER))
        spec = TopicSpec("a", 1, {}, -1, -1, 1024, 0, 1, "", 4)
        route = RouteV2(0, "h:1", (ReplicaState("b1", "h:1", "", 3, LAG_UNKNOWN, LAG_UNKNOWN),))
        self.assertEqual(listing.revision, 5)
        self.assertEqual(listing.topics, [ListedTopic(spec, (Route("h:1", ()),), (route,))])

    def test_a_negative_epoch_is_refused_naming_the_route(self):
        body = body_of(LIST_V2_ANSWER)
        at = len(body) - 41
        with self.assertRaisesRegex(ProtocolError, r"topics\[0\]\.routes\[0\]\.epoch -3"):
            decode_list_response_v2(with_bytes(body, at, ">i", -3))


class RequestsOnTheWireTest(unittest.TestCase):
    """What a Connection sends, as received by the fake broker, with the doc's correlation id put in."""

    def setUp(self):
        self.broker = FakeBroker({"t": 1, "x": 1}, routes={})
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, TIMEOUT)
        self.addCleanup(self.connection.close)

    def sent(self, correlation_id: int) -> str:
        raw = bytearray(self.broker.requests[-1].raw)
        struct.pack_into(">i", raw, 8, correlation_id)
        return raw.hex()

    def test_fetch_v4_is_fetch_v2s_bytes_with_version_4(self):
        self.broker.append("t", 0, *[b"r"] * 6)
        self.connection.fetch("t", 0, 5, max_bytes=1024 * 1024, max_wait_millis=500, min_bytes=1, from_replica=True)
        want = "00000023 0002 0004 00000002 000174 00000000 0000000000000005 00100000 000001f4 00000001"
        self.assertEqual(self.sent(2), bytes.fromhex(want).hex())

    def test_metadata_v4_is_metadata_v3s_bytes_with_version_4(self):
        self.connection.metadata_with_routes("x", min_revision=9, replicas=True)
        want = "00000018 0003 0004 00000005 00000001 000178 0000000000000009 00"
        self.assertEqual(self.sent(5), bytes.fromhex(want).hex())

    def test_list_v2_is_list_v1s_bytes_with_version_2_and_list_v1_stays_the_default(self):
        self.connection.list_topics("team=p", replicas=True)
        want = "0000001c 0005 0002 00000009 0006 7465616d3d70 ffffffffffffffff 00000000"
        self.assertEqual(self.sent(9), bytes.fromhex(want).hex())
        self.connection.list_topics("team=p")
        self.assertEqual(self.broker.requests[-1].api_version, 1)


if __name__ == "__main__":
    unittest.main()
