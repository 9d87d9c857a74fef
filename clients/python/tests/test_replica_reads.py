"""booblik.Client with prefer_zone reads from in-sync replicas in that zone: against fake cluster
brokers that answer METADATA v4 and FETCH v4 and record which broker served each fetch, and once
against the real single-node broker, whose route is itself."""

import os
import unittest
from unittest import mock

from booblik import Client, ReplicaState, RouteV2
from booblik.connection import Connection
from tests.fakebroker import FakeBroker, Replica, Reply
from tests.support import BROKER_ENTRY, NODE, default_broker
from tests.test_client import QUICK, TIMEOUT

IN_SYNC, LIVE = 1, 2
READABLE = IN_SYNC | LIVE


class ZonedCluster:
    """Fake brokers over one set of logs and one record of routes and replicas, named by letter;
    ``a`` is every partition's primary. ``old`` names brokers from before reads from replicas."""

    def __init__(self, case: unittest.TestCase, names: str = "abc", topics: dict | None = None, old: str = "") -> None:
        topics = topics if topics is not None else {"t": 1}
        self.routes: dict = {}
        self.brokers: dict = {}
        for name in names:
            first = self.brokers.get(names[0])
            if first is None:
                broker = FakeBroker(topics, routes=self.routes, replica_reads=name not in old)
            else:
                broker = FakeBroker(share=first, replica_reads=name not in old)
            case.addCleanup(broker.close)
            self.brokers[name] = broker
        for topic, count in topics.items():
            for p in range(count):
                self.routes[(topic, p)] = self.a.address

    def __getattr__(self, name: str) -> FakeBroker:
        try:
            return self.__dict__["brokers"][name]
        except KeyError:
            raise AttributeError(name) from None

    def place(self, *replicas: tuple, key: tuple = ("t", 0)) -> None:
        """The partition's replicas in placement order, each (name, zone, flags)."""
        self.a.replica_sets[key] = [Replica(self.brokers[n].address, z, f, member=n) for n, z, f in replicas]

    def served(self) -> list:
        """(broker name, FETCH version) of every fetch served, in order."""
        names = {b.address: n for n, b in self.brokers.items()}
        return [(names[s.address], s.api_version) for s in self.a.served]

    def versions_sent(self, api_key: int) -> set:
        return {r.api_version for b in self.brokers.values() for r in b.requests if r.api_key == api_key}

    def metadata_count(self) -> int:
        return sum(1 for b in self.brokers.values() for r in b.requests if r.api_key == 3)


def offsets(result) -> list:
    return [r.offset for r in result.records]


