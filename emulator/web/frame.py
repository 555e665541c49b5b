"""Message HTML and files, served so that nothing from a message can act in the UI's origin.

The HTML goes to a sandboxed iframe (no same-origin, no top navigation) from its own route, and that
response carries a CSP with the `sandbox` directive too: opened directly in a tab it is still an
opaque-origin document. Only one script runs there, ours: it carries a fresh random nonce the CSP
names, and it tells the parent page how tall the email is (postMessage) so the frame can be as tall as
its content. The email's own scripts, handlers and `javascript:` links have no nonce and never run.
Remote images, fonts and stylesheets stay blocked (CSP `img-src`) until the user asks for them, so
opening a message never pings a tracker.

Nothing the email does replaces the preview (issue 39). No CSP directive or sandbox flag stops a frame
from navigating itself, so each way an email can do that without script is closed apart: a
`<meta http-equiv=refresh>` is renamed before it reaches the browser (a script cannot cancel a refresh
the parser has already scheduled); a link whose target would load in this frame or an ancestor
(`_self`, `_top`, `_parent`, or none under a `<base target>`) is switched to a new tab by our script as
it is clicked, like every other link of the preview; forms never submit (no `allow-forms`, and CSP
`form-action 'none'`). The Checks tab lists each of these (control/qa/navigation.py).
"""

from __future__ import annotations

import re
import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

SANDBOX = "allow-scripts allow-popups allow-popups-to-escape-sandbox"
# Reports the document's scrollable height whenever it may have changed. The parent first shrinks the
# frame to a sliver (see static/preview.js), so that height is the content's own, not the frame's: a
# one-liner gives a short frame, a 3 000 px newsletter a 3 000 px one. Each report says at which frame
# height it was taken, so the parent can drop the ones a resize made stale. The parent accepts numbers
# from this frame only.
MEASURE = """(function () {
  function report() {
    var root = document.documentElement, scroller = document.scrollingElement || root;
    // A horizontal scrollbar (an email wider than the frame) takes height too.
    var height = scroller.scrollHeight + Math.max(0, innerHeight - root.clientHeight);
    parent.postMessage({ resendEmulatorFrameHeight: height, atHeight: innerHeight }, "*");
  }
  if (window.ResizeObserver) {
    var watch = new ResizeObserver(report);
    watch.observe(document.documentElement);
    addEventListener("DOMContentLoaded", function () { if (document.body) watch.observe(document.body); });
  }
  addEventListener("load", report);
  addEventListener("resize", report);
  // The parent's scripts may start after this document loaded: they ask again once they listen.
  addEventListener("message", function (event) {
    if (event.source === parent && event.data === "resendEmulatorMeasure") report();
  });
  // A link that would load here or above (its own target, else the first <base target>) opens in a new
  // tab instead: the attribute is read when the click's default action runs, after this listener.
  // In-page (#) and javascript: links are left alone: neither replaces this document.
  addEventListener("click", function (event) {
    var link = event.target && event.target.closest ? event.target.closest("a, area") : null;
    if (!link) return;
    var href = (link.getAttribute("href") || link.getAttribute("xlink:href") || "").trim();
    if (!href || href.charAt(0) === "#" || /^javascript:/i.test(href)) return;
    var base = document.querySelector("base[target]");
    var target = link.getAttribute("target") || (base ? base.getAttribute("target") : "") || "";
    if (/^(_self|_top|_parent)?$/i.test(target.trim())) link.setAttribute("target", "_blank");
  }, true);
}());"""

_CID = re.compile(r"""cid:([^"'\s)>]+)""", re.IGNORECASE)
# No two `\s*` side by side around an optional quote: that form backtracks quadratically on a run of
# spaces (`<img src=` and 32 000 spaces stalled the message page for 10 s).
_REMOTE = re.compile(
    r"""(?:\b(?:src|background|srcset)\s*=\s*(?:["']\s*)?|url\(\s*(?:["']\s*)?)(?:https?:)?//""",
    re.IGNORECASE,
)
# Each attempt stops where the next one would begin, so a run without the terminator is read once, not
# once per attempt (issue 25): `<head ` or `color-scheme` repeated without `>` or `dark`.
_HEAD = re.compile(r"<head(?:\s[^<>]*)?>", re.IGNORECASE)
_DOCTYPE = re.compile(r"\s*<!doctype[^>]*>", re.IGNORECASE)
_BASE = re.compile(r"<base[\s>]", re.IGNORECASE)
# Every `http-equiv` whose value is, or may be after character references, `refresh`.
_REFRESH = re.compile(r"""http-equiv(?=\s*=\s*(?:["']\s*)?(?:refresh|&))""", re.IGNORECASE)
_SCHEME = re.compile(r"prefers-color-scheme\s*:\s*(dark|light)", re.IGNORECASE)
_DARK_CAPABLE = re.compile(r"color-scheme(?:(?!color-scheme)[^;>])*dark", re.IGNORECASE)
_DARK_STYLES = re.compile(r"prefers-color-scheme\s*:\s*dark|data-og[sa][cb]\b", re.IGNORECASE)


