"""The harness's codec of the topic APIs, on the literal bytes docs/protocol.md gives (the same the
TypeScript codec tests pin): a round trip alone passes when encoder and decoder share a bug."""

import unittest

from harness import topics_wire, wire


class TopicsGoldenBytes(unittest.TestCase):
    def test_apply_delete_with_its_expected_revision(self):
        frame = wire.request_frame(4, 1, 7, topics_wire.apply_v1([topics_wire.delete("x", 3)]))
        self.assertEqual(frame.hex(), "00000019" "00040001" "00000007" "00" "00000001" "02" "000178"
                                      "0000000000000003")

    def test_apply_upsert_with_the_brokers_defaults(self):
        change = topics_wire.upsert("a", 2, {"team": "p"}, 0)
        self.assertEqual(change.hex(), "01" "000161" "00000002" "00000001" "00047465616d" "000170"
                                       "fffffffffffffffe" "fffffffffffffffe" "00000000" "00000000"
                                       "0000" "0000" "0000000000000000")

    def test_list_request_with_a_selector_and_no_watch(self):
        frame = wire.request_frame(5, 1, 9, topics_wire.list_v1("team=p"))
        self.assertEqual(frame.hex(), "0000001c" "00050001" "00000009" "0006" "7465616d3d70"
                                      "ffffffffffffffff" "00000000")

    def test_list_answer(self):
        body = bytes.fromhex(
            "0000000000000005 00000001 000161 00000001 00000000 ffffffffffffffff ffffffffffffffff"
            "00000400 00000000 0001 0000 0000000000000004 00000001 0003683a31 00000000"
        )
        self.assertEqual(topics_wire.parse_list_body(body), (5, [topics_wire.Listed("a", 1, {}, 4)]))

    def test_a_list_answer_cut_short_is_a_protocol_error(self):
        with self.assertRaises(wire.ProtocolError):
            topics_wire.parse_list_body(bytes.fromhex("0000000000000005 00000001 000161"))


if __name__ == "__main__":
    unittest.main()