class ReplicaReadsTest(unittest.TestCase):
    def client(self, c: ZonedCluster, **options) -> Client:
        client = Client.connect(c.a.address, TIMEOUT, **{**QUICK, **options})
        self.addCleanup(client.close)
        return client

    def test_a_consumer_preferring_z2_reads_from_the_z2_in_sync_replica_not_the_primary(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE), ("c", "z3", READABLE))
        client = self.client(c, prefer_zone="z2")
        client.produce("t", 0, [b"x", b"y", b"z"])
        consumer = client.consumer("t", 0, 0, max_wait_millis=0)
        self.assertEqual([(r.offset, bytes(r.payload)) for r in consumer.poll()], [(0, b"x"), (1, b"y"), (2, b"z")])
        self.assertEqual(c.served(), [("b", 4)])
        self.assertEqual(c.versions_sent(3), {4})

    def test_the_metadata_answer_shows_each_replica_with_its_zone_in_sync_flag_epoch_and_lag(self):
        c = ZonedCluster(self)
        c.a.epochs[("t", 0)] = 2
        c.a.replica_sets[("t", 0)] = [
            Replica(c.a.address, "z1", READABLE, member="a"),
            Replica(c.b.address, "z2", LIVE, member="b", lag_records=5, lag_millis=1200),
        ]
        client = self.client(c, prefer_zone="z2")
        (topic,) = client.metadata_with_routes("t").topics
        want = RouteV2(
            2,
            c.a.address,
            (ReplicaState("a", c.a.address, "z1", 3, 0, 0), ReplicaState("b", c.b.address, "z2", 2, 5, 1200)),
        )
        self.assertEqual(topic.partitions[0].route_v2, want)
        self.assertEqual(topic.partitions[0].route.primary, c.a.address)

    def test_a_replica_in_the_zone_not_in_sync_or_not_live_is_never_picked(self):
        c = ZonedCluster(self, "abcd")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE), ("c", "z2", IN_SYNC), ("d", "z2", READABLE))
        client = self.client(c, prefer_zone="z2")
        for _ in range(3):
            self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("d", 4)] * 3)
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE), ("c", "z2", IN_SYNC))
        client.metadata_with_routes("t")  # the route read again: nobody readable in z2 now
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served()[-1], ("a", 4))

    def test_no_replica_in_the_zone_means_the_primary(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE), ("c", "z3", READABLE))
        client = self.client(c, prefer_zone="z9")
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("a", 4)])

    def test_the_primary_is_read_when_it_is_in_the_zone_even_listed_after_another(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r")
        c.place(("b", "z2", READABLE), ("a", "z2", READABLE))
        client = self.client(c, prefer_zone="z2")
        client.fetch("t", 0, 0, max_wait_millis=0)
        self.assertEqual(c.served(), [("a", 4)])

    def test_not_primary_from_the_replica_is_served_by_the_primary_and_the_next_pick_uses_the_refreshed_route(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r0", b"r1")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE), ("c", "z2", LIVE))
        client = self.client(c, prefer_zone="z2")
        client.metadata_with_routes("t")
        asked = c.metadata_count()
        # b leaves the in-sync set and c joins it; the client still holds the route it read.
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE), ("c", "z2", READABLE))
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0, 1])
        self.assertEqual(c.served(), [("a", 4)], "b refused NOT_PRIMARY; the primary it named served")
        self.assertEqual(c.metadata_count(), asked, "the primary the answer named, with no METADATA first")
        self.assertEqual(offsets(client.fetch("t", 0, 1, max_wait_millis=0)), [1])
        self.assertEqual(c.served(), [("a", 4), ("c", 4)])
        self.assertEqual(c.metadata_count(), asked + 1, "the route read again before the next pick")

    def test_a_lost_connection_to_the_replica_is_served_by_the_primary(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        c.b.respond = lambda request: Reply(b"", close=True) if request.api_key == 2 else None
        client = self.client(c, prefer_zone="z2")
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual([name for name, _ in c.served()][-1], "a")

    def test_a_replica_whose_high_watermark_trails_one_seen_before_does_not_take_it_back(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, *[b"r"] * 5)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = self.client(c, prefer_zone="z2")
        client.metadata_with_routes("t")
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE))  # b out of sync: it refuses, a serves
        self.assertEqual(client.fetch("t", 0, 0, max_wait_millis=0).high_watermark, 5)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        c.b.commit[("t", 0)] = 3  # back in sync, but the commit offset it knows trails the primary's
        result = client.fetch("t", 0, 5, max_wait_millis=0)
        self.assertEqual(c.served(), [("a", 4), ("b", 4)])
        self.assertEqual(c.a.served[-1].high_watermark, 3, "the replica answered its own, lower, high watermark")
        self.assertEqual((result.high_watermark, result.records, result.next_offset), (5, [], 5))
        self.assertEqual(client.fetch("t", 0, 2, max_wait_millis=0).high_watermark, 5)

    def test_a_cluster_without_metadata_v4_is_asked_v3_and_read_from_primaries(self):
        c = ZonedCluster(self, old="abc")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = self.client(c, prefer_zone="z2")
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("a", 3), ("a", 3)])
        self.assertEqual(c.versions_sent(3), {3})
        self.assertEqual(c.metadata_count(), 1, "a v3 answer is a route like any other: not read again per fetch")

    def test_a_replica_without_fetch_v4_is_passed_over_for_v3_to_the_primary(self):
        c = ZonedCluster(self, old="b")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = self.client(c, prefer_zone="z2")
        self.assertEqual(offsets(client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("a", 3)])

    def test_without_prefer_zone_nothing_sends_v4(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = self.client(c)
        client.produce("t", 0, [b"x"])
        client.metadata_with_routes("t")
        client.list_topics()
        self.assertEqual(len(client.consumer("t", 0, 0, max_wait_millis=0).poll()), 1)
        self.assertEqual(c.served(), [("a", 3)])
        self.assertEqual((c.versions_sent(3), c.versions_sent(2), c.versions_sent(5)), ({3}, {3}, {1}))

    def test_an_empty_or_non_string_zone_is_refused_naming_the_option(self):
        with self.assertRaisesRegex(ValueError, "prefer_zone: empty"):
            Client("127.0.0.1:1", prefer_zone="")
        with self.assertRaisesRegex(TypeError, "prefer_zone: expected a zone name"):
            Client("127.0.0.1:1", prefer_zone=2)

    def test_list_topics_with_replicas_shows_each_partitions_replicas_with_lags_unknown(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE))
        client = self.client(c)
        (topic,) = client.list_topics("", replicas=True).topics
        (route,) = topic.routes_v2
        self.assertEqual(
            [(r.member, r.zone, r.flags, r.lag_records) for r in route.replicas],
            [("a", "z1", 3, -1), ("b", "z2", 2, -1)],
        )
        self.assertEqual(topic.routes[0].primary, c.a.address)


@unittest.skipUnless(NODE and os.path.exists(BROKER_ENTRY), "the broker is not built (npx tsc -b at the root)")
class ReplicaReadsSingleBrokerTest(unittest.TestCase):
    def test_a_real_single_broker_with_prefer_zone_routes_to_itself_and_serves_v4(self):
        sent = []
        original = Connection._send

        def recording(self, api_key, api_version, payload):
            sent.append((api_key, api_version))
            return original(self, api_key, api_version, payload)

        with (
            default_broker() as address,
            mock.patch.object(Connection, "_send", recording),
            Client.connect(address, TIMEOUT, prefer_zone="z2") as client,
        ):
            (topic,) = client.metadata_with_routes("default").topics
            self.assertEqual(
                topic.partitions[0].route_v2, RouteV2(0, address, (ReplicaState("", address, "", 3, 0, 0),))
            )
            base = client.produce("default", 0, [b"one", b"two"]).base_offset
            fetched = client.fetch("default", 0, base, max_wait_millis=0)
            self.assertEqual([bytes(r.payload) for r in fetched.records], [b"one", b"two"])
            self.assertEqual(fetched.high_watermark, base + 2)
            consumer = client.consumer("default", 0, base + 1, max_wait_millis=0)
            self.assertEqual([bytes(r.payload) for r in consumer.poll()], [b"two"])
        self.assertEqual({v for k, v in sent if k in (2, 3)}, {4})


if __name__ == "__main__":
    unittest.main()
