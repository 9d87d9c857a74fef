"""apply_topics, list_topics and watch_topics (sync and asyncio) against the fake broker, which
decodes what was sent and keeps a spec store of its own."""

import asyncio
import contextlib
import os
import threading
import time
import unittest

from booblik import (
    REVISION_MUST_NOT_EXIST,
    Connection,
    Delete,
    InvalidArgumentRefusal,
    OffsetMismatchError,
    RevisionMismatchError,
    TopicSpec,
    Upsert,
    aio,
)
from tests.fakebroker import FakeBroker
from tests.support import BROKER_ENTRY, NODE, default_broker

TIMEOUT = 5.0
WAIT_S = 5.0  # the most a test waits for an event before it fails


class TopicsTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker({"default": 1})
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def create_orders(self):
        spec = TopicSpec("orders", 3, labels={"team": "payments"}, revision=REVISION_MUST_NOT_EXIST)
        return self.connection.apply_topics([Upsert(spec)])

    def test_a_created_topic_is_listed_by_its_label_with_the_new_revision(self):
        revision = self.create_orders()
        self.assertEqual(revision, 2)  # the startup topics are revision 1
        self.assertEqual(self.connection.metadata("orders")[0].name, "orders")
        listing = self.connection.list_topics("team=payments")
        self.assertEqual((listing.revision, listing.names()), (2, ["orders"]))
        (topic,) = listing.topics
        self.assertEqual((topic.spec.partitions, topic.spec.labels, topic.spec.revision), (3, {"team": "payments"}, 2))
        self.assertEqual([r.primary for r in topic.routes], [self.broker.address] * 3)
        self.assertEqual(self.connection.list_topics("team!=payments").names(), ["default"])
        self.assertEqual(self.connection.list_topics().names(), ["default", "orders"])

    def test_what_goes_on_the_wire_is_the_spec_asked_for(self):
        self.create_orders()
        (request,) = self.broker.requests[:1]
        self.assertEqual((request.api_key, request.api_version, request.fields["dry_run"]), (4, 1, 0))
        (change,) = request.fields["changes"]
        self.assertEqual(
            {
                k: change[k]
                for k in ("op", "name", "partitions", "labels", "revision", "retention_bytes", "segment_bytes")
            },
            {"op": "upsert", "name": "orders", "partitions": 3, "labels": {"team": "payments"}, "revision": 0,
             "retention_bytes": -2, "segment_bytes": 0},
        )

    def test_a_stale_revision_is_refused_naming_the_topic_and_both_revisions(self):
        created = self.create_orders()
        self.connection.apply_topics([Upsert(TopicSpec("orders", 4, revision=created))])
        with self.assertRaises(RevisionMismatchError) as caught:
            self.connection.apply_topics([Upsert(TopicSpec("orders", 5, revision=created))])
        error = caught.exception
        self.assertEqual((error.topic, error.expected_revision, error.actual_revision), ("orders", 2, 3))
        self.assertEqual(error.name, "REVISION_MISMATCH")
        self.assertEqual(self.connection.list_topics("name=orders").topics[0].spec.partitions, 4)

    def test_must_not_exist_on_an_existing_topic_is_refused(self):
        self.create_orders()
        with self.assertRaises(RevisionMismatchError) as caught:
            self.create_orders()
        self.assertEqual((caught.exception.expected_revision, caught.exception.actual_revision), (0, 2))

    def test_one_bad_change_applies_nothing_and_the_connection_stays_usable(self):
        changes = [Upsert(TopicSpec("fresh", 1, revision=0)), Delete("default", expected_revision=7)]
        with self.assertRaises(RevisionMismatchError) as caught:
            self.connection.apply_topics(changes)
        self.assertEqual((caught.exception.change_index, caught.exception.topic), (1, "default"))
        self.assertEqual(self.connection.list_topics().names(), ["default"])
        self.assertFalse(self.connection.closed)

    def test_a_refused_apply_of_many_changes_is_named_in_one_short_line(self):
        changes = [Delete("default", 9)] + [Delete(f"t{i}") for i in range(1000)]
        with self.assertRaises(RevisionMismatchError) as caught:
            self.connection.apply_topics(changes)
        self.assertIn("APPLY -default, -t0, -t1, and 998 more refused", str(caught.exception))
        self.assertLess(len(str(caught.exception)), 200)

    def test_a_value_the_broker_refuses_names_the_field(self):
        self.create_orders()
        with self.assertRaises(InvalidArgumentRefusal) as caught:
            self.connection.apply_topics([Upsert(TopicSpec("orders", 2))])
        self.assertEqual(caught.exception.index, 0)
        self.assertIn("changes[0].partitions: 2", caught.exception.detail)

    def test_dry_run_changes_nothing_and_answers_the_current_revision(self):
        self.assertEqual(self.connection.apply_topics([Upsert(TopicSpec("orders", 1))], dry_run=True), 1)
        self.assertEqual(self.connection.list_topics().names(), ["default"])

    def test_delete_removes_the_topic(self):
        created = self.create_orders()
        self.assertEqual(self.connection.apply_topics([Delete("orders", created)]), created + 1)
        self.assertEqual(self.connection.list_topics().names(), ["default"])

    def test_a_field_refused_here_sends_nothing(self):
        with self.assertRaisesRegex(ValueError, "partitions: 0"):
            self.connection.apply_topics([Upsert(TopicSpec("orders", 0))])
        self.assertEqual(self.broker.requests, [])

    def test_a_watch_yields_now_then_the_next_change_even_after_waits_that_ended_empty(self):
        with self.connection.watch_topics("team=payments", max_wait_millis=50) as watch:
            first = next(watch)
            self.assertEqual((first.revision, first.topics), (1, []))
            lists_before = len([r for r in self.broker.requests if r.api_key == 5])

            def apply_after_two_empty_waits():
                self.broker.wait_for_requests(len(self.broker.requests) + 3)  # the watch asked again
                self.create_orders()

            applier = threading.Thread(target=apply_after_two_empty_waits)
            applier.start()
            second = next(watch)
            applier.join(WAIT_S)
        self.assertEqual((second.revision, second.names()), (2, ["orders"]))
        watches = [r for r in self.broker.requests if r.api_key == 5][lists_before:]
        self.assertGreaterEqual(len(watches), 3)
        self.assertEqual({r.fields["watch_revision"] for r in watches}, {1})
        self.assertEqual({r.fields["max_wait_millis"] for r in watches}, {50})

    def test_closing_a_watch_from_another_thread_ends_a_held_list(self):
        watch = self.connection.watch_topics(max_wait_millis=4000)
        next(watch)
        closer = threading.Thread(target=lambda: (self.broker.wait_for_fetch_waiting(), watch.close()))
        closer.start()
        with self.assertRaises(StopIteration):
            next(watch)
        closer.join(WAIT_S)
        self.assertFalse(self.connection.closed)  # the watch had a connection of its own

    def test_an_expected_offset_lands_the_batch_only_where_the_partition_ends(self):
        self.assertEqual(self.connection.produce("default", 0, [b"a"], expected_offset=0).base_offset, 0)
        with self.assertRaises(OffsetMismatchError) as caught:
            self.connection.produce("default", 0, [b"b", b"c"], expected_offset=0)
        self.assertEqual((caught.exception.expected_offset, caught.exception.log_end_offset), (0, 1))
        self.assertEqual(self.broker.payloads("default", 0), [b"a"])
        self.assertEqual([r.api_version for r in self.broker.requests], [2, 2])
        self.assertEqual(self.connection.produce("default", 0, [b"b"]).base_offset, 1)  # v1 without one
        self.assertEqual(self.broker.requests[-1].api_version, 1)

    def test_a_watch_wait_as_long_as_the_timeout_is_refused(self):
        with self.assertRaisesRegex(ValueError, "max_wait_millis: 5000 ms is not shorter"):
            self.connection.watch_topics(max_wait_millis=5000)


class AioTopicsTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker({"default": 1})
        self.addCleanup(self.broker.close)
        self.connection = await aio.Connection.connect(self.broker.address, timeout=TIMEOUT)

    async def asyncTearDown(self):
        await self.connection.close()

    async def test_create_list_stale_and_delete(self):
        created = await self.connection.apply_topics([Upsert(TopicSpec("orders", 3, {"team": "payments"}, revision=0))])
        listing = await self.connection.list_topics("team=payments")
        self.assertEqual((listing.revision, listing.names()), (created, ["orders"]))
        await self.connection.apply_topics([Upsert(TopicSpec("orders", 3, {"team": "web"}, revision=created))])
        with self.assertRaises(aio.RevisionMismatchError) as caught:
            await self.connection.apply_topics([Delete("orders", created)])
        self.assertEqual((caught.exception.expected_revision, caught.exception.actual_revision), (created, created + 1))
        await self.connection.apply_topics([Delete("orders", created + 1)])
        self.assertEqual((await self.connection.list_topics()).names(), ["default"])

    async def test_a_watch_is_woken_by_an_apply_and_ends_with_its_async_with(self):
        async with self.connection.watch_topics("team=payments", max_wait_millis=3000) as watch:
            first = await watch.__anext__()
            self.assertEqual(first.topics, [])
            pending = asyncio.ensure_future(watch.__anext__())
            await asyncio.to_thread(self.broker.wait_for_fetch_waiting)  # the LIST is held
            await self.connection.apply_topics([Upsert(TopicSpec("orders", 1, {"team": "payments"}, revision=0))])
            second = await asyncio.wait_for(pending, WAIT_S)
            self.assertEqual(second.names(), ["orders"])
        with self.assertRaises(StopAsyncIteration):
            await watch.__anext__()

    async def test_an_expected_offset_that_is_not_the_end_writes_nothing(self):
        with self.assertRaises(aio.OffsetMismatchError) as caught:
            await self.connection.produce("default", 0, [b"x"], expected_offset=3)
        self.assertEqual((caught.exception.expected_offset, caught.exception.log_end_offset), (3, 0))
        self.assertEqual(self.broker.payloads("default", 0), [])
        self.assertEqual((await self.connection.produce("default", 0, [b"x"], expected_offset=0)).base_offset, 0)

    async def test_cancelling_a_held_watch_leaves_this_connection_usable(self):
        watch = self.connection.watch_topics(max_wait_millis=3000)
        await watch.__anext__()
        pending = asyncio.ensure_future(watch.__anext__())
        await asyncio.to_thread(self.broker.wait_for_fetch_waiting)
        pending.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await pending
        await watch.aclose()
        self.assertEqual((await self.connection.list_topics()).names(), ["default"])


