"""Release: a captured email forwarded to a real SMTP server, to see it on a real device (issue 39).

    POST /_emulator/outbox/{id}/release
    {"host": "smtp.example.dev", "port": 587, "starttls": true, "username": "u", "password": "p",
     "to": ["me@example.dev"], "from": "optional envelope sender"}

The message goes byte for byte as stored (the `.eml` of GET /_emulator/outbox/{id}.eml and the UI's
raw.eml); only the envelope is new: MAIL FROM is `from` (default: the email's own sender) and RCPT TO
the `to` given, whatever its headers say. smtplib runs in a worker thread with a TIMEOUT per
operation, so the server keeps answering meanwhile. Failures are Resend-shaped errors (core/errors.py):
the credentials or recipients refused (422), no connection or a refused message (502). The emulator's
own ports are refused (a release to itself would capture the mail again, under another account).

Off on a non-loopback --host unless --release: a team host must not become an open mail relay.
"""

from __future__ import annotations

import asyncio
import smtplib
import socket
import ssl
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import body_of
from emulator.control.fields import ADDRESSES, BOOLEAN, INTEGER, STRING, Spec
from emulator.control.outbox import BASE, requested_email
from emulator.core import errors
from emulator.core.addresses import address_of, valid_address
from emulator.core.errors import ApiError, invalid, missing_field
from emulator.core.net import allows_outbound, is_this_machine, own_ports
from emulator.resources.emails.service import email_eml

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator

TIMEOUT = 10.0
MAX_RECIPIENTS = 50
EHLO_NAME = "resend-emulator"  # smtplib's default asks getfqdn(), which can take seconds
SPEC: Spec = {"host": STRING, "port": INTEGER, "starttls": BOOLEAN, "tls_verify": BOOLEAN,
              "username": STRING, "password": STRING, "to": ADDRESSES, "from": STRING}
OFF = ("Release is off on a non-loopback host: it would make this emulator a mail relay for anyone who"
       " reaches it. Start it with --release to allow it.")


class Release:
    # A plain class: the request as checked, what the worker thread needs.
    __slots__ = ("host", "password", "port", "recipients", "sender", "starttls", "username", "verify")

    def __init__(self, body: dict[str, Any], default_sender: str) -> None:
        self.host = str(body.get("host") or "").strip()
        if not self.host:
            raise missing_field("host")
        port = body.get("port")
        self.port: int = 25 if port is None else int(port)
        if not 1 <= self.port <= 65535:
            raise invalid("The `port` field must be a port number from 1 to 65535.")
        self.recipients = _recipients(body.get("to"))
        self.sender = address_of(body.get("from") or default_sender)
        if not valid_address(self.sender):
            raise invalid("The `from` field must be an email address.")
        self.starttls, self.verify = bool(body.get("starttls")), body.get("tls_verify") is not False
        self.username, self.password = body.get("username"), body.get("password")
        if (self.username is None) != (self.password is None):
            raise invalid("Give both `username` and `password` for SMTP AUTH, or neither.")


