"""SMTP submission, like Resend's relay (reference/smtp.md): aiosmtpd on the app's own event loop.

Two servers share one handler: STARTTLS on `smtp_port` and implicit TLS on `smtps_port`. AUTH PLAIN or
LOGIN with username `resend` and an API key; DATA goes through `emulator.mime.intake` into the same
`send_email()` the API uses, in one transaction, so SMTP and API sends cannot diverge. The listeners
start with the app; the session code (`emulator.smtp.session`) and the certificate come with first use.
"""

from __future__ import annotations

import asyncio
import socket
import time
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.core import tls
from emulator.core.net import bind
from emulator.smtp.policy import HOSTNAME, IDENT, MAX_MESSAGE_BYTES, MAX_RECIPIENTS, USERNAME

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator
    from emulator.smtp.session import Protocol

__all__ = ["HOSTNAME", "IDENT", "MAX_MESSAGE_BYTES", "MAX_RECIPIENTS", "USERNAME", "certificate_pem", "start",
           "stop"]


class Listener(NamedTuple):
    name: str  # "smtp" (STARTTLS) or "smtps" (implicit TLS)
    server: asyncio.base_events.Server
    sessions: weakref.WeakSet[Protocol]


def _factory(emu: Emulator, context: tls.ServerContext, implicit: bool,
             sessions: weakref.WeakSet[Protocol]) -> Any:
    plaintext_auth = emu.settings.smtp_auth_plaintext
    handler: Any = None

    def build() -> Protocol:
        nonlocal handler
        from emulator.smtp import session

        handler = handler or session.Handler(emu)
        # MAX_MESSAGE_BYTES is read per connection (a test lowers it).
        smtp = session.open_session(emu, handler, context, implicit, plaintext_auth, MAX_MESSAGE_BYTES)
        sessions.add(smtp)
        return smtp

    return build


async def start(emu: Emulator) -> None:
    if not emu.settings.smtp:
        return
    credentials, eager = tls.shared(emu.state, emu.settings)
    context = tls.server_context(credentials, eager=eager)
    # Sockets may be bound before the app starts (the CLI does, so a busy port fails fast).
    sockets: dict[str, socket.socket] = emu.state.pop("smtp_sockets", {})
    listeners: list[Listener] = []
    ports = {"smtp": emu.settings.smtp_port, "smtps": emu.settings.smtps_port}
    try:
        for name, port in ports.items():
            sock = sockets.get(name) or bind(emu.settings.host, port, f"--{name}-port", "--no-smtp")
            sessions: weakref.WeakSet[Protocol] = weakref.WeakSet()
            implicit = name == "smtps"
            server = await asyncio.get_running_loop().create_server(
                _factory(emu, context, implicit, sessions), sock=sock,
                ssl=context if implicit else None,
            )
            listeners.append(Listener(name, server, sessions))
    except BaseException:
        await _close(listeners)
        raise
    emu.state["smtp_listeners"] = listeners
    emu.stop_hooks.append(lambda: _stop_accepting(listeners))
    emu.state["smtp_ports"] = {item.name: item.server.sockets[0].getsockname()[1] for item in listeners}


def certificate_pem(emu: Emulator) -> bytes | None:
    """The PEM clients should trust (made now if nothing needed it yet); None when SMTP is off."""
    credentials: tls.Credentials | None = emu.state.get("tls_credentials")
    return credentials.certificate.cert_pem if credentials else None


async def _close(listeners: list[Listener]) -> None:
    for listener in listeners:
        listener.server.close()
        for session in list(listener.sessions):
            if session.transport is not None:
                session.transport.close()
        await listener.server.wait_closed()


def _stop_accepting(listeners: list[Listener]) -> None:
    """The stop has begun: no new connections; a session between messages is told 421 and closed, one
    in its DATA finishes that message first (its 250 means it is stored) and is closed after it."""
    for listener in listeners:
        listener.server.close()
        for session in list(listener.sessions):
            session.hang_up_after_data = True
            if not session.in_data:
                session.hang_up()


async def _messages_under_way(emu: Emulator, listeners: list[Listener]) -> None:
    """Until every DATA under way has its reply, or the stop's grace is over (a client still sending
    then gets no 250: nothing of its message was acknowledged, and it tries again)."""
    deadline = emu.stop_deadline or time.monotonic()
    while time.monotonic() < deadline and any(
            session.in_data for listener in listeners for session in listener.sessions):
        await asyncio.sleep(0.01)


async def stop(emu: Emulator) -> None:
    listeners: list[Listener] = emu.state.pop("smtp_listeners", [])
    await _messages_under_way(emu, listeners)
    await _close(listeners)
    # A message whose client left after its final dot is still being stored: before the database closes.
    await asyncio.gather(*emu.state.get("smtp_intakes", ()), return_exceptions=True)
