"""Binding listening sockets: a port in use is one clear line (a StartupError), not a traceback; the
count of HTTP requests under way; and which addresses and ports are the emulator's own."""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from emulator.core.config import Settings, StartupError

FREE_PORT = "0 picks a free one"  # said after a colon: the line's advice is already in parentheses


class Requests:
    """HTTP requests received (their head parsed) and not yet answered in this process, counted by the
    protocol the servers speak (wire.py), over every server of the process: a hint for grouping commits
    (db.py), never a fact anything depends on."""

    under_way = 0


def bind(host: str, port: int, flag: str = "--port", alternative: str = "") -> socket.socket:
    """Bind before serving, so a port in use is one clear line and port 0 is known. `flag` names the
    port's option in that line; `alternative` is one more way out (`--no-smtp` for the SMTP ports)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise _refusal(exc, host, port, flag, alternative) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _refusal(exc: OSError, host: str, port: int, flag: str, alternative: str) -> StartupError:
    ways = f"; or give {alternative}" if alternative else ""
    if isinstance(exc, socket.gaierror):
        return StartupError("--host", host, f"cannot listen on it: {exc.strerror}",
                            "give an address or name of this machine, e.g. 127.0.0.1")
    if exc.errno == errno.EADDRINUSE:
        return StartupError(flag, port, f"cannot listen on {host}:{port}: the port is already in use",
                            f"stop what listens there, or choose another port: {FREE_PORT}{ways}",
                            usage=False)
    if exc.errno == errno.EACCES:
        return StartupError(flag, port, f"cannot listen on {host}:{port}: permission denied",
                            f"ports below 1024 need root, so choose a higher one: {FREE_PORT}{ways}",
                            usage=False)
    if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return StartupError("--host", host, f"cannot listen on it: {exc.strerror}",
                            "give an address of this machine: 127.0.0.1, or 0.0.0.0 for every interface",
                            usage=False)
    return StartupError(flag, port, f"cannot listen on {host}:{port}: {exc.strerror}",
                        f"choose another port: {FREE_PORT}{ways}", usage=False)


# ---- the emulator's own listeners, which its outgoing clients never call (issue 36) ----------------

def own_ports(state: Mapping[str, Any], settings: Settings) -> frozenset[int]:
    """The TCP ports this emulator listens on: HTTP (with --port 0 known only once bound, from
    `http_url`) and the SMTP ports the SMTP server bound."""
    url = str(state.get("http_url") or "")
    http = urlsplit(url).port if url else settings.port
    smtp = state.get("smtp_ports") or {}
    return frozenset(port for port in (http, *smtp.values()) if port)


def is_this_machine(address: str) -> bool:
    """Whether a connection to `address` stays on this machine: a loopback or unspecified address, or
    one of its interfaces' (the kernel lets a socket bind only to those)."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified:
        return True
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def names_this_machine(host: str) -> bool:
    """Whether `host`, as written (no lookup), is this machine: a local name, or an address of it."""
    name = host.strip("[]").lower().rstrip(".")
    if name in ("localhost", socket.gethostname().lower()) or name.endswith(".localhost"):
        return True
    return is_this_machine(name)


def is_loopback(host: str) -> bool:
    """Whether listening on `host` keeps the server on this machine: `localhost`, 127.0.0.0/8 or ::1
    (issue 38: any other host is shared). An empty host or 0.0.0.0 (every interface) is not; nor is a
    name, which may resolve anywhere."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def allows_outbound(flag: bool | None, host: str) -> bool:
    """Whether the link check or release may connect out (issue 39): as `--link-check`/`--release`
    say when given, else only when listening on loopback (a team host is no request proxy or relay)."""
    return flag if flag is not None else is_loopback(host)
