"""The security options of a connect, checked once and kept together, so every connection a
Connection or Client opens (a watch's, a reconnect) speaks TLS and authenticates the same way.

    tls=True                      TLS with the system's CAs (implied by any tls_* option)
    tls_ca_file="ca.pem"          the CAs the broker's certificate must chain to
    tls_cert_file, tls_key_file   this client's certificate and key (mTLS)
    tls_server_name="broker-1"    SNI and the name verified (default: the address's host)
    user="alice", password="..."  SCRAM-SHA-256
    token="eyJ..." or callable    TOKEN (a callable is asked again when the token expires)
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

from .auth import Scram, Token
from .tls import TlsOptions

OPTION_NAMES = ("tls", "tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name", "user", "password", "token")


@dataclass(frozen=True)
class Security:
    tls: TlsOptions | None = None  # None: plaintext
    credentials: Scram | Token | None = None  # None: no AUTHENTICATE
    context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)

    def server_hostname(self, host: str) -> str | None:
        return None if self.tls is None else self.tls.server_hostname(host)


PLAINTEXT = Security()


def security_from(
    *,
    tls: bool | None = None,
    tls_ca_file: str | None = None,
    tls_cert_file: str | None = None,
    tls_key_file: str | None = None,
    tls_server_name: str | None = None,
    user: str | None = None,
    password: str | None = None,
    token=None,
) -> Security:
    """The options as one ``Security``; a contradiction or a bad file is a ValueError naming it."""
    if tls is not None and not isinstance(tls, bool):
        raise TypeError(f"tls: expected True, False or None, got {type(tls).__name__}")
    files = (tls_ca_file, tls_cert_file, tls_key_file, tls_server_name)
    if tls is False and any(f is not None for f in files):
        raise ValueError("tls=False with a tls_* option: leave tls out (the option turns TLS on) or drop the option")
    options = None
    if tls or any(f is not None for f in files):
        options = TlsOptions(tls_ca_file, tls_cert_file, tls_key_file, tls_server_name)
    credentials: Scram | Token | None = None
    if token is not None:
        if user is not None or password is not None:
            raise ValueError("token with user/password: give one way to authenticate")
        credentials = Token(token)
    elif user is not None or password is not None:
        if user is None or password is None:
            raise ValueError("user and password: give both (SCRAM-SHA-256) or neither")
        credentials = Scram(user, password)
    if options is None and credentials is None:
        return PLAINTEXT
    return Security(options, credentials, options.context() if options is not None else None)


def take_security(options: dict) -> Security:
    """Pop the security options out of ``options`` (a Client's keyword arguments) as one Security."""
    return security_from(**{name: options.pop(name) for name in OPTION_NAMES if name in options})
