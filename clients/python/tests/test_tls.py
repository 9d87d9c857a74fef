"""TLS to the fake broker with test certificates (made by openssl): what verifies, what is refused
and how each refusal reads, synchronous and asyncio."""

import asyncio
import os
import subprocess
import unittest

from booblik import Client, Connection, ConnectionClosedError, aio
from booblik.errors import TlsRequiredError
from booblik.tls import TlsHandshakeError
from tests.certs import CLIENT_CN, OPENSSL, CertificatesFixture
from tests.fakebroker import FakeBroker

TIMEOUT = 5.0


class SyncTlsTest(CertificatesFixture):
    def broker(self, **options) -> FakeBroker:
        options.setdefault("tls", self.certs.server_context(options.pop("client_certificates", False)))
        broker = FakeBroker({"default": 1}, **options)
        self.addCleanup(broker.close)
        return broker

    def connect(self, address, **options) -> Connection:
        connection = Connection.connect(address, TIMEOUT, **options)
        self.addCleanup(connection.close)
        return connection

    def test_a_ca_file_verifies_the_broker_and_requests_go_through_tls(self):
        broker = self.broker()
        for host in ("127.0.0.1", "localhost"):  # the certificate names both; the address's host is verified
            with self.subTest(host=host):
                connection = self.connect(f"{host}:{broker.port}", tls_ca_file=self.certs.ca)
                expected = 0 if host == "127.0.0.1" else 1
                self.assertEqual(connection.produce("default", 0, [b"over tls"]).base_offset, expected)
        self.assertEqual(broker.payloads("default", 0), [b"over tls", b"over tls"])

    def test_a_broker_signed_by_another_ca_is_refused_with_ssls_reason(self):
        broker = self.broker()
        with self.assertRaises(TlsHandshakeError) as caught:
            self.connect(broker.address, tls_ca_file=self.certs.other_ca)
        self.assertIn("did not verify", str(caught.exception))
        self.assertIn("unable to get local issuer certificate", str(caught.exception))
        self.assertEqual(broker.requests, [])

    def test_the_system_cas_do_not_trust_a_test_ca(self):
        broker = self.broker()
        with self.assertRaises(TlsHandshakeError) as caught:
            self.connect(broker.address, tls=True)
        self.assertIn("did not verify", str(caught.exception))

    def test_a_server_name_the_certificate_does_not_carry_is_refused(self):
        broker = self.broker()
        with self.assertRaises(TlsHandshakeError) as caught:
            self.connect(broker.address, tls_ca_file=self.certs.ca, tls_server_name="broker.example.com")
        self.assertIn("Hostname mismatch", str(caught.exception))

    def test_the_server_name_option_is_the_name_verified(self):
        broker = self.broker()  # dialled by IP, verified as localhost
        connection = self.connect(broker.address, tls_ca_file=self.certs.ca, tls_server_name="localhost")
        self.assertEqual(connection.metadata()[0].name, "default")

    def test_mtls_sends_the_client_certificate_and_its_cn_is_the_principal(self):
        broker = self.broker(client_certificates=True)
        certs = self.certs
        connection = self.connect(
            broker.address, tls_ca_file=certs.ca, tls_cert_file=certs.client_cert, tls_key_file=certs.client_key
        )
        connection.metadata()
        self.assertEqual(broker.requests[-1].principal, CLIENT_CN)

    def test_mtls_without_a_client_certificate_is_refused(self):
        broker = self.broker(client_certificates=True)
        with self.assertRaises(ConnectionClosedError) as caught:  # TLS 1.3: refused after the handshake
            self.connect(broker.address, tls_ca_file=self.certs.ca).metadata()
        self.assertIn("client certificate", str(caught.exception))
        self.assertEqual(broker.requests, [])

    def test_a_broker_without_tls_is_said_to_not_answer_tls(self):
        plain = FakeBroker({"default": 1})
        self.addCleanup(plain.close)
        with self.assertRaises(TlsHandshakeError) as caught:
            self.connect(plain.address, tls_ca_file=self.certs.ca)
        self.assertIn("the broker did not answer TLS: is booblik.tls on?", str(caught.exception))

    def test_tls_required_is_shown_by_name_and_closes_the_connection(self):
        broker = self.broker(tls_required=True)
        connection = self.connect(broker.address)
        with self.assertRaises(TlsRequiredError) as caught:
            connection.metadata()
        self.assertEqual(caught.exception.name, "TLS_REQUIRED")
        self.assertIn("the broker requires TLS: connect with TLS", str(caught.exception))
        self.assertTrue(connection.closed)

    def test_tls_required_reaches_a_connect_that_authenticates_first(self):
        broker = self.broker(tls_required=True)
        with self.assertRaises(TlsRequiredError):
            self.connect(broker.address, user="alice", password="wonderland")

    def test_a_client_dials_every_broker_with_tls(self):
        broker = self.broker()
        with Client.connect(broker.address, TIMEOUT, tls_ca_file=self.certs.ca) as client:
            self.assertEqual(client.produce("default", 0, [b"routed"]).base_offset, 0)
        with self.assertRaises(TlsHandshakeError):  # and gives up at once on a handshake refused
            Client.connect(broker.address, TIMEOUT, tls_ca_file=self.certs.other_ca)

    def test_contradictory_or_missing_options_are_refused_before_dialling(self):
        cases = {
            "tls=False with a CA": dict(tls=False, tls_ca_file=self.certs.ca),
            "cert without key": dict(tls_cert_file=self.certs.client_cert),
            "missing CA file": dict(tls_ca_file="/nonexistent/ca.pem"),
        }
        for name, options in cases.items():
            with self.subTest(name), self.assertRaises(ValueError):
                Connection.connect("127.0.0.1:1", TIMEOUT, **options)


    def test_an_encrypted_key_is_refused_rather_than_prompted_for(self):
        encrypted = os.path.join(os.path.dirname(self.certs.client_key), "encrypted.key")
        subprocess.run(
            [OPENSSL, "pkey", "-in", self.certs.client_key, "-out", encrypted, "-aes256", "-passout", "pass:pw"],
            check=True,
            timeout=30,
        )
        with self.assertRaises(ValueError) as caught:
            Connection.connect("127.0.0.1:1", TIMEOUT, tls_cert_file=self.certs.client_cert, tls_key_file=encrypted)
        self.assertIn("the key file is encrypted", str(caught.exception))