def frame_csp(origin: str, remote: bool, nonce: str) -> str:
    extra = " https: http:" if remote else ""
    return "; ".join([
        "default-src 'none'",
        f"script-src 'nonce-{nonce}'",
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


def _at_top(html: str, markup: str) -> str:
    """`markup` first in the document: inside <head> if there is one, else after a doctype (before it,
    the page would fall back to quirks mode), else at the very start."""
    head = _HEAD.search(html) or _DOCTYPE.match(html)
    if head:
        return html[: head.end()] + markup + html[head.end():]
    return markup + html


def with_base_target(html: str) -> str:
    """Links open in a new tab rather than replacing the preview (unless the message sets a <base>)."""
    return html if _BASE.search(html) else _at_top(html, '<base target="_blank">')


def dark_capable(html: str) -> bool:
    """The email declares it can be shown dark (`color-scheme` naming `dark`, as a meta tag or in CSS)."""
    return bool(_DARK_CAPABLE.search(html))


def in_scheme(html: str, dark: bool) -> str:
    """The email as a mail client in light or in dark mode shows it, whatever the system setting or the
    UI's theme: browsers answer `prefers-color-scheme` in a frame from those, never from a toggle, so the
    preview rewrites the queries instead (in dark mode `dark` always matches and `light` never; in light
    mode the other way round; in `<style>` and in `media=` attributes alike). An email that declares it can
    be dark gets the dark canvas and default colors of a dark client in dark mode, and the light ones in
    light mode even when the system is dark. One that does not stays as designed, as Apple Mail shows it."""
    matching = "dark" if dark else "light"
    rewritten = _SCHEME.sub(lambda m: "min-width: 0px" if m.group(1).lower() == matching
                            else "min-width: 999999px", html)
    if dark_capable(html):
        scheme = f"<style>:root {{ color-scheme: {matching} only !important; }}</style>"
        rewritten = _at_top(rewritten, scheme)
    return rewritten


SCHEMES = ("light", "dark", "forced")
# Forced dark is a simulation of the full colour inversion the Gmail app (iOS) and Outlook (Windows) apply
# to mail whatever styles it has: light backgrounds turn dark, dark text light, dark areas light, hues
# kept; images are left as they are, so a black logo on a transparent background sinks into the dark.
# The parent page inverts the whole frame (static/message.css: its canvas too, which a filter inside the
# document does not reach); inside, images are inverted back (exact for black and white, close for
# colours). Clients that invert only light areas (Outlook.com, the Gmail app on Android) are darker on
# already dark parts; the preview shows the harsher case.
FORCED_DARK = ("<style>img, picture, video, input[type=image], svg image"
               " { filter: invert(1) hue-rotate(180deg) !important; }</style>")


def block_refresh(html: str) -> str:
    """`<meta http-equiv=refresh>` made inert (the attribute renamed): the preview stays the email."""
    return _REFRESH.sub("data-blocked-http-equiv", html)


def dark_styles(html: str) -> bool:
    """The email has styles of its own for dark mode: a `prefers-color-scheme: dark` query, a
    `color-scheme` naming dark, or Outlook.com's `[data-ogsc]`/`[data-ogsb]` selectors."""
    return dark_capable(html) or bool(_DARK_STYLES.search(html))


def schemed(html: str, scheme: str) -> str:
    """The email in the preview's scheme: `light`, `dark` (as a client renders dark-aware mail) or
    `forced` (light styles under the simulated inversion: the clients that invert ignore dark styles)."""
    if scheme == "forced":
        return _at_top(in_scheme(html, dark=False), FORCED_DARK)
    return in_scheme(html, dark=scheme == "dark")


def origin_of(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def frame_response(request: Request, html: str, remote: bool, status: int = 200,
                   scheme: str = "light") -> Response:
    # Unpredictable on purpose (not from the seed): a nonce an email could guess would let its script run.
    nonce = secrets.token_urlsafe(18)
    measure = f'<script nonce="{nonce}">{MEASURE}</script>'
    body = _at_top(with_base_target(schemed(block_refresh(html), scheme)), measure)
    return HTMLResponse(body, status, headers={
        "Content-Security-Policy": frame_csp(origin_of(request), remote, nonce),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    })
