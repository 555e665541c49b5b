"""List-Unsubscribe as a mailbox provider reads it: RFC 2369 syntax, RFC 8058 one-click.

Gmail and Yahoo ask bulk senders (since 2024) for one-click unsubscribe: a `List-Unsubscribe` with an
`https` URI plus `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. Transactional mail needs neither,
so a missing header is a warning, not an error. (RFC 8058 also wants both headers under a DKIM signature;
the emulator signs nothing, so that part is not checked.)
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from emulator.control.qa.findings import problem, status_of

ONE_CLICK = "List-Unsubscribe=One-Click"
# A broadcast's unsubscribe link points at the emulator (plain http on loopback) where the real service
# puts its own https page: it stands for that page, so it is not held against the sender.
STAND_IN = "/_emulator/unsubscribe/"
_ENTRY = re.compile(r"\s*(<[^>]*>|[^,]+)\s*(?:,|$)")


def _uris(value: str) -> tuple[list[str], list[dict[str, str]]]:
    uris, problems = [], []
    for entry in (m.group(1).strip() for m in _ENTRY.finditer(value) if m.group(1).strip()):
        if not (entry.startswith("<") and entry.endswith(">")):
            problems.append(problem("not_bracketed", "error", f"`{entry}` must be inside angle brackets"
                                     " (RFC 2369)."))
            continue
        uri = entry[1:-1].strip()
        scheme = urlsplit(uri).scheme.lower()
        if scheme not in ("mailto", "https", "http"):
            problems.append(problem("bad_scheme", "error", f"`{uri}`: only mailto: and https: URIs are used"
                                     " by mailbox providers."))
        elif scheme == "http" and not _stand_in(uri):
            problems.append(problem("insecure", "warning", f"`{uri}` is http:, one-click needs https:."))
        uris.append(uri)
    return uris, problems


def _stand_in(uri: str) -> bool:
    return urlsplit(uri).path.startswith(STAND_IN)


def _one_click(uris: list[str], post: str | None) -> list[dict[str, str]]:
    has_https = any(uri.lower().startswith("https:") or _stand_in(uri) for uri in uris)
    if post is None:
        return [problem("no_one_click", "warning", "No `List-Unsubscribe-Post` header: not one-click"
                         " (RFC 8058), which Gmail and Yahoo ask of bulk senders.")]
    problems = []
    if post.strip() != ONE_CLICK:
        problems.append(problem("bad_post_value", "error", f"`List-Unsubscribe-Post` must be exactly"
                                 f" `{ONE_CLICK}`, not `{post.strip()}`."))
    if not has_https:
        problems.append(problem("post_without_https", "error", "One-click (RFC 8058) needs an https: URI"
                                 " in `List-Unsubscribe`."))
    return problems


def check_unsubscribe(headers: list[dict[str, str]]) -> dict[str, Any]:
    """`headers`: the message's headers as `{name, value}` in order (the `.eml` as received)."""
    values = {h["name"].lower(): h["value"] for h in headers}
    value, post = values.get("list-unsubscribe"), values.get("list-unsubscribe-post")
    if value is None:
        problems = [problem("missing", "warning", "No `List-Unsubscribe` header: fine for transactional"
                             " mail, required by Gmail and Yahoo for bulk mail.")]
        if post is not None:
            problems.append(problem("post_without_header", "error", "`List-Unsubscribe-Post` without"
                                     " `List-Unsubscribe`."))
        uris: list[str] = []
    else:
        uris, problems = _uris(value)
        if not uris:
            problems.append(problem("empty", "error", "`List-Unsubscribe` names no URI."))
        problems += _one_click(uris, post)
    one_click = value is not None and not any(p["problem"] in ("no_one_click", "bad_post_value",
                                                                "post_without_https") for p in problems)
    return {"object": "unsubscribe_check", "list_unsubscribe": value, "list_unsubscribe_post": post,
            "uris": uris, "one_click": one_click, "status": status_of(problems), "problems": problems}

