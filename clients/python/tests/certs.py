"""Test certificates, made with the ``openssl`` command into a temporary directory: a CA, a server
certificate it signs for ``localhost`` and 127.0.0.1, a client certificate (CN ``alice``) for mTLS,
and a second CA that signed none of them (a wrong CA). ``CertificatesFixture`` makes them once per
test class and removes them after."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import tempfile
import unittest
from dataclasses import dataclass

OPENSSL = shutil.which("openssl")
CLIENT_CN = "alice"


@dataclass(frozen=True)
class Certificates:
    ca: str
    other_ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str

    def server_context(self, client_certificates: bool = False) -> ssl.SSLContext:
        """The fake broker's context; ``client_certificates`` requires one signed by the CA (mTLS)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        if client_certificates:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.ca)
        return context


def _openssl(directory: str, *args: str) -> None:
    done = subprocess.run([OPENSSL, *args], cwd=directory, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args[:2])} failed: {done.stderr.strip()}")


def _ca(directory: str, name: str) -> None:
    _openssl(directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN=booblik test {name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")


def _leaf(directory: str, name: str, cn: str, extensions: str) -> None:
    _openssl(directory, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
    with open(os.path.join(directory, f"{name}.ext"), "w", encoding="ascii") as file:
        file.write(extensions)
    _openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")


def make_certificates(directory: str) -> Certificates:
    _ca(directory, "ca")
    _ca(directory, "other-ca")
    _leaf(directory, "server", "localhost",
          "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _leaf(directory, "client", CLIENT_CN, "extendedKeyUsage=clientAuth\n")
    path = lambda name: os.path.join(directory, name)  # noqa: E731
    return Certificates(path("ca.pem"), path("other-ca.pem"), path("server.pem"), path("server.key"),
                        path("client.pem"), path("client.key"))


@unittest.skipUnless(OPENSSL, "the openssl command is not installed: it makes the test certificates")
class CertificatesFixture(unittest.TestCase):
    """A TestCase base with ``self.certs``: made once for the class, removed after it."""

    certs: Certificates

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        directory = tempfile.mkdtemp(prefix="booblik-certs-")
        cls.addClassCleanup(shutil.rmtree, directory, ignore_errors=True)
        cls.certs = make_certificates(directory)
