"""AUTHENTICATE against the fake broker (synchronous): SCRAM-SHA-256 and TOKEN before the
connection is handed over, refusals by name, a broker that cannot prove itself, and a token
refreshed on CREDENTIALS_EXPIRED on the same connection."""

import time
import unittest

from booblik import Client, Connection, Producer, ProducerConfig
from booblik.errors import (
    AuthenticationFailedError,
    AuthenticationRequiredError,
    CredentialsExpiredError,
    NotAuthorizedError,
    ProtocolError,
)
from booblik.refusals import refusal
from booblik.scram import BrokerNotProvenError
from tests.fakebroker import FakeBroker
from tests.fakebroker_auth import FakeAuth, make_jwt

TIMEOUT = 5.0
KEY_ID, KEY = "k1", b"a test signing key of 32 bytes.."


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def token_for(sub: str, clock: FakeClock, lifetime: int = 60) -> str:
    now = int(clock.now)
    return make_jwt(KEY, KEY_ID, {"sub": sub, "iat": now, "exp": now + lifetime})


class AuthTestCase(unittest.TestCase):
    def broker(self, topics: dict | None = None, **auth) -> FakeBroker:
        self.clock = FakeClock()
        auth.setdefault("users", {"alice": "wonderland"})
        auth.setdefault("token_keys", {KEY_ID: KEY})
        broker = FakeBroker(topics or {"default": 1}, auth=FakeAuth(clock=self.clock, **auth))
        self.addCleanup(broker.close)
        return broker

    def connect(self, address, **options) -> Connection:
        connection = Connection.connect(address, TIMEOUT, **options)
        self.addCleanup(connection.close)
        return connection


class ScramTest(AuthTestCase):
    def test_the_connection_is_authenticated_before_it_is_handed_over(self):
        broker = self.broker()
        connection = self.connect(broker.address, user="alice", password="wonderland")
        self.assertEqual((connection.principal, connection.expires_at_ms), ("alice", -1))
        self.assertEqual([r.api_key for r in broker.requests], [10, 10])  # client-first, client-final
        connection.produce("default", 0, [b"as alice"])
        self.assertEqual(broker.requests[-1].principal, "alice")

    def test_a_wrong_password_is_authentication_failed_with_the_brokers_reason(self):
        broker = self.broker()
        with self.assertRaises(AuthenticationFailedError) as caught:
            self.connect(broker.address, user="alice", password="looking-glass")
        self.assertEqual(caught.exception.name, "AUTHENTICATION_FAILED")
        self.assertEqual(caught.exception.reason, "authentication failed: wrong user name or password")
        self.assertNotIn("looking-glass", str(caught.exception))
        self.assertNotIn("looking-glass", repr(caught.exception.__cause__))

    def test_an_unknown_user_reads_like_a_wrong_password(self):
        broker = self.broker()
        with self.assertRaises(AuthenticationFailedError) as caught:
            self.connect(broker.address, user="mallory", password="wonderland")
        self.assertEqual(caught.exception.reason, "authentication failed: wrong user name or password")

    def test_a_broker_whose_server_signature_does_not_verify_is_refused(self):
        broker = self.broker(forge_signature=True)
        with self.assertRaises(BrokerNotProvenError):
            self.connect(broker.address, user="alice", password="wonderland")
        self.assertEqual(len(broker.requests), 2)  # nothing was sent after the unproven final

    def test_authenticate_again_on_the_same_connection(self):
        broker = self.broker()
        connection = self.connect(broker.address, user="alice", password="wonderland")
        self.assertEqual(connection.authenticate(), "alice")
        self.assertEqual(broker.auth.exchanges, 4)


class RefusalsByNameTest(AuthTestCase):
    def test_authentication_required_is_shown_by_name_and_keeps_the_connection(self):
        broker = self.broker()
        connection = self.connect(broker.address)
        with self.assertRaises(AuthenticationRequiredError) as caught:
            connection.metadata()
        self.assertEqual(caught.exception.name, "AUTHENTICATION_REQUIRED")
        self.assertIn("requires authentication", str(caught.exception))
        self.assertFalse(connection.closed)

    def test_each_security_code_is_its_class_and_an_unknown_one_stays_unknown(self):
        self.assertIsInstance(refusal(21, "FETCH default/0", b""), CredentialsExpiredError)
        self.assertIsInstance(refusal(22, "USERS", b""), NotAuthorizedError)
        self.assertIn("NOT_AUTHORIZED", str(refusal(22, "USERS", b"")))
        self.assertEqual(refusal(23, "USERS", b"").name, "UNKNOWN(23)")

    def test_a_broker_from_before_authentication_is_said_so(self):
        broker = FakeBroker({"default": 1})  # no auth: AUTHENTICATE is UNSUPPORTED_VERSION
        self.addCleanup(broker.close)
        with self.assertRaises(ProtocolError) as caught:
            self.connect(broker.address, user="alice", password="wonderland")
        self.assertIn("does not serve it", str(caught.exception))

    def test_a_broker_with_auth_off_still_authenticates_a_configured_client(self):
        broker = self.broker(required=False)
        connection = self.connect(broker.address, user="alice", password="wonderland")
        self.assertEqual(connection.principal, "alice")


