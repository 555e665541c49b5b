"""The QA toolbox: checks of one outbox email that a mail catcher's user expects, as JSON for CI.

    GET /_emulator/outbox/{id}/html-check         HTML/CSS support in the major clients (caniemail data)
    GET /_emulator/outbox/{id}/link-check         every link and image, as far as is known offline
    POST /_emulator/outbox/{id}/link-check        every link requested, its status (probe.py)
    GET /_emulator/outbox/{id}/unsubscribe-check  List-Unsubscribe (RFC 2369) and one-click (RFC 8058)
    GET /_emulator/outbox/{id}/text-check         the plain-text part
    GET /_emulator/outbox/{id}/spam-check         SpamAssassin's score and rules (spam.py; --spamassassin)
    GET /_emulator/outbox/{id}/controls-check     invisible and bidi control characters (controls.py)
    GET /_emulator/outbox/{id}/qa                 all of them in one body (what the message view shows)

`account`/`api_key` in the query scope the lookup like the other outbox routes. Nothing is fetched from
the network (spamd aside, when configured; the POST link check is asked for): the checks read the email
as stored (as the recipient gets it, tracking included).

The checks grow with the HTML (linear, ~1 s per MB of dense markup), so they run in a worker thread after
the transaction that read the email: the server keeps answering meanwhile (`material` inside the
transaction, `report` after it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control import release
from emulator.control.outbox import BASE, message_headers, requested_email
from emulator.control.qa import probe, spam
from emulator.control.qa.compat import check_html
from emulator.control.qa.controls import check_controls
from emulator.control.qa.links import check_links
from emulator.control.qa.navigation import check_navigation
from emulator.control.qa.plaintext import check_text
from emulator.control.qa.scan import scan
from emulator.control.qa.unsubscribe import check_unsubscribe
from emulator.mime.message import html_to_text
from emulator.resources.emails.service import email_eml

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx


@dataclass(frozen=True)
class Material:
    """What the checks read of one email."""

    html: str | None
    text: str | None
    text_auto: bool
    headers: list[dict[str, str]]
    tracking: dict[str, tuple[str, str | None]]
    content_ids: set[str]
    filenames: tuple[str, ...] = ()

    def targets(self) -> dict[str, str]:
        """Each click-tracking URL of the HTML → its original link."""
        return {url: target for url, target in _tracking_urls(self) if target}


def _tracking_urls(material: Material) -> list[tuple[str, str | None]]:
    found = []
    for tag in scan(material.html or "").tags:
        href = tag.attrs.get("href") or ""
        token = href.rsplit("/", 1)[-1]
        if "/_emulator/t/click/" in href and token in material.tracking:
            found.append((href, material.tracking[token][1]))
    return found


def _generated(found: Material) -> bool:
    """Made from the HTML because the sender gave no text. Rendering the `.eml` stores that text and
    clears `text_auto`, so a stored text equal to the HTML's own rendering counts as generated too."""
    if not found.html:
        return False
    return found.text_auto or (found.text is not None and found.text == html_to_text(found.html))


async def material(tx: Tx, row: Row) -> Material:
    """What the checks read, from the database (in `tx`); the checks themselves run in `report`."""
    links = await tx.all("SELECT token, kind, url FROM email_links WHERE account = ? AND email_id = ?",
                         (row["account"], row["id"]))
    parts = await tx.all("SELECT content_id, filename FROM email_attachments WHERE account = ?"
                         " AND email_id = ? ORDER BY seq", (row["account"], row["id"]))
    text_auto = bool(row["text_auto"])
    headers = message_headers(await email_eml(tx, row))  # fills in a generated text part, once
    return Material(
        html=row["html"], text=row["text"], text_auto=text_auto, headers=headers,
        tracking={link["token"]: (link["kind"], link["url"]) for link in links},
        content_ids={str(part["content_id"]).strip("<>").lower() for part in parts if part["content_id"]},
        filenames=tuple(part["filename"] or "" for part in parts),
    )


CHECKS: dict[str, Callable[[Material], dict[str, Any]]] = {
    "html": lambda found: check_html(found.html),
    "links": lambda found: check_links(found.html, found.tracking, found.content_ids),
    "unsubscribe": lambda found: check_unsubscribe(found.headers),
    "text": lambda found: check_text(found.html, found.text, _generated(found), found.targets()),
    "navigation": lambda found: check_navigation(found.html),
    "controls": lambda found: check_controls(found.headers, list(found.filenames)),
}


def _run(email_id: str, found: Material, checks: tuple[str, ...]) -> dict[str, Any]:
    return {"object": "qa_report", "email_id": email_id, **{name: CHECKS[name](found) for name in checks}}


async def report(email_id: str, found: Material, checks: tuple[str, ...] = tuple(CHECKS)) -> dict[str, Any]:
    """The named checks of one email's `material`, in a worker thread (call it outside a transaction)."""
    return await asyncio.to_thread(_run, email_id, found, checks)


async def _report_of(request: Request, checks: tuple[str, ...]) -> dict[str, Any]:
    row = await requested_email(request)
    async with emulator_of(request).transaction(row["account"]) as tx:
        found = await material(tx, row)
    return await report(row["id"], found, checks)


def _one(check: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        body = await _report_of(request, (check,))
        return json_response({"email_id": body["email_id"], **body[check]})
    return endpoint


async def full_report(request: Request) -> Response:
    report = await _report_of(request, tuple(CHECKS))
    return json_response({**report, "spam": await spam.for_email(request, await requested_email(request))})


async def probe_links(request: Request) -> Response:
    """POST …/link-check: each link requested (probe.py); the GET of the path is the offline check."""
    emu = emulator_of(request)
    probe.check_allowed(emu)  # before the email is read: the answer says why whatever the id
    row = await requested_email(request)
    async with emu.transaction(row["account"]) as tx:
        found = await material(tx, row)
    return json_response(await probe.run(emu, row["id"], found))


ROUTES = [
    *release.ROUTES,  # here, not in app.EXTENSIONS: loaded with these on the first use (smtplib and all)
    Route(f"{BASE}/{{email_id}}/link-check", probe_links, methods=["POST"]),
    Route(f"{BASE}/{{email_id}}/html-check", _one("html"), methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/link-check", _one("links"), methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/unsubscribe-check", _one("unsubscribe"), methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/text-check", _one("text"), methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/controls-check", _one("controls"), methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/spam-check", spam.endpoint, methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/qa", full_report, methods=["GET"]),
]
