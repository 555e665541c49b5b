"""One SMTP session: aiosmtpd's protocol with the relay's AUTH rule, and the hooks that take a message in.

Loaded with the first connection (`server._factory`), not at start: aiosmtpd and the attrs package it
builds on are a noticeable part of the emulator's import time, and many test runs never speak SMTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import ssl
import warnings
from email._header_value_parser import get_addr_spec, get_angle_addr
from email.errors import HeaderParseError
from typing import TYPE_CHECKING, Any

from aiosmtpd.smtp import MISSING, SMTP, AuthResult, Envelope, LoginPassword, Session, syntax

from emulator.api.auth import WELL_FORMED_KEY, credential_of, keyring
from emulator.core import errors
from emulator.core.clock import to_db
from emulator.core.errors import ApiError
from emulator.mime.intake import IntakeError
from emulator.smtp.policy import HOSTNAME, IDENT, MAX_RECIPIENTS, USERNAME
from emulator.smtp.submit import submit

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator

log = logging.getLogger("emulator.smtp")
TOO_LONG = "500 Line too long (see RFC5321 4.5.3.1.6)"  # aiosmtpd's replies, word for word
TOO_MUCH = "552 Error: Too much mail data"


class _QuietLegacyNotice(logging.Filter):
    """aiosmtpd logs a deprecation notice about its own `login_data` on every successful AUTH."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "login_data is deprecated" not in record.getMessage()


logging.getLogger("mail.log").addFilter(_QuietLegacyNotice())


def _authenticator(emu: Emulator) -> Any:
    def authenticate(server: SMTP, session: Session, envelope: Envelope, mechanism: str,
                     auth_data: Any) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        username = auth_data.login.decode("utf-8", "replace")
        token = auth_data.password.decode("utf-8", "replace")
        if username != USERNAME:
            return AuthResult(success=False, handled=False)
        credential = keyring(emu).by_token.get(token)
        # Isolation mode: the account of a new well-formed key is provisioned at its first DATA
        # (this callback cannot await the database).
        isolated = credential is None and emu.settings.isolate_keys and WELL_FORMED_KEY.match(token)
        if not isolated and (credential is None or not credential.active):
            return AuthResult(success=False, handled=False)
        if credential is not None:
            emu.db.defer("UPDATE api_keys SET last_used_at = ? WHERE id = ?",
                         (to_db(emu.clock.now()), credential.key_id))
        return AuthResult(success=True, auth_data=token)

    return authenticate


