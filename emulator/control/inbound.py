"""Inbound mail for tests, and the signed download links of received emails (control plane).

- `POST /_emulator/inbound`: a raw RFC 5322 message (any non-JSON body; envelope recipients from
  `?to=` or the To/Cc/Bcc headers) or JSON `{from, to, cc, bcc, reply_to, subject, text, html, headers,
  attachments: [{filename, content (base64), content_type, content_id}], authentication}` or JSON
  `{raw, recipients}`. Every recipient on a receiving address gets a received email; answers
  `{"object": "list", "data": [{"id", "received_for"}]}`.
- `GET /_emulator/inbound/address`: the caller's managed `<id>.resend.app` receiving domain (the
  account of the bearer key, else the default account).
- `GET /_emulator/files/receiving/...`: `.eml` and attachment bytes behind `download_url`s (no API key,
  a signature and an expiry on the emulator clock instead, like Resend's CDN links).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from email import errors as email_errors
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.auth import credential_of
from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX
from emulator.control.downloads import eml_response, file_response
from emulator.control.fields import ADDRESSES, ARRAY, OBJECT, STRING, Spec, check
from emulator.core import errors, jsontext, validate
from emulator.core.accounts import managed_domain
from emulator.core.config import DEFAULT_ACCOUNT
from emulator.core.errors import ApiError, invalid
from emulator.core.typed import whole_number_or_none
from emulator.mime.intake import IntakeError
from emulator.mime.message import guess_content_type
from emulator.resources import receiving

EXPIRED = "The download link is invalid or has expired."
INBOUND: Spec = {"from": STRING, "to": ADDRESSES, "cc": ADDRESSES, "bcc": ADDRESSES, "reply_to": ADDRESSES,
                 "subject": STRING, "text": STRING, "html": STRING, "headers": OBJECT, "attachments": ARRAY,
                 "authentication": OBJECT, "raw": STRING, "recipients": ADDRESSES}
FIELD_NAME = re.compile(r"[!-9;-~]{1,200}")  # RFC 5322 §3.6.8: printable ASCII but the colon


# ---- injection ----------------------------------------------------------------------------------

def _list(body: dict[str, Any], name: str, required: bool = False) -> list[str]:
    value = body.get(name)
    if value is None:
        if required:
            raise errors.missing_field(name)
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) and "@" in item for item in items):
        raise invalid(f"Invalid `{name}` field. Give an email address or a list of them.")
    return items


def _add_attachments(message: EmailMessage, items: Any) -> None:
    if items is None:
        return
    if not isinstance(items, list):
        raise invalid("The `attachments` field must be an `array`.")
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise ApiError(errors.INVALID_ATTACHMENT, "Attachment must have a base64 `content`.")
        try:
            data = base64.b64decode(item["content"], validate=True)
        except (binascii.Error, ValueError):
            raise invalid("Invalid `attachments` field. `content` must be base64.") from None
        filename, content_type, cid = (_line(item, key) for key in ("filename", "content_type", "content_id"))
        maintype, _, subtype = (content_type or guess_content_type(filename)).partition("/")
        if maintype.lower() in ("multipart", "message"):  # containers, not files: the bytes would be lost
            raise invalid("Invalid `attachments` field. `content_type` must be the type of a file.")
        message.add_attachment(data, maintype=maintype, subtype=subtype or "octet-stream",
                               filename=filename, disposition="inline" if cid else "attachment",
                               cid=f"<{cid}>" if cid else None)


def _line(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    if value is not None and (not isinstance(value, str) or any(c in value for c in "\r\n\x00")):
        raise invalid(f"Invalid `attachments` field. `{name}` must be a single-line string.")
    return value


def compose(body: dict[str, Any], message_id: str, date: Any) -> tuple[bytes, list[str]]:
    """A JSON description → (RFC 5322 bytes, envelope recipients)."""
    try:
        return _compose(body, message_id, date)
    except (ValueError, TypeError, email_errors.MessageError) as exc:
        # The stdlib refusing what it was given (a content type it cannot build, say): the caller's input.
        raise invalid(f"The message cannot be built: {str(exc)[:200]}") from None


def _compose(body: dict[str, Any], message_id: str, date: Any) -> tuple[bytes, list[str]]:
    sender = validate.string(body, "from", required_=True)
    to, cc, bcc = _list(body, "to", required=True), _list(body, "cc"), _list(body, "bcc")
    from email import policy  # here: its header registry is ~3 ms of every start (issue 28)

    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = ", ".join(to)
    if cc:
        message["Cc"] = ", ".join(cc)
    if body.get("reply_to"):
        message["Reply-To"] = ", ".join(_list(body, "reply_to"))
    message["Subject"] = validate.string(body, "subject") or ""
    message["Date"] = format_datetime(date)
    message["Message-ID"] = message_id
    _add_headers(message, validate.obj(body, "headers") or {})
    text, html = validate.string(body, "text"), validate.string(body, "html")
    message.set_content(text or "")
    if html is not None:
        message.add_alternative(html, subtype="html")
    _add_attachments(message, body.get("attachments"))
    return message.as_bytes(), [*to, *cc, *bcc]


def _add_headers(message: EmailMessage, headers: dict[str, Any]) -> None:
    """Extra headers; one the composer already wrote (`Message-ID`, `Date`, `Subject`...) is replaced by
    the caller's value, since a message carries at most one of each."""
    for name, value in headers.items():
        if not FIELD_NAME.fullmatch(name):
            raise invalid(f"Invalid `headers` field. `{name[:100]}` is not a header name.")
        if not isinstance(value, str) or "\n" in value or "\r" in value or "\x00" in value:
            raise invalid(f"Invalid `headers` field. The value of `{name}` must be a single-line string.")
        del message[name]
        message[name] = value


