"""AUTHENTICATE from the asyncio connection and client: as the synchronous tests, plus requests in
flight together when a token expires (one new exchange for all of them)."""

import asyncio
import unittest

from booblik import ProducerConfig, aio
from booblik.errors import AuthenticationFailedError, AuthenticationRequiredError, CredentialsExpiredError
from booblik.scram import BrokerNotProvenError
from tests.fakebroker_auth import make_jwt
from tests.test_authenticate import KEY_ID, AuthTestCase, token_for

TIMEOUT = 5.0


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 20))


class AioScramTest(AuthTestCase):
    def test_the_connection_is_authenticated_before_it_is_handed_over(self):
        broker = self.broker()

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT, user="alice", password="wonderland") as c:
                self.assertEqual(c.principal, "alice")
                await c.produce("default", 0, [b"as alice"])

        run(main())
        self.assertEqual([(r.api_key, r.principal) for r in broker.requests], [(10, None), (10, "alice"), (1, "alice")])

    def test_a_wrong_password_is_authentication_failed_with_the_brokers_reason(self):
        broker = self.broker()
        connect = aio.Connection.connect(broker.address, TIMEOUT, user="alice", password="looking-glass")
        with self.assertRaises(AuthenticationFailedError) as caught:
            run(connect._open())
        self.assertIn("wrong user name or password", str(caught.exception))
        self.assertNotIn("looking-glass", str(caught.exception))

    def test_a_broker_whose_server_signature_does_not_verify_is_refused(self):
        broker = self.broker(forge_signature=True)
        with self.assertRaises(BrokerNotProvenError):
            run(aio.Connection.connect(broker.address, TIMEOUT, user="alice", password="wonderland")._open())

    def test_authentication_required_is_shown_by_name(self):
        broker = self.broker()

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT) as connection:
                await connection.metadata()

        with self.assertRaises(AuthenticationRequiredError) as caught:
            run(main())
        self.assertEqual(caught.exception.name, "AUTHENTICATION_REQUIRED")


class AioTokenTest(AuthTestCase):
    def test_requests_in_flight_when_the_token_expires_share_one_new_exchange(self):
        broker = self.broker()
        issued = []

        async def fresh_token():  # a coroutine: an identity provider asked over the network
            await asyncio.sleep(0)
            issued.append(token_for(f"svc-{len(issued)}", self.clock))
            return issued[-1]

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT, token=fresh_token) as connection:
                self.clock.now += 120
                results = await asyncio.gather(*(connection.produce("default", 0, [bytes([i])]) for i in range(5)))
                return sorted(r.base_offset for r in results), connection.principal

        offsets, principal = run(main())
        self.assertEqual(offsets, [0, 1, 2, 3, 4])
        self.assertEqual((len(issued), principal), (2, "svc-1"))
        self.assertEqual(broker.auth.exchanges, 2)
        self.assertEqual(sorted(broker.payloads("default", 0)), [bytes([i]) for i in range(5)])

    def test_an_expired_plain_string_token_reaches_the_caller(self):
        broker = self.broker()

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT, token=token_for("svc", self.clock)) as c:
                self.clock.now += 120
                await c.metadata()

        with self.assertRaises(CredentialsExpiredError):
            run(main())

    def test_a_token_signed_with_another_key_is_refused(self):
        broker = self.broker()
        forged = make_jwt(b"not the broker's key", KEY_ID, {"sub": "x", "exp": int(self.clock.now) + 60})
        with self.assertRaises(AuthenticationFailedError):
            run(aio.Connection.connect(broker.address, TIMEOUT, token=forged)._open())


class AioProducerTokenTest(AuthTestCase):
    def test_batches_refused_expired_are_sent_again_in_order_before_later_ones(self):
        broker = self.broker({"orders": 3})
        issued = []

        def fresh_token():
            issued.append(token_for(f"svc-{len(issued)}", self.clock))
            return issued[-1]

        async def main():
            connection = await aio.Connection.connect(broker.address, TIMEOUT, token=fresh_token)
            async with aio.Producer(connection, ProducerConfig(linger=60)) as producer:
                self.clock.now += 120
                first = [producer.send("orders", f"{p}-a".encode(), partition=p) for p in range(3)]
                await producer.flush()  # three batches pipelined, each refused CREDENTIALS_EXPIRED first
                later = producer.send("orders", b"0-b", partition=0)
                await producer.flush()
                return [await f for f in first], await later

        offsets, later = run(main())
        self.assertEqual((offsets, later), ([0, 0, 0], 1))
        self.assertEqual(broker.payloads("orders", 0), [b"0-a", b"0-b"])
        self.assertEqual(len(issued), 2)

    def test_a_batch_written_while_authenticating_again_waits_its_turn(self):
        broker = self.broker({"orders": 1})
        issued = []

        async def slow_token():  # the identity provider takes a while: sends keep coming meanwhile
            issued.append(token_for(f"svc-{len(issued)}", self.clock))
            for _ in range(5):
                await asyncio.sleep(0)
            return issued[-1]

        async def main():
            connection = await aio.Connection.connect(broker.address, TIMEOUT, token=slow_token)
            async with aio.Producer(connection, ProducerConfig(linger=0)) as producer:
                self.clock.now += 120
                futures = []
                for i in range(20):
                    futures.append(producer.send("orders", bytes([i]), partition=0))
                    await asyncio.sleep(0)
                return [await f for f in futures]

        self.assertEqual(run(main()), list(range(20)))
        self.assertEqual(broker.payloads("orders", 0), [bytes([i]) for i in range(20)])


class AioClientTest(AuthTestCase):
    def test_every_broker_connection_and_every_reconnect_authenticates(self):
        broker = self.broker()

        async def main():
            async with aio.Client.connect(broker.address, TIMEOUT, user="alice", password="wonderland") as client:
                await client.produce("default", 0, [b"one"])
                (await client._brokers[broker.address]).connection._shutdown(ConnectionError("dropped"))
                await client.produce("default", 0, [b"two"])

        run(main())
        self.assertEqual(broker.auth.exchanges, 4)
        self.assertEqual(broker.payloads("default", 0), [b"one", b"two"])


if __name__ == "__main__":
    unittest.main()
