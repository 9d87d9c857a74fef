"""booblik.Client follows routes: against fake cluster brokers (tests.fakebroker in cluster mode)
and once against the real single-node broker, which must see v3 and answer as before."""

import threading
import unittest
from unittest import mock

from booblik import BrokerError, Client, ErrorCode, Producer, ProducerConfig, TopicSpec, Upsert
from booblik.connection import Connection
from tests.fakebroker import FakeBroker, Reply
from tests.support import default_broker

TIMEOUT = 5.0
QUICK = {"route_retry_delay": 0.001, "route_retry_delay_max": 0.002}  # the tests wait on answers, not the clock


def data_requests(broker):
    """(api key, version) of the PRODUCE and FETCH requests a broker served (not refused)."""
    return [(r.api_key, r.api_version) for r in broker.requests if r.api_key in (1, 2) and r.answer[8:10] == b"\0\0"]


def metadata_requests(broker):
    return [r for r in broker.requests if r.api_key == 3]


class FakeCluster:
    """Two fake brokers over one set of logs and one routes table; every route names A at first."""

    def __init__(self, case: unittest.TestCase, topics: dict) -> None:
        self.routes: dict = {}
        self.a = FakeBroker(topics, routes=self.routes)
        self.b = FakeBroker(share=self.a)
        for topic, count in topics.items():
            for p in range(count):
                self.routes[(topic, p)] = self.a.address
        case.addCleanup(self.a.close)
        case.addCleanup(self.b.close)


def payloads(result):
    return [(r.offset, bytes(r.payload)) for r in result.records]


