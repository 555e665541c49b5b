"""While the pytest plugin is active, no name of resend.com resolves in the test process.

Every Python HTTP client (requests/urllib3, httpx/httpcore sync and async, urllib, http.client, and the
emulator's own webhook client) looks a host name up through `socket.getaddrinfo` before it connects,
so refusing resend.com names there stops the request before any DNS query or connection attempt,
whatever base URL, key or environment the test ended up with. resend.com is also added to NO_PROXY:
through a proxy the client would look up only the proxy's name, and send resend.com's in a CONNECT.
Other names pay one suffix comparison, and loopback is never touched.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

DOMAIN = "resend.com"
PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
ALLOW_FLAG = "--resend-allow-real-api"


def is_resend_host(host: object) -> bool:
    """resend.com or any name under it, in any case, with or without the root's trailing dot."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.rstrip(".").lower()
    return name == DOMAIN or name.endswith("." + DOMAIN)


def refusal(host: str, port: object) -> str:
    """The one sentence a test that reached for the real API fails with."""
    where = f"https://{host}" if port in (443, "443", "https", None) else f"{host}:{port}"
    return (f"resend-emulator: this test tried to reach {where}, the real Resend API, which tests "
            f"never reach while the emulator's pytest plugin is active; ask for the `resend_emulator` "
            f"fixture and leave `resend_emulator_autoenv` True (it sets RESEND_API_URL and points an "
            f"imported `resend` at the emulator), or set RESEND_API_URL to the emulator's url with "
            f"`resend_emulator.patch_env()` (run pytest with {ALLOW_FLAG} only if this suite means to "
            f"call the real service).")


@dataclass
class Guard:
    """The originals it replaced, to put back in `uninstall`."""

    getaddrinfo: Callable[..., Any]
    gethostbyname: Callable[[str], str]
    gethostbyname_ex: Callable[[str], Any]
    proxy_env: dict[str, str | None] = field(default_factory=dict)

    def uninstall(self) -> None:
        socket.getaddrinfo = self.getaddrinfo  # type: ignore[assignment]
        socket.gethostbyname = self.gethostbyname
        socket.gethostbyname_ex = self.gethostbyname_ex
        for name, value in self.proxy_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def install(refuse: Callable[[str], NoReturn]) -> Guard:
    """Refuse resend.com names in the socket module (refuse raises) until `uninstall`."""
    guard = Guard(socket.getaddrinfo, socket.gethostbyname, socket.gethostbyname_ex)
    resolve, by_name, by_name_ex = guard.getaddrinfo, guard.gethostbyname, guard.gethostbyname_ex

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if is_resend_host(host):
            refuse(refusal(_text(host), port))
        return resolve(host, port, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        if is_resend_host(host):
            refuse(refusal(_text(host), None))
        return by_name(host)

    def gethostbyname_ex(host: str) -> Any:
        if is_resend_host(host):
            refuse(refusal(_text(host), None))
        return by_name_ex(host)

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    guard.proxy_env = _bypass_proxies()
    return guard


def _text(host: str | bytes) -> str:
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    return text.rstrip(".").lower()


def _bypass_proxies() -> dict[str, str | None]:
    """Add resend.com to NO_PROXY/no_proxy (kept as they were otherwise); return the old values."""
    saved = {name: os.environ.get(name) for name in PROXY_VARIABLES}
    for name, value in saved.items():
        entries = [entry.strip() for entry in (value or "").split(",") if entry.strip()]
        if "*" in entries or DOMAIN in entries:
            continue
        os.environ[name] = ",".join([*entries, DOMAIN, "." + DOMAIN])
    return saved