async def _header_recipients(raw: bytes) -> list[str]:
    from emulator.mime.intake import parse_async

    parsed = await parse_async(raw)
    return [address for _name, address in getaddresses([*parsed.to, *parsed.cc, *parsed.bcc])]


async def _inject(request: Request) -> tuple[bytes, list[str], dict[str, Any] | None]:
    emu = emulator_of(request)
    raw_body = await request.body()
    if len(raw_body) > emu.settings.max_body_bytes:
        raise ApiError(errors.PAYLOAD_TOO_LARGE)
    if "json" not in request.headers.get("content-type", ""):
        raw = raw_body
        recipients = request.query_params.getlist("to") or await _header_recipients(raw)
        return raw, recipients, None
    try:
        body = await jsontext.parse_async(raw_body or b"{}")
    except jsontext.BodyError as exc:
        raise ApiError(errors.MALFORMED_BODY, str(exc)) from None
    if not isinstance(body, dict):
        raise ApiError(errors.MALFORMED_BODY, "The request body must be a JSON object.")
    authentication = validate.obj(check(body, INBOUND), "authentication")
    if body.get("raw") is not None:
        raw = (validate.string(body, "raw") or "").encode()
        return raw, _list(body, "recipients") or await _header_recipients(raw), authentication
    message_id = f"<{emu.ids.uuid()}@inbound.resend-emulator>"
    raw, recipients = compose(body, message_id, emu.clock.now())
    return raw, recipients, authentication


async def inject(request: Request) -> Response:
    emu = emulator_of(request)
    try:
        raw, recipients, authentication = await _inject(request)
        if not recipients:
            raise invalid("The message has no recipients.")
        async with emu.transaction() as tx:
            stored = await receiving.receive(tx, raw, recipients, authentication)
            if not stored:
                raise invalid("None of the recipients is a receiving address: "
                              f"{', '.join(recipients)}. Enable receiving on a domain or use the "
                              "account's managed .resend.app address.")
    except IntakeError as error:
        raise invalid(str(error)) from None
    return json_response({"object": "list", "data": stored})


async def address(request: Request) -> Response:
    emu = emulator_of(request)
    # Only a Bearer key names an account: under --ui-auth-file this header carries the Basic sign-in.
    scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
    token = token.strip() if scheme.lower() == "bearer" else ""
    # An isolated key not used yet gets its account now, so mail to the address it is given lands
    # there and not in the default account (issue 36).
    credential = await credential_of(emu, token) if token else None
    account = credential.account if credential else DEFAULT_ACCOUNT
    return json_response({"domain": managed_domain(account)})


# ---- downloads ----------------------------------------------------------------------------------

def _check_signature(request: Request) -> None:
    emu = emulator_of(request)
    expires, given = request.query_params.get("expires", ""), request.query_params.get("signature", "")
    when = whole_number_or_none(expires)
    if when is None or when < emu.clock.now().timestamp():
        raise ApiError(errors.FORBIDDEN, EXPIRED)
    if not hmac.compare_digest(receiving.signature(emu, request.url.path, when), given):
        raise ApiError(errors.FORBIDDEN, EXPIRED)


async def download_raw(request: Request) -> Response:
    _check_signature(request)
    emu, email_id = emulator_of(request), request.path_params["email_id"]
    async with emu.transaction() as tx:
        row = await tx.one("SELECT raw FROM received_emails WHERE id = ?", (email_id,))
    if row is None:
        raise errors.not_found("Email")
    return eml_response(bytes(row["raw"]), email_id)


async def download_attachment(request: Request) -> Response:
    _check_signature(request)
    emu = emulator_of(request)
    async with emu.transaction() as tx:
        row = await tx.one("SELECT * FROM received_attachments WHERE id = ? AND email_id = ?",
                           (request.path_params["attachment_id"], request.path_params["email_id"]))
    if row is None:
        raise errors.not_found("Attachment")
    return file_response(bytes(row["content"]), row["content_type"], row["filename"] or row["id"],
                         inline=row["content_disposition"] == "inline")


ROUTES = [
    Route(f"{PREFIX}/inbound", inject, methods=["POST"]),
    Route(f"{PREFIX}/inbound/address", address, methods=["GET"]),
    Route(f"{receiving.FILES_PREFIX}/{{email_id}}/raw", download_raw, methods=["GET"]),
    Route(f"{receiving.FILES_PREFIX}/{{email_id}}/attachments/{{attachment_id}}", download_attachment,
          methods=["GET"]),
]