class AioTlsTest(CertificatesFixture):
    def run_async(self, coroutine):
        return asyncio.run(asyncio.wait_for(coroutine, 20))

    def broker(self, **options) -> FakeBroker:
        options.setdefault("tls", self.certs.server_context(options.pop("client_certificates", False)))
        broker = FakeBroker({"default": 1}, **options)
        self.addCleanup(broker.close)
        return broker

    def test_a_ca_file_verifies_the_broker_and_requests_go_through_tls(self):
        broker = self.broker()

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT, tls_ca_file=self.certs.ca) as connection:
                return await connection.produce("default", 0, [b"aio tls"])

        self.assertEqual(self.run_async(main()).base_offset, 0)
        self.assertEqual(broker.payloads("default", 0), [b"aio tls"])

    def test_a_broker_signed_by_another_ca_is_refused_with_ssls_reason(self):
        broker = self.broker()
        with self.assertRaises(TlsHandshakeError) as caught:
            self.run_async(aio.Connection.connect(broker.address, TIMEOUT, tls_ca_file=self.certs.other_ca)._open())
        self.assertIn("unable to get local issuer certificate", str(caught.exception))

    def test_a_server_name_the_certificate_does_not_carry_is_refused(self):
        broker = self.broker()
        options = dict(tls_ca_file=self.certs.ca, tls_server_name="x.example")
        connect = aio.Connection.connect(broker.address, TIMEOUT, **options)
        with self.assertRaises(TlsHandshakeError) as caught:
            self.run_async(connect._open())
        self.assertIn("Hostname mismatch", str(caught.exception))

    def test_mtls_sends_the_client_certificate(self):
        broker = self.broker(client_certificates=True)
        certs = self.certs

        async def main():
            options = dict(tls_ca_file=certs.ca, tls_cert_file=certs.client_cert, tls_key_file=certs.client_key)
            async with aio.Connection.connect(broker.address, TIMEOUT, **options) as connection:
                await connection.metadata()

        self.run_async(main())
        self.assertEqual(broker.requests[-1].principal, CLIENT_CN)

    def test_mtls_without_a_client_certificate_is_refused(self):
        broker = self.broker(client_certificates=True)

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT, tls_ca_file=self.certs.ca) as connection:
                await connection.metadata()

        with self.assertRaises(ConnectionClosedError) as caught:
            self.run_async(main())
        self.assertIn("certificate required", str(caught.exception))

    def test_a_broker_without_tls_is_said_to_not_answer_tls(self):
        plain = FakeBroker({"default": 1})
        self.addCleanup(plain.close)
        with self.assertRaises(TlsHandshakeError) as caught:
            self.run_async(aio.Connection.connect(plain.address, TIMEOUT, tls_ca_file=self.certs.ca)._open())
        self.assertIn("the broker did not answer TLS: is booblik.tls on?", str(caught.exception))

    def test_tls_required_is_shown_by_name(self):
        broker = self.broker(tls_required=True)

        async def main():
            async with aio.Connection.connect(broker.address, TIMEOUT) as connection:
                with self.assertRaises(TlsRequiredError):
                    await connection.metadata()
                self.assertTrue(connection.closed)

        self.run_async(main())


if __name__ == "__main__":
    unittest.main()