def _recipients(value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else list(value or [])
    if not items:
        raise missing_field("to")
    if len(items) > MAX_RECIPIENTS:
        raise invalid(f"Too many recipients in the `to` field. The maximum is {MAX_RECIPIENTS}.")
    if not all(isinstance(item, str) and valid_address(item) for item in items):
        raise invalid("Each recipient in the `to` field must be an email address.")
    return [address_of(item) for item in items]


def check_allowed(emu: Emulator) -> None:
    if not allows_outbound(emu.settings.release, emu.settings.host):
        raise ApiError(errors.OUTBOUND_DISABLED, OFF)


async def _not_ours(emu: Emulator, release: Release) -> None:
    if release.port not in own_ports(emu.state, emu.settings):
        return
    try:
        found = await asyncio.get_running_loop().getaddrinfo(release.host, release.port,
                                                             type=socket.SOCK_STREAM)
    except OSError:
        return  # the worker's connect names the failure
    if any(is_this_machine(str(info[4][0])) for info in found):
        raise invalid(f"{release.host}:{release.port} is this emulator itself: release forwards mail to"
                      " another SMTP server.")


def _options(message: bytes, release: Release, client: smtplib.SMTP) -> list[str]:
    options = ["BODY=8BITMIME"] if not message.isascii() and client.has_extn("8bitmime") else []
    if not all(address.isascii() for address in (release.sender, *release.recipients)):
        options.append("SMTPUTF8")  # smtplib refuses it where the server does not offer it
    return options


def _send(release: Release, message: bytes) -> dict[str, tuple[int, bytes]]:
    """In a worker thread: connect, (STARTTLS), (AUTH), send; the recipients refused among others."""
    with smtplib.SMTP(release.host, release.port, local_hostname=EHLO_NAME, timeout=TIMEOUT) as client:
        client.ehlo()
        if release.starttls:
            context = ssl.create_default_context()
            if not release.verify:
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            client.starttls(context=context)
            client.ehlo()
        if release.username is not None:
            client.login(release.username, release.password or "")
        options = _options(message, release, client)
        return client.sendmail(release.sender, release.recipients, message, options)


def _reply(code: int, text: bytes | str) -> str:
    said = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return f"{code} {said}".strip()


def _refusal(exc: smtplib.SMTPException) -> str:
    """What the server said no to, in its own words where it gave some."""
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return f" refused the sender {exc.sender}: {_reply(exc.smtp_code, exc.smtp_error)}"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f" refused the message: {_reply(exc.smtp_code, exc.smtp_error)}"
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return f" does not offer what was asked: {exc}"
    return f" closed the connection: {exc}" if isinstance(exc, smtplib.SMTPServerDisconnected) else f": {exc}"


def _unreachable(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return f"the name does not resolve ({exc.strerror})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError):
        return f"no answer within {TIMEOUT:g} s"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    return str(exc.strerror or exc)


def _failure(exc: smtplib.SMTPException | OSError, where: str) -> ApiError:
    """What went wrong, in the catalogue's terms (smtplib's exceptions are OSErrors too: asked first)."""
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return ApiError(errors.RELEASE_AUTH_FAILED,
                        f"{where} refused the credentials: {_reply(exc.smtp_code, exc.smtp_error)}")
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        refused = "; ".join(f"{rcpt}: {_reply(*answer)}" for rcpt, answer in exc.recipients.items())
        return ApiError(errors.RELEASE_RECIPIENTS_REFUSED, f"{where} refused every recipient: {refused}")
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return ApiError(errors.RELEASE_CONNECTION_FAILED, where + _refusal(exc))
    if isinstance(exc, smtplib.SMTPException):
        return ApiError(errors.RELEASE_FAILED, where + _refusal(exc))
    return ApiError(errors.RELEASE_CONNECTION_FAILED, f"{where}: {_unreachable(exc)}")


async def release(emu: Emulator, email_id: str, account: str | None, body: dict[str, Any]) -> dict[str, Any]:
    """Forward one stored email (of `account` when given) as `body` says; what was sent."""
    check_allowed(emu)
    async with emu.transaction() as tx:
        row = await tx.one("SELECT * FROM emails WHERE id = ?", (email_id,))
    if row is None or (account is not None and row["account"] != account):
        raise errors.not_found("Email")
    request = Release(body, row["from_addr"])
    await _not_ours(emu, request)
    async with emu.transaction(row["account"]) as tx:
        message = await email_eml(tx, row)
    try:
        refused = await asyncio.to_thread(_send, request, message)
    except (smtplib.SMTPException, OSError) as exc:
        raise _failure(exc, f"The SMTP server at {request.host}:{request.port}") from None
    return {"object": "release", "email_id": email_id, "host": request.host, "port": request.port,
            "from": request.sender, "to": [r for r in request.recipients if r not in refused],
            "refused": {rcpt: _reply(*answer) for rcpt, answer in refused.items()}, "size": len(message)}


async def release_endpoint(request: Request) -> Response:
    emu = emulator_of(request)
    check_allowed(emu)
    body = await body_of(request, SPEC)
    row = await requested_email(request)
    return json_response(await release(emu, row["id"], row["account"], body))


ROUTES = [Route(f"{BASE}/{{email_id}}/release", release_endpoint, methods=["POST"])]
