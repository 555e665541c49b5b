"""TLS for the SMTP servers: the user's certificate, or a self-signed one made at start.

The self-signed certificate names `localhost` and the loopback addresses, so a client that trusts its
PEM (published in `emu.state["tls_cert_pem"]`) can verify it with hostname checks on.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

COMMON_NAME = "resend-emulator.localhost"


@dataclass(frozen=True)
class Certificate:
    cert_pem: bytes
    key_pem: bytes


def self_signed(hostname: str = "localhost") -> Certificate:
    """A fresh P-256 certificate (generated in ~1 ms, unlike RSA) valid for a year from now.

    Real time, not the emulator clock: TLS clients check validity against their own wall clock.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.now(UTC)
    alt_names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.DNSName(COMMON_NAME),
                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                         x509.IPAddress(ipaddress.ip_address("::1"))]
    if hostname not in ("localhost", COMMON_NAME):
        alt_names.append(_alt_name(hostname))
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


def _alt_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def load(cert_path: str, key_path: str) -> Certificate:
    try:
        with open(cert_path, "rb") as cert_file, open(key_path, "rb") as key_file:
            return Certificate(cert_file.read(), key_file.read())
    except OSError as exc:
        raise SystemExit(f"cannot read TLS certificate/key: {exc.filename}: {exc.strerror}") from None


def server_context(certificate: Certificate) -> ssl.SSLContext:
    """`ssl` loads certificates only from files, so the PEMs pass through a private temp dir."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="resend-emulator-tls-") as folder:
        cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        with open(cert_path, "wb") as cert_file:
            cert_file.write(certificate.cert_pem)
        with os.fdopen(os.open(key_path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as key_file:
            key_file.write(certificate.key_pem)
        try:
            context.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise SystemExit(f"invalid TLS certificate/key: {exc.reason or exc}") from None
    return context


def client_context(cert_pem: bytes) -> ssl.SSLContext:
    """A client context that trusts exactly this certificate (tests, benchmarks)."""
    return ssl.create_default_context(cadata=cert_pem.decode())
