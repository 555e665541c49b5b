"""Every link and image of an email with what can be known about it offline (nothing is fetched).

Problems, each `error` (the recipient gets something broken or dangerous) or `warning`:
- `malformed` (error): not a URL a mail client can open (spaces, no host, a bad port or IPv6 literal);
- `javascript` (error): a `javascript:` link — every client strips or blocks it;
- `relative` (error): no scheme — there is no page for a relative URL to be relative to in an inbox;
- `local_host` (error): localhost, a loopback/private/link-local address or a `.local`/`.internal` name —
  it works on the sender's machine and nowhere else;
- `insecure` (warning): `http:` — browsers warn, and some clients rewrite or block it;
- `missing_alt` (warning): an image without an `alt` attribute (`alt=""` marks a decorative image, fine);
- `missing_cid` (error): a `cid:` image that names no attachment's `content_id`.
A click-tracking URL of the emulator is checked as the link it leads to (`target`); the open-tracking
pixel is listed as such and not checked (it is the emulator's own).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from emulator.control.qa.findings import problem, status_of
from emulator.control.qa.scan import Tag, scan

LOCAL_SUFFIXES = (".local", ".localhost", ".internal", ".lan", ".home.arpa")
FINDINGS = {
    "malformed": ("error", "Not a URL a mail client can open."),
    "javascript": ("error", "A javascript: link: mail clients strip or block it."),
    "relative": ("error", "A relative URL: there is no page for it to be relative to in an inbox."),
    "local_host": ("error", "Points at a local or private host: it works on your machine only."),
    "missing_cid": ("error", "No attachment has this content_id."),
    "insecure": ("warning", "http: rather than https:."),
    "missing_alt": ("warning", "The image has no alt attribute (alt=\"\" marks a decorative one)."),
}
_TRACKING = re.compile(r"/_emulator/t/(click|open)/([A-Za-z0-9_-]+)$")
OPAQUE_SCHEMES = ("mailto", "tel", "sms", "data")


@lru_cache(maxsize=1024)
def _host_problem(host: str) -> str | None:
    if host == "localhost" or host.endswith(LOCAL_SUFFIXES):
        return "local_host"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return "local_host" if not address.is_global else None


def url_problems(url: str) -> list[str]:
    stripped = url.strip()
    lowered = stripped.lower()
    if lowered.startswith("javascript:"):
        return ["javascript"]
    if not stripped or any(c.isspace() for c in stripped):
        return ["malformed"]
    try:
        parts = urlsplit(stripped)
        host, _ = parts.hostname, parts.port
    except ValueError:
        return ["malformed"]
    if parts.scheme in OPAQUE_SCHEMES or parts.scheme == "cid":
        return []
    if not parts.scheme:
        return [] if stripped.startswith("#") else ["relative"]
    if parts.scheme not in ("http", "https"):
        return []
    if not host:
        return ["malformed"]
    problems = [] if parts.scheme == "https" else ["insecure"]
    local = _host_problem(host)
    return [local, *problems] if local else problems


def _entry(kind: str, url: str, line: int, names: list[str], **extra: Any) -> dict[str, Any]:
    problems = [problem(name, *FINDINGS[name]) for name in names]
    return {"kind": kind, "url": url, "line": line, **extra, "status": status_of(problems),
            "problems": problems}


def _check(kind: str, tag: Tag, url: str, tracking: dict[str, tuple[str, str | None]],
           content_ids: set[str]) -> dict[str, Any]:
    alt_problem = ["missing_alt"] if kind == "image" and "alt" not in tag.attrs else []
    found = _TRACKING.search(url.strip().split("?")[0]) if "/_emulator/t/" in url else None
    if found and found.group(2) in tracking:
        target = tracking[found.group(2)][1]
        if found.group(1) == "open":
            return _entry("tracking_pixel", url, tag.line, [])
        return _entry(kind, url, tag.line, url_problems(target or "") + alt_problem, target=target)
    problems = url_problems(url)
    # Content-IDs compare case-insensitively, as the preview's cid: rewriting does (web/frame.py).
    if url.strip().lower().startswith("cid:") and url.strip()[4:].strip("<>").lower() not in content_ids:
        problems.append("missing_cid")
    return _entry(kind, url, tag.line, problems + alt_problem)


def check_links(html: str | None, tracking: dict[str, tuple[str, str | None]],
                content_ids: set[str]) -> dict[str, Any]:
    """`tracking`: token → (kind, original url) of this email; `content_ids`: its inline attachments."""
    entries = []
    for tag in scan(html or "").tags:
        if tag.name in ("a", "area") and tag.attrs.get("href") is not None:
            entries.append(_check("link", tag, tag.attrs["href"] or "", tracking, content_ids))
        elif tag.name == "img":
            entries.append(_check("image", tag, tag.attrs.get("src") or "", tracking, content_ids))
    return {
        "object": "link_check",
        "errors": sum(e["status"] == "error" for e in entries),
        "warnings": sum(e["status"] == "warning" for e in entries),
        "links": entries,
    }
