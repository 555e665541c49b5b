"""Message HTML and files, served so that nothing from a message can act in the UI's origin.

The HTML goes to a sandboxed iframe (no scripts, no same-origin, no top navigation) from its own route,
and that response carries a CSP with the `sandbox` directive too: opened directly in a tab it is still
an opaque-origin document that cannot run script. Remote images, fonts and stylesheets stay blocked
(CSP `img-src`) until the user asks for them, so opening a message never pings a tracker.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

SANDBOX = "allow-popups allow-popups-to-escape-sandbox"

_CID = re.compile(r"""cid:([^"'\s)>]+)""", re.IGNORECASE)
# No two `\s*` side by side around an optional quote: that form backtracks quadratically on a run of
# spaces (`<img src=` and 32 000 spaces stalled the message page for 10 s).
_REMOTE = re.compile(
    r"""(?:\b(?:src|background|srcset)\s*=\s*(?:["']\s*)?|url\(\s*(?:["']\s*)?)(?:https?:)?//""",
    re.IGNORECASE,
)
_HEAD = re.compile(r"<head(?:\s[^>]*)?>", re.IGNORECASE)
_BASE = re.compile(r"<base[\s>]", re.IGNORECASE)


def frame_csp(origin: str, remote: bool) -> str:
    extra = " https: http:" if remote else ""
    return "; ".join([
        "default-src 'none'",
        "script-src 'none'",
        f"img-src {origin} data:{extra}",
        f"style-src 'unsafe-inline'{extra}",
        f"font-src data:{extra}",
        "form-action 'none'",
        # A message's <base href> must not send the emulator's attachment URLs (cid: images) or its
        # relative links to another host once remote content is allowed (issue 11).
        "base-uri 'none'",
        f"sandbox {SANDBOX}",
        "frame-ancestors 'self'",
    ])


def remote_count(html: str) -> int:
    """How many remote resources (images, backgrounds, stylesheets' url()) the HTML asks for."""
    return len(_REMOTE.findall(html))


def rewrite_cids(html: str, urls: dict[str, str]) -> str:
    """`cid:logo` → the attachment's URL, for parts whose Content-ID matches (case-insensitive)."""
    lowered = {key.strip("<>").lower(): url for key, url in urls.items()}

    def swap(match: re.Match[str]) -> str:
        return lowered.get(match.group(1).lower(), match.group(0))

    return _CID.sub(swap, html)


def with_base_target(html: str) -> str:
    """Links open in a new tab rather than replacing the preview (unless the message sets a <base>)."""
    if _BASE.search(html):
        return html
    tag = '<base target="_blank">'
    head = _HEAD.search(html)
    if head:
        return html[: head.end()] + tag + html[head.end():]
    return tag + html


def origin_of(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def frame_response(request: Request, html: str, remote: bool, status: int = 200) -> Response:
    return HTMLResponse(with_base_target(html), status, headers={
        "Content-Security-Policy": frame_csp(origin_of(request), remote),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    })
