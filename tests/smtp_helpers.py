"""A real emulator (EmulatorServer: HTTP + SMTP on 127.0.0.1 port 0) and smtplib helpers."""

from __future__ import annotations

import smtplib
import ssl
from email import policy
from email.message import EmailMessage
from typing import Any

import httpx

from emulator.core.tls import client_context
from emulator.smtp.server import certificate_pem
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, KEY, make_settings

HOST = "127.0.0.1"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.4\n" + b"receipt line\n" * 50


class LiveEmulator(EmulatorServer):
    """One server for a module of tests; `reset()` between tests is cheap, a restart is not."""

    def __init__(self, **overrides: Any) -> None:
        super().__init__(make_settings(smtp=True, port=0, smtp_port=0, smtps_port=0, host=HOST, **overrides))

    def __enter__(self) -> LiveEmulator:
        self.start()
        self.http = httpx.Client(base_url=self.url, headers=AUTH, timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()
        self.stop()

    @property
    def tls(self) -> ssl.SSLContext:
        return client_context(certificate_pem(self.emu))

    def starttls(self, key: str | None = KEY) -> smtplib.SMTP:
        """A STARTTLS session that verifies the self-signed certificate, logged in when `key` is set."""
        client = smtplib.SMTP(HOST, self.smtp_port, timeout=30)
        client.starttls(context=self.tls)
        if key is not None:
            client.login("resend", key)
        return client

    def implicit(self, key: str | None = KEY) -> smtplib.SMTP_SSL:
        client = smtplib.SMTP_SSL(HOST, self.smtps_port, context=self.tls, timeout=30)
        if key is not None:
            client.login("resend", key)
        return client


def transmit(client: smtplib.SMTP, message: EmailMessage | bytes, sender: str,
             recipients: list[str]) -> tuple[int, str]:
    """MAIL, RCPT, DATA by hand: smtplib's sendmail() hides the final reply, which carries the id."""
    raw = message if isinstance(message, bytes) else message.as_bytes(policy=policy.SMTP)
    code, reply = client.mail(sender)
    if code != 250:
        return code, reply.decode()
    for recipient in recipients:
        code, reply = client.rcpt(recipient)
        if code not in (250, 251):
            return code, reply.decode()
    code, reply = client.data(raw)
    return code, reply.decode()


def email_id_of(reply: str) -> str:
    assert reply.startswith("OK "), reply
    return reply.split()[1]


def rich_message(sender: str = "Acme <hello@acme.dev>", to: str = "Jane <jane@example.org>",
                 subject: str = "Your receipt", **headers: str) -> EmailMessage:
    """multipart/mixed: alternative text + related(html, inline PNG), plus a PDF attachment."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content("Thanks for your order.\n")
    message.add_alternative('<p>Thanks for your order.</p><img src="cid:logo@acme">', subtype="html")
    html_part = message.get_payload()[1]
    html_part.add_related(PNG, maintype="image", subtype="png", cid="<logo@acme>", filename="logo.png")
    message.add_attachment(PDF, maintype="application", subtype="pdf", filename="receipt.pdf")
    return message