class TokenTest(AuthTestCase):
    def test_a_token_authenticates_with_its_subject_and_expiry(self):
        broker = self.broker()
        token = token_for("svc-orders", self.clock)
        connection = self.connect(broker.address, token=token)
        self.assertEqual(connection.principal, "svc-orders")
        self.assertEqual(connection.expires_at_ms, (int(self.clock.now) + 60) * 1000)

    def test_a_token_signed_with_another_key_is_refused(self):
        broker = self.broker()
        forged = make_jwt(b"not the broker's key", KEY_ID, {"sub": "x", "exp": int(time.time()) + 60})
        with self.assertRaises(AuthenticationFailedError) as caught:
            self.connect(broker.address, token=forged)
        self.assertEqual(caught.exception.reason, "token: bad signature")
        self.assertNotIn(forged, str(caught.exception))

    def test_an_expired_token_from_a_callable_is_refreshed_on_the_same_connection(self):
        broker = self.broker()
        issued = []

        def fresh_token():
            issued.append(token_for(f"svc-{len(issued)}", self.clock))
            return issued[-1]

        connection = self.connect(broker.address, token=fresh_token)
        connection.produce("default", 0, [b"before"])
        self.clock.now += 120  # the first token has expired
        self.assertEqual(connection.produce("default", 0, [b"after"]).base_offset, 1)
        self.assertEqual(len(issued), 2)
        self.assertEqual(connection.principal, "svc-1")
        codes = [(r.api_key, r.principal) for r in broker.requests]
        # AUTHENTICATE, PRODUCE, PRODUCE refused, AUTHENTICATE again, the PRODUCE once more.
        self.assertEqual(codes, [(10, "svc-0"), (1, "svc-0"), (1, "svc-0"), (10, "svc-1"), (1, "svc-1")])
        self.assertEqual(broker.payloads("default", 0), [b"before", b"after"])
        self.assertEqual(len(broker._connections), 1)

    def test_a_token_callable_that_fails_on_refresh_fails_the_request_only(self):
        broker = self.broker()
        provider = {"up": True}

        def fresh_token():
            if not provider["up"]:
                raise RuntimeError("the identity provider is down")
            return token_for("svc", self.clock)

        connection = self.connect(broker.address, token=fresh_token)
        self.clock.now += 120
        provider["up"] = False
        with self.assertRaisesRegex(RuntimeError, "identity provider"):
            connection.metadata()
        self.assertFalse(connection.closed)
        provider["up"] = True
        self.assertEqual(connection.metadata()[0].name, "default")

    def test_an_expired_plain_string_token_reaches_the_caller(self):
        broker = self.broker()
        connection = self.connect(broker.address, token=token_for("svc", self.clock))
        self.clock.now += 120
        with self.assertRaises(CredentialsExpiredError) as caught:
            connection.metadata()
        self.assertEqual(caught.exception.name, "CREDENTIALS_EXPIRED")
        self.assertEqual(broker.auth.exchanges, 1)

    def test_a_token_callable_that_returns_nothing_usable_is_refused(self):
        broker = self.broker()
        with self.assertRaises(ValueError):
            self.connect(broker.address, token=lambda: "")


class ProducerTokenTest(AuthTestCase):
    def test_pipelined_batches_refused_expired_are_sent_again_in_order(self):
        broker = self.broker({"orders": 3})
        issued = []

        def fresh_token():
            issued.append(token_for(f"svc-{len(issued)}", self.clock))
            return issued[-1]

        connection = Connection.connect(broker.address, TIMEOUT, token=fresh_token)
        with Producer(connection, ProducerConfig(linger=60)) as producer:
            early = producer.send("orders", b"early", partition=0)
            producer.flush(TIMEOUT)
            self.assertEqual(early.result(TIMEOUT), 0)
            self.clock.now += 120
            futures = [producer.send("orders", f"{p}-{i}".encode(), partition=p) for i in range(2) for p in range(3)]
            producer.flush(TIMEOUT)  # three batches, pipelined, each refused CREDENTIALS_EXPIRED first
            self.assertEqual([f.result(TIMEOUT) for f in futures], [1, 0, 0, 2, 1, 1])
        self.assertEqual(broker.payloads("orders", 0), [b"early", b"0-0", b"0-1"])
        self.assertEqual(broker.payloads("orders", 1), [b"1-0", b"1-1"])
        self.assertEqual(len(issued), 2)


class ClientAuthenticatesEveryConnectionTest(AuthTestCase):
    def test_every_broker_connection_and_every_reconnect_authenticates(self):
        broker = self.broker()
        with Client.connect(broker.address, TIMEOUT, user="alice", password="wonderland") as client:
            client.produce("default", 0, [b"one"])
            client._brokers[broker.address].connection.close()  # the connection drops
            client.produce("default", 0, [b"two"])
        self.assertEqual(broker.auth.exchanges, 4)  # two SCRAM exchanges: the first dial, the redial
        self.assertEqual({r.principal for r in broker.requests if r.api_key != 10}, {"alice"})
        self.assertEqual(broker.payloads("default", 0), [b"one", b"two"])


if __name__ == "__main__":
    unittest.main()