class Handler:
    """aiosmtpd hooks. Every reply is a complete SMTP line; nothing here raises to the protocol."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        # Messages being taken in: a stop waits for them before the database closes (server.stop).
        self.intakes: set[asyncio.Future[str]] = emu.state.setdefault("smtp_intakes", set())

    def expecting(self) -> Any:
        return self.emu.db.expecting()

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          rcpt_options: list[str]) -> str:
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return f"452 4.5.3 Too many recipients (at most {MAX_RECIPIENTS} per message)"
        if "@" not in address:
            return "553 5.1.3 Recipient address must be an email address"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        work = self._deliver(str(session.auth_data or ""), envelope.mail_from or "", list(envelope.rcpt_tos),
                             bytes(raw))
        # Shielded: a client vanishing after its final dot (or a stop closing the connection) must not
        # cut a transaction in half.
        intake = asyncio.ensure_future(work)
        self.intakes.add(intake)
        intake.add_done_callback(self.intakes.discard)
        return await asyncio.shield(intake)

    async def _deliver(self, token: str, mail_from: str, recipients: list[str], raw: bytes) -> str:
        try:
            credential = await credential_of(self.emu, token)
            if credential is None or not credential.active:
                raise ApiError(errors.INACTIVE_API_KEY)
            email_id = await submit(self.emu, credential, mail_from, recipients, raw)
        except ApiError as error:
            return reply_for(error)
        except IntakeError as error:
            return f"554 5.6.0 {error}"
        except Exception:  # the client gets a clear temporary failure, the server keeps running
            log.exception("SMTP intake failed")
            return "451 4.3.0 An unexpected error occurred."
        return f"250 OK {email_id}"

    async def handle_exception(self, error: Exception) -> str:
        log.warning("SMTP session error: %r", error)
        return "451 4.3.0 An unexpected error occurred."


def reply_for(error: ApiError) -> str:
    """An API error as one SMTP reply line ([rec] smtp.md: 550 5.7.1 <message>, 451 for retry-later)."""
    message = " ".join(error.message.split())[:400]
    # The daily quota resets at midnight UTC: a temporary failure the client may retry then.
    if error.kind in (errors.RATE_LIMIT_EXCEEDED, errors.CONCURRENT_IDEMPOTENT_REQUESTS,
                      errors.DAILY_QUOTA_EXCEEDED):
        return f"451 4.7.0 {message}"
    if error.status >= 500:
        return f"451 4.3.0 {message}"
    return f"550 5.7.1 {message}"


_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATOM}(?:\.{_ATOM})*"
# `<local@domain>` between spaces or tabs, then anything but a comment: what RFC 5321 clients send.
_SIMPLE_PATH = re.compile(rf"[ \t]*<({_DOT_ATOM}@{_DOT_ATOM})>[ \t]*((?![ \t(]).*)?", re.DOTALL)


def parse_path(arg: str) -> tuple[str | None, str | None]:
    """The address of a MAIL FROM / RCPT TO argument and the text after it, by aiosmtpd's rules (RFC
    5322 parsing), without the typing class its own version defines on every call."""
    if not arg:
        return "", ""
    try:
        address, rest = get_angle_addr(arg) if arg.lstrip().startswith("<") else get_addr_spec(arg)
    except HeaderParseError:
        return None, None
    return address.addr_spec, rest


SHUTTING_DOWN = b"421 4.3.2 Service shutting down, try again later\r\n"


class Protocol(SMTP):
    # From the 354 to the reply after the message: a stop lets this finish (server.stop), then hangs up.
    in_data = False
    hang_up_after_data = False

    def hang_up(self) -> None:
        """Say 421 (RFC 5321 §3.8: the client tries again later) and close; the emulator is stopping."""
        if self.transport is not None and not self.transport.is_closing():
            self._writer.write(SHUTTING_DOWN)  # as `push` writes: through TLS after STARTTLS
            self.transport.close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # aiosmtpd writes multi-line replies (EHLO) line by line; without TCP_NODELAY, uvloop's
        # sockets wait on the client's delayed ACK: ~40 ms per EHLO, measured in benchmarks/bench_smtp.py.
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        """aiosmtpd's MAIL/RCPT address parse with the same results, faster (issue 18, py-spy: ~7 % of
        an SMTP submission's CPU): `<local@domain>` made of plain atoms is read with one regex, and
        anything else (quotes, comments, literals, UTF-8) goes through aiosmtpd's own rules."""
        simple = _SIMPLE_PATH.fullmatch(arg)
        addr, rest = (simple.group(1), simple.group(2) or "") if simple else parse_path(arg)
        if addr and self.local_part_limit and len(addr.rpartition("@")[0]) > self.local_part_limit:
            return None, None
        return addr, rest

    @syntax("DATA")
    async def smtp_DATA(self, arg: str) -> None:
        """aiosmtpd's DATA with the same replies and limits, and a leaner loop per line: its own spent
        ~15 % of an SMTP submission's CPU joining and logging every line (issue 18, py-spy)."""
        if await self.check_helo_needed() or await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        self.in_data = True
        try:
            await self.push("354 End data with <CR><LF>.<CR><LF>")
            await self._take_message()
        finally:
            self.in_data = False
        if self.hang_up_after_data:  # the emulator is stopping, and the reply is written
            self.hang_up()

    async def _take_message(self) -> None:
        assert self.envelope is not None
        # From here a message is on its way to a transaction: group commit may wait for it.
        with getattr(self.event_handler, "expecting", contextlib.nullcontext)():
            content, refusal = await self._read_content()
            if refusal is not None:
                await self.push(refusal)
                self._set_post_data_state()  # type: ignore[no-untyped-call]
                return
            # decode_data is off: the content stays bytes, as the handler expects.
            self.envelope.content = self.envelope.original_content = content
            status = await self._call_handler_hook("DATA")
        self._set_post_data_state()  # type: ignore[no-untyped-call]
        await self.push("250 OK" if status is MISSING else status)

    async def _read_content(self) -> tuple[bytes, str | None]:
        """Lines up to the lone dot, dot-unstuffed (RFC 5321 §4.5.2); or the refusal to send once all
        is read: a line over `line_length_limit` (500) or more than `data_size_limit` bytes (552)."""
        reader, limit, longest = self._reader, self.data_size_limit, self.line_length_limit
        lines: list[bytes] = []
        fragments: list[bytes] = []
        size, refusal = 0, None
        while self.transport is not None:
            try:
                line = await reader.readuntil(b"\r\n")
            except asyncio.CancelledError:
                log.info("Connection lost during DATA")
                self._writer.close()
                raise
            except asyncio.LimitOverrunError as overrun:  # longer than the reader's limit: drain it
                refusal = refusal or TOO_LONG
                lines.clear()
                line = await reader.read(overrun.consumed)
            if not fragments and line == b".\r\n":
                break
            size += len(line)
            if refusal is None and limit and size > limit:
                refusal = TOO_MUCH
                lines.clear()
            if not line.endswith(b"\r\n"):
                fragments.append(line)
                continue
            if fragments:
                fragments.append(line)
                line = b"".join(fragments)
                fragments.clear()
            if refusal is None:
                if len(line) > longest:
                    refusal = TOO_LONG
                    lines.clear()
                else:
                    lines.append(line[1:] if line[:1] == b"." else line)
        return b"".join(lines), refusal

    async def challenge_auth(self, challenge: str | bytes, encode_to_b64: bool = True,
                             log_client_response: bool = False) -> Any:
        """A credential longer than a line (a 5 000-character password) is a wrong credential, 535;
        aiosmtpd's reader raises on it and the session answered 451 (issue 11). The reader has already
        dropped the overlong line, so the session carries on."""
        try:
            return await super().challenge_auth(challenge, encode_to_b64, log_client_response)
        except ValueError:
            await self.push("535 5.7.8 Authentication credentials invalid")
            return MISSING


def open_session(emu: Emulator, handler: Handler, context: ssl.SSLContext, implicit: bool,
                 plaintext_auth: bool, max_message_bytes: int) -> Protocol:
    with warnings.catch_warnings():
        # aiosmtpd warns of AUTH without its own TLS: implicit TLS and the test switch are deliberate.
        warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
        return Protocol(
            handler, hostname=HOSTNAME, ident=IDENT, data_size_limit=max_message_bytes,
            enable_SMTPUTF8=True, decode_data=False, auth_required=True,
            # Implicit TLS is encrypted from the first byte; aiosmtpd only knows about STARTTLS.
            auth_require_tls=not (implicit or plaintext_auth),
            tls_context=None if implicit else context, authenticator=_authenticator(emu),
        )