class ClientRoutesTest(unittest.TestCase):
    def client(self, bootstrap, **options) -> Client:
        client = Client.connect(bootstrap, TIMEOUT, **{**QUICK, **options})
        self.addCleanup(client.close)
        return client

    def test_a_partition_routed_to_b_is_produced_to_and_fetched_from_b(self):
        c = FakeCluster(self, {"t": 2})
        c.routes[("t", 1)] = c.b.address
        client = self.client(c.a.address)
        self.assertEqual(client.produce("t", 1, [b"x", b"y"]).base_offset, 0)
        self.assertEqual(client.produce("t", 0, [b"z"]).base_offset, 0)
        self.assertEqual(payloads(client.fetch("t", 1, 0, max_wait_millis=0)), [(0, b"x"), (1, b"y")])
        self.assertEqual(data_requests(c.b), [(1, 3), (2, 3)])
        self.assertEqual(data_requests(c.a), [(1, 3)])
        self.assertEqual(client.route_of("t", 1), c.b.address)

    def test_not_primary_is_followed_to_the_route_in_the_answer_without_another_metadata(self):
        c = FakeCluster(self, {"t": 1})
        client = self.client([c.a.address, c.b.address])
        self.assertEqual(client.produce("t", 0, [b"first"]).base_offset, 0)
        asked = len(metadata_requests(c.a)) + len(metadata_requests(c.b))
        c.routes[("t", 0)] = c.b.address  # the partition moved: A answers NOT_PRIMARY naming B
        self.assertEqual(client.produce("t", 0, [b"second"]).base_offset, 1)
        self.assertEqual(payloads(client.fetch("t", 0, 0, max_wait_millis=0)), [(0, b"first"), (1, b"second")])
        self.assertEqual(len(metadata_requests(c.a)) + len(metadata_requests(c.b)), asked)
        self.assertEqual(data_requests(c.b), [(1, 3), (2, 3)])

    def test_no_primary_twice_then_the_batch_is_acknowledged_after_metadata_each_time(self):
        c = FakeCluster(self, {"t": 1})
        c.a.no_primary_next = 2
        client = self.client(c.a.address)
        self.assertEqual(client.produce("t", 0, [b"r"]).base_offset, 0)
        self.assertEqual(c.a.payloads("t", 0), [b"r"])
        self.assertEqual(len(metadata_requests(c.a)), 3, "one to learn the route, one after each NO_PRIMARY")

    def test_no_primary_that_never_ends_is_raised_once_the_attempts_are_spent(self):
        c = FakeCluster(self, {"t": 1})
        c.routes[("t", 0)] = ""  # nobody serves it: METADATA says so
        client = self.client(c.a.address, route_attempts_max=3)
        with self.assertRaises(BrokerError) as caught:
            client.produce("t", 0, [b"lost"])
        self.assertEqual(caught.exception.code, ErrorCode.NO_PRIMARY)
        self.assertTrue(caught.exception.retriable)
        self.assertEqual(len(metadata_requests(c.a)), 3)
        self.assertEqual(c.a.payloads("t", 0), [])

    def test_a_refusal_that_is_not_retriable_is_raised_at_once(self):
        c = FakeCluster(self, {"t": 1})
        client = self.client(c.a.address)
        with self.assertRaises(BrokerError) as caught:
            client.produce("t", 5, [b"x"])
        self.assertEqual(caught.exception.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    def test_the_primary_dies_mid_fetch_and_metadata_from_the_other_broker_names_the_new_one(self):
        c = FakeCluster(self, {"t": 1})
        c.routes[("t", 0)] = c.b.address
        client = self.client(c.a.address)
        self.assertEqual(client.produce("t", 0, [b"a0"]).base_offset, 0)

        def die(request):
            if request.api_key != 2:
                return None
            c.routes[("t", 0)] = c.a.address  # A takes the partition over
            threading.Thread(target=c.b.close).start()
            return Reply(b"", close=True)

        c.b.respond = die
        consumer = client.consumer("t", 0, 0, max_wait_millis=0)
        self.assertEqual([(r.offset, bytes(r.payload)) for r in consumer.poll()], [(0, b"a0")])
        self.assertEqual(client.produce("t", 0, [b"a1"]).base_offset, 1)
        self.assertEqual([(r.offset, bytes(r.payload)) for r in consumer.poll()], [(1, b"a1")])
        self.assertEqual(client.route_of("t", 0), c.a.address)

    def test_metadata_after_apply_topics_carries_the_applys_revision(self):
        c = FakeCluster(self, {"t": 1})
        client = self.client([c.a.address, c.b.address])
        revision = client.apply_topics([Upsert(TopicSpec("t", 1))])
        client.produce("t", 0, [b"x"])
        asked = metadata_requests(c.a) + metadata_requests(c.b)
        self.assertEqual([(r.api_version, r.fields["min_revision"]) for r in asked], [(3, revision)])
        self.assertGreater(revision, 0)

    def test_a_producer_over_a_client_sends_each_batch_to_its_primary(self):
        c = FakeCluster(self, {"t": 2})
        c.routes[("t", 1)] = c.b.address
        with Producer(Client.connect(c.a.address, TIMEOUT, **QUICK), ProducerConfig(linger=0.001)) as producer:
            offsets = [producer.send("t", b"p1", partition=1), producer.send("t", b"p0", partition=0)]
            self.assertEqual([f.result(TIMEOUT) for f in offsets], [0, 0])
        self.assertEqual(data_requests(c.b), [(1, 3)])
        self.assertEqual(c.b.payloads("t", 1), [b"p1"])


class ClientSingleBrokerTest(unittest.TestCase):
    def test_a_real_single_broker_gets_v3_and_everything_works(self):
        sent = []
        original = Connection._send

        def recording(self, api_key, api_version, payload):
            sent.append((api_key, api_version))
            return original(self, api_key, api_version, payload)

        with (
            default_broker() as address,
            mock.patch.object(Connection, "_send", recording),
            Client.connect(address, TIMEOUT) as client,
        ):
            topic = client.topic("default")
            result = topic.send(b"hello", key=b"k")
            fetched = client.fetch("default", 0, result.base_offset, max_wait_millis=0)
            self.assertEqual([bytes(r.payload) for r in fetched.records], [b"hello"])
            self.assertEqual(client.route_of("default", 0), address)
        versions = {key: {v for k, v in sent if k == key} for key in (1, 2, 3)}
        self.assertEqual(versions, {1: {3}, 2: {3}, 3: {3}})


if __name__ == "__main__":
    unittest.main()
