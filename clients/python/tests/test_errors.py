"""What a user reads when something goes wrong: the error table, the wrong port, an unknown topic."""

import asyncio
import contextlib
import os
import re
import unittest

from booblik import BrokerError, Connection, ErrorCode, ProtocolError
from booblik import aio
from booblik.errors import ERROR_TABLE, error_name
from tests.fakebroker import FakeBroker, Reply, response_frame
from tests.support import NODE, http_server

TIMEOUT = 5.0
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
TS_ERRORS = os.path.join(REPO, "packages", "protocol", "src", "errors.ts")


class ErrorTableTest(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(TS_ERRORS), "packages/protocol is not beside this client")
    def test_table_is_the_typescript_clients_table(self):
        with open(TS_ERRORS, encoding="utf-8") as file:
            rows = re.findall(r"code:\s*(\d+),\s*name:\s*'(\w+)',\s*retriable:\s*(true|false)", file.read())
        self.assertGreaterEqual(len(rows), 7)
        theirs = [(int(code), name, retriable == "true") for code, name, retriable in rows]
        ours = [(e.code, e.name, e.retriable) for e in ERROR_TABLE]
        self.assertEqual(ours, theirs)
        self.assertEqual([(c.value, c.name) for c in ErrorCode], [(code, name) for code, name, _ in ours])
        self.assertEqual([code for code, _, _ in ours], list(range(len(ours))), "codes are 0, 1, 2, ... in order")

    def test_storage_error_is_named_and_retriable(self):
        refused = BrokerError(6, "PRODUCE orders/0")
        self.assertEqual((refused.name, refused.retriable), ("STORAGE_ERROR", True))
        self.assertIn("nothing of the batch was stored", str(refused))
        self.assertFalse(BrokerError(1, "FETCH orders/0").retriable)

    def test_unknown_code_is_named_and_not_retriable(self):
        refused = BrokerError(99, "METADATA")
        self.assertEqual((refused.name, refused.retriable, error_name(99)), ("UNKNOWN(99)", False, "UNKNOWN(99)"))


class UnknownTopicNamedTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker({"default": 1})
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_every_refusal_of_an_unknown_topic_names_it(self):
        calls = {
            "metadata": lambda: self.connection.metadata("no-such-topic"),
            "topic": lambda: self.connection.topic("no-such-topic"),
            "produce": lambda: self.connection.produce("no-such-topic", 0, [b"x"]),
            "fetch": lambda: self.connection.fetch("no-such-topic", 0, 0, max_wait_millis=0),
        }
        for call, make in calls.items():
            with self.subTest(call), self.assertRaises(BrokerError) as caught:
                make()
            self.assertEqual(caught.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")
            self.assertIn("no-such-topic", str(caught.exception))


class AioUnknownTopicNamedTest(unittest.IsolatedAsyncioTestCase):
    async def test_every_refusal_of_an_unknown_topic_names_it(self):
        with FakeBroker({"default": 1}) as broker:
            async with aio.Connection.connect(broker.address, timeout=TIMEOUT) as connection:
                calls = {
                    "metadata": lambda: connection.metadata("no-such-topic"),
                    "topic": lambda: connection.topic("no-such-topic"),
                    "produce": lambda: connection.produce("no-such-topic", 0, [b"x"]),
                    "fetch": lambda: connection.fetch("no-such-topic", 0, 0, max_wait_millis=0),
                }
                for call, make in calls.items():
                    with self.subTest(call), self.assertRaises(BrokerError) as caught:
                        await make()
                    self.assertIn("no-such-topic", str(caught.exception))


WRONG_PORT = "speaks HTTP; the booblik port is set by booblik.port"


@unittest.skipUnless(NODE, "node (the HTTP server the broker's HTTP port runs on) is not installed")
class WrongPortTest(unittest.TestCase):
    def test_http_port_is_named_not_read_as_a_frame_length(self):
        with http_server() as address, Connection.connect(address, timeout=TIMEOUT) as connection:
            with self.assertRaises(ProtocolError) as caught:
                connection.metadata()
            self.assertEqual(str(caught.exception), f"{address} {WRONG_PORT}")
            self.assertTrue(connection.closed)

    def test_a_frame_length_that_merely_is_large_is_still_a_frame_length_error(self):
        # 0x48545451 is "HTTQ": one bit from "HTTP", so the check is on the four letters, not the size.
        with FakeBroker(respond=lambda r: Reply(b"HTTQ" + response_frame(r.correlation_id))) as broker:
            with Connection.connect(broker.address, timeout=TIMEOUT) as connection:
                with self.assertRaisesRegex(ProtocolError, "response frame length 1213486161"):
                    connection.metadata()


@unittest.skipUnless(NODE, "node (the HTTP server the broker's HTTP port runs on) is not installed")
class AioWrongPortTest(unittest.IsolatedAsyncioTestCase):
    async def test_http_port_is_named_not_read_as_a_frame_length(self):
        server = contextlib.ExitStack()
        self.addCleanup(server.close)
        address = await asyncio.to_thread(server.enter_context, http_server())  # its start blocks
        async with aio.Connection.connect(address, timeout=TIMEOUT) as connection:
            with self.assertRaises(ProtocolError) as caught:
                await connection.metadata()
            self.assertEqual(str(caught.exception), f"{address} {WRONG_PORT}")
            self.assertTrue(connection.closed)


if __name__ == "__main__":
    unittest.main()
