"""SCRAM-SHA-256 on the client's side, with no broker: the RFC 7677 vector, and every message from
a broker that must not be taken."""

import unittest

from booblik.auth import Scram, Token
from booblik.errors import ProtocolError
from booblik.scram import BrokerNotProvenError, ScramClient, saslname

# RFC 7677 section 3.
USER, PASSWORD, CLIENT_NONCE = "user", "pencil", "rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def at_final(server_first: bytes = SERVER_FIRST) -> ScramClient:
    client = ScramClient(USER, PASSWORD, CLIENT_NONCE)
    client.first()
    client.final(server_first)
    return client


class Rfc7677VectorTest(unittest.TestCase):
    def test_client_first_is_the_vectors(self):
        self.assertEqual(ScramClient(USER, PASSWORD, CLIENT_NONCE).first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")

    def test_client_final_proof_is_computed_from_the_vectors_inputs(self):
        client = ScramClient(USER, PASSWORD, CLIENT_NONCE)
        client.first()
        self.assertEqual(client.final(SERVER_FIRST), CLIENT_FINAL)

    def test_the_vectors_server_final_verifies(self):
        at_final().verify(SERVER_FINAL)  # raises if it does not

    def test_a_wrong_password_gives_another_proof(self):
        client = ScramClient(USER, "pencil!", CLIENT_NONCE)
        client.first()
        self.assertNotEqual(client.final(SERVER_FIRST), CLIENT_FINAL)


class BrokerMustProveItselfTest(unittest.TestCase):
    def test_a_server_signature_off_by_one_bit_is_refused(self):
        forged = b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        with self.assertRaises(BrokerNotProvenError) as caught:
            at_final().verify(forged)
        self.assertIn("did not prove", str(caught.exception))

    def test_a_server_final_without_a_signature_is_refused(self):
        for final in (b"e=other-error", b"v=", b"v=not base64!"):
            with self.subTest(final=final), self.assertRaises(BrokerNotProvenError):
                at_final().verify(final)

    def test_a_nonce_that_does_not_extend_the_clients_is_refused(self):
        for nonce in ("someoneElsesNonce123", CLIENT_NONCE):  # another's, or not extended at all
            server_first = f"r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".encode()
            with self.subTest(nonce=nonce), self.assertRaises(ProtocolError):
                at_final(server_first)

    def test_fewer_iterations_than_the_wire_allows_are_refused(self):
        server_first = SERVER_FIRST.replace(b"i=4096", b"i=4095")
        with self.assertRaises(ProtocolError) as caught:
            at_final(server_first)
        self.assertIn("4096", str(caught.exception))

    def test_an_iteration_count_that_would_burn_the_cpu_is_refused(self):
        with self.assertRaises(ProtocolError):
            at_final(SERVER_FIRST.replace(b"i=4096", b"i=999999999"))

    def test_a_mandatory_extension_is_refused(self):
        with self.assertRaises(ProtocolError):
            at_final(b"m=ext," + SERVER_FIRST)

    def test_a_salt_that_is_not_base64_is_refused(self):
        with self.assertRaises(ProtocolError):
            at_final(SERVER_FIRST.replace(b"s=W22ZaJ0SNY7soEsUEjb6gQ==", b"s=***"))


class NamesAndSecretsTest(unittest.TestCase):
    def test_comma_and_equals_in_a_user_name_are_escaped(self):
        self.assertEqual(saslname("a=b,c"), "a=3Db=2Cc")
        first = ScramClient("a,b", "pw", "nonce").first()
        self.assertEqual(first, b"n,,n=a=2Cb,r=nonce")

    def test_each_exchange_has_a_fresh_nonce(self):
        nonces = {ScramClient(USER, PASSWORD).first() for _ in range(20)}
        self.assertEqual(len(nonces), 20)

    def test_the_password_and_token_are_never_shown(self):
        shown_all = (repr(Scram("alice", "s3cret-pw")), repr(ScramClient("alice", "s3cret-pw")), repr(Token("tok-123")))
        for shown in shown_all:
            self.assertNotIn("s3cret-pw", shown)
            self.assertNotIn("tok-123", shown)


if __name__ == "__main__":
    unittest.main()
