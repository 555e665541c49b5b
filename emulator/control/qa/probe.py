"""The link check on demand (issue 39): each link of an email requested, and what answered.

    POST /_emulator/outbox/{id}/link-check    (the GET of the same path is the offline check, links.py)

The links: every `href` of the HTML (a click-tracking URL as the link it leads to) and every http(s) URL
of the text part, in that order, each once, at most MAX_LINKS. Each is asked with HEAD, and with GET where
HEAD is refused (405, 501); up to MAX_REDIRECTS redirects are followed, each hop listed. A request sends
no cookie and no Referer, and takes at most TIMEOUT seconds; CONCURRENCY run at once, on the event loop
(only the answer's head is read, then the connection closes), so the server keeps answering meanwhile.
A failure is named: `refused`, `timeout`, `dns`, `tls`, `unreachable`, `protocol`, or `own` for a link to
this emulator's own ports, which is never requested (issue 36).

Off on a non-loopback --host unless --link-check: a team host must not become a request proxy.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit

from emulator import __version__
from emulator.control.qa.scan import scan
from emulator.core import errors
from emulator.core.errors import ApiError
from emulator.core.net import allows_outbound, is_this_machine, own_ports

if TYPE_CHECKING:
    from emulator.control.qa import Material
    from emulator.core.emulator import Emulator

MAX_LINKS = 100
TIMEOUT = 5.0
CONCURRENCY = 8
MAX_REDIRECTS = 5
MAX_HEAD_BYTES = 64 * 1024
REDIRECTS = (301, 302, 303, 307, 308)
USER_AGENT = f"resend-emulator/{__version__} (link check)"
_TARGET_SAFE = "/?%:@!$&'()*+,;=-._~"
# A URL in plain text ends at a space or a bracket; punctuation that ends a sentence is not part of it.
_TEXT_URL = re.compile(r"https?://[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
_TRAILING = ".,;:!?"
_TRACKED = re.compile(r"/_emulator/t/click/([A-Za-z0-9_-]+)$")


OFF = ("The link check is off on a non-loopback host: it would make this emulator request any URL an"
       " email holds. Start it with --link-check to allow it.")


def check_allowed(emu: Emulator) -> None:
    if not allows_outbound(emu.settings.link_check, emu.settings.host):
        raise ApiError(errors.OUTBOUND_DISABLED, OFF)


class ProbeError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ---- which links -------------------------------------------------------------------------------

def _original(url: str, found: Material) -> str:
    tracked = _TRACKED.search(url)
    if tracked and tracked.group(1) in found.tracking:
        return found.tracking[tracked.group(1)][1] or url
    return url


def links_of(found: Material) -> tuple[list[str], int]:
    """The http(s) links to request, in order, each once, at most MAX_LINKS; and how many there were."""
    hrefs = [str(tag.attrs.get("href") or "").strip() for tag in scan(found.html or "").tags
             if tag.name in ("a", "area")]
    texts = [match.rstrip(_TRAILING) for match in _TEXT_URL.findall(found.text or "")]
    unique = dict.fromkeys(_original(url, found) for url in [*hrefs, *texts])
    links = [url for url in unique if url.lower().startswith(("http://", "https://"))]
    return links[:MAX_LINKS], len(links)


# ---- one request -------------------------------------------------------------------------------

def _target(url: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, Host header, request target) of an http(s) URL."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise ProbeError("malformed", "the URL has a bad port") from None
    host = parts.hostname or ""
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ProbeError("malformed", "not an http(s) URL with a host")
    scheme = parts.scheme.lower()
    port = port or (443 if scheme == "https" else 80)
    try:
        named = f"[{host}]" if ":" in host else host.encode("idna").decode("ascii")
    except UnicodeError:
        raise ProbeError("malformed", "the host is not a valid name") from None
    header = named if port == (443 if scheme == "https" else 80) else f"{named}:{port}"
    target = quote(parts.path or "/", safe=_TARGET_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_TARGET_SAFE)
    return scheme, host, port, header, target


async def _addresses(host: str, port: int, own_ports: frozenset[int]) -> list[str]:
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ProbeError("dns", f"the name does not resolve: {exc.strerror}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if port in own_ports and any(is_this_machine(address) for address in addresses):
        raise ProbeError("own", "a link to this emulator itself, which the link check never requests")
    return addresses


async def _connect(scheme: str, host: str, port: int, addresses: list[str],
                   tls: ssl.SSLContext) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    failure: OSError = OSError("no address")
    for address in addresses:  # these very addresses: a name cannot resolve elsewhere a moment later
        try:
            return await asyncio.open_connection(
                address, port, limit=MAX_HEAD_BYTES, ssl=tls if scheme == "https" else None,
                server_hostname=host if scheme == "https" else None)
        except ssl.SSLError as exc:
            raise ProbeError("tls", f"TLS failed: {exc.reason or exc}") from None
        except OSError as exc:
            failure = exc
    if isinstance(failure, ConnectionRefusedError):
        raise ProbeError("refused", f"connection refused by {host}:{port}")
    raise ProbeError("unreachable", f"cannot connect to {host}:{port}: {failure.strerror or failure}")


def _head(data: bytes) -> tuple[int, str | None]:
    """The status and Location of an answer's head (`HTTP/1.1 200 OK` and its header lines)."""
    lines = data.decode("latin-1").split("\r\n")
    status = re.match(r"HTTP/\d(?:\.\d)? (\d{3})", lines[0])
    if status is None:
        raise ProbeError("protocol", "the answer is not HTTP")
    location = next((line.split(":", 1)[1].strip() for line in lines[1:]
                     if line.lower().startswith("location:")), None)
    return int(status.group(1)), location


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    request: bytes) -> tuple[int, str | None]:
    writer.write(request)
    while True:
        try:
            status, location = _head(await reader.readuntil(b"\r\n\r\n"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            raise ProbeError("protocol", "the answer ended early or its head is too long") from None
        if status >= 200 or status == 101:
            return status, location  # an interim answer (100, 103) comes before the real one


async def _request(method: str, url: str, own_ports: frozenset[int],
                   tls: ssl.SSLContext) -> tuple[int, str | None]:
    scheme, host, port, header, target = _target(url)
    request = (f"{method} {target} HTTP/1.1\r\nHost: {header}\r\nUser-Agent: {USER_AGENT}\r\n"
               "Accept: */*\r\nConnection: close\r\n\r\n").encode("latin-1")
    try:
        async with asyncio.timeout(TIMEOUT):
            reader, writer = await _connect(scheme, host, port, await _addresses(host, port, own_ports), tls)
            try:
                return await _exchange(reader, writer, request)
            finally:
                writer.close()
    except TimeoutError:
        raise ProbeError("timeout", f"no answer within {TIMEOUT:g} s") from None
    except ssl.SSLError as exc:
        raise ProbeError("tls", f"TLS failed: {exc.reason or exc}") from None
    except OSError as exc:
        raise ProbeError("unreachable", f"the connection failed: {exc.strerror or exc}") from None


async def _status(url: str, own_ports: frozenset[int], tls: ssl.SSLContext) -> tuple[str, int, str | None]:
    status, location = await _request("HEAD", url, own_ports, tls)
    if status in (405, 501):  # HEAD not offered: the page itself is asked for (its body is not read)
        status, location = await _request("GET", url, own_ports, tls)
        return "GET", status, location
    return "HEAD", status, location


async def probe(url: str, own_ports: frozenset[int], tls: ssl.SSLContext) -> dict[str, Any]:
    """One link's answer: its final status (after at most MAX_REDIRECTS redirects), or the error."""
    hops: list[dict[str, Any]] = []
    current = url
    try:
        while True:
            method, status, location = await _status(current, own_ports, tls)
            if status not in REDIRECTS or not location or len(hops) == MAX_REDIRECTS:
                break
            hops.append({"url": current, "status": status, "location": urljoin(current, location)})
            current = hops[-1]["location"]
    except ProbeError as failure:
        return {"url": url, "status": None, "ok": False, "error": failure.kind, "message": str(failure),
                "redirects": hops, "final_url": current}
    return {"url": url, "status": status, "ok": status < 400, "method": method, "error": None,
            "message": None, "redirects": hops, "final_url": current}


async def probe_all(links: list[str], own_ports: frozenset[int]) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(CONCURRENCY)
    tls = await asyncio.to_thread(ssl.create_default_context)  # reading the CA store takes milliseconds

    async def one(url: str) -> dict[str, Any]:
        async with gate:
            return await probe(url, own_ports, tls)

    return list(await asyncio.gather(*(one(url) for url in links)))


async def run(emu: Emulator, email_id: str, found: Material) -> dict[str, Any]:
    """The link check of one email's `material` (read in its transaction; call this after it)."""
    check_allowed(emu)
    links, total = await asyncio.to_thread(links_of, found)
    results = await probe_all(links, own_ports(emu.state, emu.settings))
    return {"object": "link_probe", "email_id": email_id, "checked": len(results), "total": total,
            "truncated": total > len(results), "broken": sum(1 for result in results if not result["ok"]),
            "links": results}
