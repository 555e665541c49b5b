"""TLS for the emulator's servers (SMTP, and HTTP with `--https`): the user's certificate, or a
self-signed one made when first needed, one per process, which every TLS port presents.

The self-signed certificate names `localhost`, the loopback addresses, `--host` and the
`--allowed-host` names, so a client that trusts its PEM (`GET /_emulator/smtp`,
`Credentials.certificate`) can verify it with hostname checks on. It is made at the first TLS
handshake or the first request for its PEM, not at start: generating it needs `cryptography`, whose
import alone is a sizeable part of the emulator's start (issue 18).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterable, MutableMapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.core.config import Settings, StartupError

if TYPE_CHECKING:
    from cryptography import x509

COMMON_NAME = "resend-emulator.localhost"
ALWAYS_NAMED = ("localhost", COMMON_NAME, "127.0.0.1", "::1")
UNSPECIFIED = ("0.0.0.0", "::", "")


class Certificate(NamedTuple):
    cert_pem: bytes
    key_pem: bytes


def self_signed(names: Iterable[str] = ()) -> Certificate:
    """A fresh P-256 certificate (generated in ~1 ms, unlike RSA) valid for a year from now, naming the
    loopback names and `names` (host names or addresses).

    Real time, not the emulator clock: TLS clients check validity against their own wall clock.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.now(UTC)
    alt_names = [_alt_name(each) for each in dict.fromkeys((*ALWAYS_NAMED, *names))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return Certificate(cert.public_bytes(serialization.Encoding.PEM), key_pem)


def names_of(settings: Settings) -> list[str]:
    """The names clients may reach this emulator by, besides the loopback ones: `--host` and the
    `--allowed-host` names. An address that means "every interface" (`--host 0.0.0.0`) is no name a
    client connects to, so the machine's host name stands for it (assumed: a team host is reached by
    its name, or by a name given with --allowed-host)."""
    wanted = [settings.host, *settings.allowed_hosts]
    if settings.host in UNSPECIFIED:
        wanted.append(socket.gethostname())
    names = [name.strip().strip("[]").lower() for name in wanted]
    return [name for name in names if name and name not in (*UNSPECIFIED, "*") and name.isascii()]


def _alt_name(host: str) -> x509.GeneralName:
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def load(cert_path: str, key_path: str) -> Certificate:
    return Certificate(_read("--tls-cert", cert_path), _read("--tls-key", key_path))


def _read(flag: str, path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        missing = isinstance(exc, (FileNotFoundError, IsADirectoryError))
        raise StartupError(flag, path, f"cannot read it: {exc.strerror}",
                           "give a readable PEM file", usage=missing) from None


class Credentials:
    """The certificate and key the SMTP servers present, read or made once, on first use."""

    def __init__(self, make: Callable[[], Certificate], source: str = "(self-signed)") -> None:
        self._make = make
        self.source = source  # the certificate file named in errors
        self._made: Certificate | None = None
        self._lock = threading.Lock()  # the loop's handshake and a test thread may ask at once

    @property
    def certificate(self) -> Certificate:
        with self._lock:
            if self._made is None:
                self._made = self._make()
            return self._made

    def load_into(self, context: ssl.SSLContext) -> None:
        """`ssl` loads certificates only from files, so the PEMs pass through a private temp dir."""
        certificate = self.certificate
        with tempfile.TemporaryDirectory(prefix="resend-emulator-tls-") as folder:
            cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
            with open(cert_path, "wb") as cert_file:
                cert_file.write(certificate.cert_pem)
            with os.fdopen(os.open(key_path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as key_file:
                key_file.write(certificate.key_pem)
            try:
                context.load_cert_chain(cert_path, key_path)
            except ssl.SSLError as exc:
                raise StartupError("--tls-cert", self.source,
                                   f"not a usable certificate and key: {exc.reason or exc}",
                                   "give a PEM certificate, and its PEM private key with --tls-key"
                                   ) from None


class ServerContext(ssl.SSLContext):
    """A server-side context that loads its certificate just before its first TLS session.

    Both ways in create their TLS objects through `wrap_bio`: the event loop's SSL transport (implicit
    TLS) and aiosmtpd's STARTTLS. Everything runs on the app's one event loop, so no lock is needed.
    """

    credentials: Credentials
    loaded: bool

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        if not self.loaded:
            self.credentials.load_into(self)
            self.loaded = True
        return super().wrap_bio(*args, **kwargs)


def credentials_for(settings: Settings) -> tuple[Credentials, bool]:
    """The certificate source, and whether to load it at start (a user's files: a start that would
    fail at the first client fails now instead)."""
    if settings.tls_cert and settings.tls_key:
        cert, key = settings.tls_cert, settings.tls_key
        return Credentials(lambda: load(cert, key), source=cert), True
    if settings.tls_cert or settings.tls_key:
        given = ("--tls-cert", settings.tls_cert) if settings.tls_cert else ("--tls-key", settings.tls_key)
        raise StartupError(*given, "--tls-cert and --tls-key go together", "give both, or neither")
    names = names_of(settings)
    return Credentials(lambda: self_signed(names)), False


def shared(state: MutableMapping[str, object], settings: Settings) -> tuple[Credentials, bool]:
    """The process's one certificate source, kept in the emulator's `state`: HTTPS and SMTP present
    the same certificate, so a client trusts one PEM for both."""
    known = state.get("tls_credentials")
    if isinstance(known, Credentials):
        return known, bool(settings.tls_cert and settings.tls_key)
    made = credentials_for(settings)
    state["tls_credentials"] = made[0]
    return made


def server_context(credentials: Credentials, *, eager: bool) -> ServerContext:
    """The options of `ssl.create_default_context(Purpose.CLIENT_AUTH)` (TLS 1.2+), without its system
    CA store, which only client certificates would need. `eager` loads (and so checks) the certificate
    now: a user's files that do not parse should stop the start, not the first client."""
    context = ServerContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # the default since Python 3.10; said, not assumed
    context.credentials, context.loaded = credentials, False
    if eager:
        credentials.load_into(context)
        context.loaded = True
    return context


def client_context(cert_pem: bytes) -> ssl.SSLContext:
    """A client context that trusts exactly this certificate (tests, benchmarks)."""
    return ssl.create_default_context(cadata=cert_pem.decode())
