"""Signed links the API hands out: attachment downloads and shared email views, served under /_emulator/."""

from __future__ import annotations

import base64
import hmac
import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, error_response
from emulator.control.base import PREFIX
from emulator.control.downloads import file_response
from emulator.core import errors
from emulator.core.errors import ApiError, not_found
from emulator.core.typed import whole_number_or_none
from emulator.resources.emails.attachments import RECEIVED, expired, sign


async def download(request: Request) -> Response:
    emu = emulator_of(request)
    email_id, attachment_id = request.path_params["email_id"], request.path_params["attachment_id"]
    stamp, signature = request.query_params.get("expires", ""), request.query_params.get("signature", "")
    good, when = sign(emu, email_id, attachment_id, stamp), whole_number_or_none(stamp)
    if when is None or not hmac.compare_digest(good, signature) or expired(emu, when):
        return error_response(ApiError(errors.NOT_FOUND, "The download link is invalid or expired."))
    async with emu.transaction() as tx:
        row = await tx.one("SELECT filename, content_type, disposition, content FROM email_attachments"
                           " WHERE id = ? AND email_id = ?", (attachment_id, email_id))
    if row is None:
        return error_response(not_found("Attachment"))
    # Any name, in any script: RFC 6266 `filename*` (a Latin-1-only header used to answer 500).
    return file_response(bytes(row["content"]), row["content_type"], row["filename"] or attachment_id,
                         inline=row["disposition"] == "inline")


async def shared(request: Request) -> Response:
    emu = emulator_of(request)
    payload, _, signature = request.query_params.get("token", "").partition(".")
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        claims = None
    if (not isinstance(claims, dict) or not hmac.compare_digest(sign(emu, payload), signature)
            or expired(emu, int(claims.get("exp", 0)))):
        return error_response(ApiError(errors.NOT_FOUND, "The share link is invalid or expired."))
    async with emu.transaction() as tx:
        row = None
        for table in ("emails", RECEIVED):
            if row is None and table in emu.db.tables:
                row = await tx.one(f"SELECT html, text FROM {table} WHERE id = ? AND account = ?",
                                   (claims.get("email_id"), claims.get("account")))
    if row is None:
        return error_response(not_found("Email"))
    # Email HTML is untrusted: served in a sandbox, scripts and same-origin access off.
    if row["html"]:
        return Response(row["html"], media_type="text/html",
                        headers={"Content-Security-Policy": "sandbox"})
    return Response(row["text"] or "", media_type="text/plain")


ROUTES = [
    Route(f"{PREFIX}/files/emails/{{email_id}}/attachments/{{attachment_id}}", download, methods=["GET"]),
    Route(f"{PREFIX}/shared", shared, methods=["GET"]),
]