@unittest.skipUnless(NODE and os.path.exists(BROKER_ENTRY), "the broker is not built (npx tsc -b at the root)")
class RealBrokerTopicsTest(unittest.TestCase):
    """The same calls against the real broker, with its default topics."""

    @classmethod
    def setUpClass(cls):
        cls.stack = contextlib.ExitStack()
        cls.address = cls.stack.enter_context(default_broker())

    @classmethod
    def tearDownClass(cls):
        cls.stack.close()

    def setUp(self):
        self.connection = Connection.connect(self.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_create_list_stale_and_delete(self):
        name = f"py-{os.getpid()}-crud"
        created = self.connection.apply_topics([Upsert(TopicSpec(name, 2, {"suite": name}, revision=0))])
        listing = self.connection.list_topics(f"suite={name}")
        self.assertEqual((listing.revision, listing.names()), (created, [name]))
        (topic,) = listing.topics
        self.assertEqual((topic.spec.partitions, topic.spec.revision, len(topic.routes)), (2, created, 2))
        self.assertEqual(topic.routes[0].primary, self.address)
        with self.assertRaises(RevisionMismatchError) as caught:
            self.connection.apply_topics([Upsert(TopicSpec(name, 3, revision=0))])
        self.assertEqual((caught.exception.topic, caught.exception.actual_revision), (name, created))
        with self.assertRaises(InvalidArgumentRefusal) as caught:
            self.connection.apply_topics([Upsert(TopicSpec(name, 1, revision=created))])
        self.assertIn("partitions", caught.exception.detail)
        self.assertEqual(self.connection.apply_topics([Delete(name, created)]), created + 1)
        self.assertEqual(self.connection.list_topics(f"suite={name}").topics, [])

    def test_an_expected_offset_fences_a_writer(self):
        end = self.connection.metadata("default")[0].partitions[0].high_watermark
        self.assertEqual(self.connection.produce("default", 0, [b"mine"], expected_offset=end).base_offset, end)
        with self.assertRaises(OffsetMismatchError) as caught:
            self.connection.produce("default", 0, [b"stale"], expected_offset=end)
        self.assertEqual(caught.exception.log_end_offset, end + 1)
        self.assertEqual(self.connection.metadata("default")[0].partitions[0].high_watermark, end + 1)

    def test_a_selector_that_does_not_parse_is_refused_with_the_brokers_reason(self):
        with self.assertRaises(InvalidArgumentRefusal) as caught:
            self.connection.list_topics("a in (x")
        self.assertEqual(caught.exception.index, -1)
        self.assertIn("selector", caught.exception.detail)

    def test_a_watch_is_woken_by_an_apply(self):
        name = f"py-{os.getpid()}-watch"
        with self.connection.watch_topics(f"suite={name}", max_wait_millis=4000) as watch:
            self.assertEqual(next(watch).topics, [])
            woken = []
            waiter = threading.Thread(target=lambda: woken.append((next(watch), time.monotonic())))
            waiter.start()
            # The watch's LIST is held once the broker has it; an apply before that is seen too
            # (the revision moved past the one it names), so no wait for it is needed here.
            self.connection.apply_topics([Upsert(TopicSpec(name, 1, {"suite": name}, revision=0))])
            applied = time.monotonic()
            waiter.join(WAIT_S)
        self.assertEqual(woken[0][0].names(), [name])
        self.assertLess(woken[0][1] - applied, 1.0)
        self.connection.apply_topics([Delete(name)])

    def test_asyncio_create_list_and_delete(self):
        async def scenario():
            name = f"py-{os.getpid()}-aio"
            async with aio.Connection.connect(self.address, timeout=TIMEOUT) as connection:
                created = await connection.apply_topics([Upsert(TopicSpec(name, 1, {"suite": name}, revision=0))])
                self.assertEqual((await connection.list_topics(f"suite={name}")).names(), [name])
                async with connection.watch_topics(f"suite={name}", max_wait_millis=4000) as watch:
                    self.assertEqual((await watch.__anext__()).names(), [name])
                    pending = asyncio.ensure_future(watch.__anext__())
                    await connection.apply_topics([Delete(name, created)])
                    self.assertEqual((await asyncio.wait_for(pending, WAIT_S)).topics, [])

        asyncio.run(scenario())


if __name__ == "__main__":
    unittest.main()
