"""`GET /_emulator/smtp`: where and how to connect over SMTP, with the certificate to trust."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX
from emulator.smtp.server import MAX_MESSAGE_BYTES, USERNAME, certificate_pem


async def connection_info(request: Request) -> Response:
    """Where and how to connect, with the certificate to trust (clients in any language, CI scripts)."""
    emu = emulator_of(request)
    pem = certificate_pem(emu)
    return json_response({
        "enabled": bool(emu.state.get("smtp_ports")), "host": emu.settings.host,
        "ports": emu.state.get("smtp_ports", {}), "username": USERNAME,
        "auth_plaintext": emu.settings.smtp_auth_plaintext, "max_message_bytes": MAX_MESSAGE_BYTES,
        "certificate": pem.decode() if pem else None,
    })


ROUTES = [Route(f"{PREFIX}/smtp", connection_info, methods=["GET"])]
