"""Incoming RFC 5322 bytes → plain fields (stdlib `email`). Pure functions, no I/O.

Used by SMTP submission (→ a `POST /emails`-shaped body for the one send service) and by Receiving
(→ a received email). Mapping decisions are [rec] (reference/smtp.md: undocumented):
- `Bcc` = envelope recipients missing from To/Cc, plus a `Bcc` header if the client left one in.
- Attachments are parts with a `Content-Disposition`, plus non-text leaf parts and parts carrying a
  `Content-ID` (inline images in multipart/related often have no disposition).
- Headers the API sets itself (addresses, subject, date, Message-ID, MIME structure, trace headers)
  are not passed on as custom `headers`; `Resend-Idempotency-Key` is consumed, never stored.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import Iterable, Sequence
from email._policybase import compat32  # what email.policy re-exports, without its ~3 ms of imports
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses
from typing import NamedTuple

from emulator.mime import bounds
from emulator.mime.bounds import IntakeError as IntakeError  # where callers have always found it

IDEMPOTENCY_HEADER = "resend-idempotency-key"
_ADDR_SPEC = r"[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
# `jane@x.io` or `Jane Doe <jane@x.io>`: words of letters, digits and spaces only in the name.
_PLAIN_ADDRESS = re.compile(rf"[ \t]*(?:({_ADDR_SPEC})|([A-Za-z0-9 \t]*?)[ \t]*<({_ADDR_SPEC})>)[ \t]*")
_PLAIN_CHARSET = re.compile(r';\s*charset\s*=\s*(?:"([A-Za-z0-9._:+-]*)"|([A-Za-z0-9._:+-]+))\s*(?:;|$)',
                            re.IGNORECASE)
_SPECIALS = frozenset('()<>[]:;@\\,."')
# Set by the API's own renderer or by relays; a submission cannot override them.
NOT_CUSTOM = frozenset({
    "from", "to", "cc", "bcc", "reply-to", "subject", "date", "message-id", "mime-version",
    "content-type", "content-transfer-encoding", "content-disposition", "content-id",
    "received", "return-path", "sender", "x-original-to", "delivered-to", "dkim-signature",
    "authentication-results", "arc-seal", "arc-message-signature", "arc-authentication-results",
    IDEMPOTENCY_HEADER,
})


class Part(NamedTuple):
    content: bytes
    filename: str | None
    content_type: str
    content_id: str | None
    disposition: str  # "attachment" | "inline"


class Parsed(NamedTuple):
    from_: str | None
    to: list[str]
    cc: list[str]
    bcc: list[str]
    reply_to: list[str]
    subject: str | None
    message_id: str | None
    text: str | None
    html: str | None
    headers: list[tuple[str, str]]  # every header, in order, original name case
    attachments: list[Part]

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


def clean(text: str) -> str:
    """8-bit header bytes arrive as surrogate escapes: keep valid UTF-8, replace the rest."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def decode(raw: str) -> str:
    """A raw header value → text: RFC 2047 words decoded, folding undone, bad bytes replaced."""
    text = str(raw)
    if "=?" in text:
        # Malformed encoded words stay as written.
        with contextlib.suppress(HeaderParseError, LookupError, UnicodeError, ValueError):
            text = str(make_header(decode_header(text)))
    return " ".join(clean(text).split())


def _raw_fields(message: Message) -> dict[str, list[str]]:
    """Every header's raw values by lower-case name, read once (compat32's get() wraps 8-bit values in
    Header objects, losing the original bytes, so raw_items it is)."""
    fields: dict[str, list[str]] = {}
    for key, value in message.raw_items():
        fields.setdefault(key.lower(), []).append(str(value))
    return fields


def _header_text(fields: dict[str, list[str]], name: str) -> str | None:
    values = fields.get(name)
    return decode(values[0]) if values else None


def read_addresses(values: list[str]) -> list[tuple[str, str]]:
    """`email.utils.getaddresses`, with a shortcut for the plain `addr` or `Name <addr>` forms of one
    address per header (most mail): the stdlib's address-list parser is a large part of an SMTP
    submission's intake (issue 18)."""
    if len(values) == 1:
        plain = _PLAIN_ADDRESS.fullmatch(values[0])
        if plain:
            bare, display, bracketed = plain.groups()
            return [("", bare)] if bare else [(" ".join(display.split()), bracketed)]
    return getaddresses(values)


def _addresses(fields: dict[str, list[str]], name: str) -> list[str]:
    # Split before decoding: a decoded display name may hold the comma that separates addresses.
    values = fields.get(name)
    if not values:
        return []
    result = []
    for display, address in read_addresses(values):
        if "@" not in address:
            continue
        result.append(_format(decode(display), clean(address).strip()))
    return result


def _format(display: str, address: str) -> str:
    """`Name <addr>`, quoting the name only when it holds specials (no RFC 2047: the API takes UTF-8)."""
    if not display:
        return address
    if any(char in _SPECIALS for char in display):
        display = '"' + display.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{display} <{address}>"


def bare(address: str) -> str:
    """`Jane <jane@x.io>` → `jane@x.io`, lower-cased for comparisons."""
    pairs = getaddresses([address])
    return (pairs[0][1] if pairs else address).strip().lower()


def _all_headers(message: Message) -> list[tuple[str, str]]:
    return [(clean(key), decode(str(value))) for key, value in message.raw_items()]


def _payload(part: Message) -> bytes:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        first = inner[0] if isinstance(inner, list) and inner else None
        from email import policy  # here: its header registry is ~3 ms of every start (issue 28)

        return first.as_bytes(policy=policy.SMTP) if isinstance(first, Message) else b""
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def charset_of(part: Message) -> str | None:
    """`part.get_content_charset()`, reading a plain `charset=token` with one regex (each stdlib
    parameter lookup parses the whole header again: issue 18); anything unusual goes to the stdlib."""
    header = str(part.get("content-type", ""))
    if "*" not in header and header.lower().count("charset") == 1:
        plain = _PLAIN_CHARSET.search(header)
        if plain:
            return (plain.group(1) if plain.group(1) is not None else plain.group(2)).lower()
    return part.get_content_charset()


def _decoded_text(part: Message) -> str:
    charset = charset_of(part) or "utf-8"
    data = _payload(part)
    try:
        text = data.decode(charset, "replace")
    except LookupError:  # unknown charset name
        text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n")


def _is_attachment(part: Message, content_type: str) -> bool:
    disposition = (part.get_content_disposition() or "").lower()
    if disposition == "attachment":
        return True
    text = content_type.startswith("text/")
    if text and not _has_filename(part):
        return False
    return disposition == "inline" or bool(part.get("content-id")) or not text


def _has_filename(part: Message) -> bool:
    """`part.get_filename()` is set; answered without parsing parameters when neither a disposition
    header nor a `name` parameter could supply one (a text part, most often: issue 18)."""
    if part.get("content-disposition") is None and "name" not in str(part.get("content-type", "")).lower():
        return False
    return bool(part.get_filename())


def _attachment(part: Message, content_type: str) -> Part:
    content_id = part.get("content-id")
    cid = clean(str(content_id)).strip().strip("<>") if content_id else None
    disposition = (part.get_content_disposition() or "").lower()
    if disposition not in ("attachment", "inline"):
        disposition = "inline" if cid else "attachment"
    filename = part.get_filename()
    return Part(_payload(part), decode(filename) if filename else None, content_type,
                cid or None, disposition)


def _leaves(part: Message) -> Iterable[tuple[Message, str]]:
    """Leaf parts in order, each with its content type (asked once: the stdlib re-parses the header
    at every call); an attached message (message/rfc822) is one leaf, not walked into."""
    payload = part.get_payload()
    content_type = part.get_content_type()
    if content_type != "message/rfc822" and part.is_multipart() and isinstance(payload, list):
        for sub in payload:
            if isinstance(sub, Message):
                yield from _leaves(sub)
    else:
        yield part, content_type


# A message up to this size is read on the event loop (a few ms even when hostile, within the bounds);
# a bigger one on a worker thread, so no message holds the loop for long.
ON_LOOP_BYTES = 64 * 1024


async def parse_async(raw: bytes) -> Parsed:
    """`parse`, on a worker thread when the message is bigger than ON_LOOP_BYTES."""
    return parse(raw) if len(raw) <= ON_LOOP_BYTES else await asyncio.to_thread(parse, raw)


def parse(raw: bytes) -> Parsed:
    """Read one message. Never raises on merely malformed MIME (stdlib records defects instead);
    IntakeError for an empty message or one past a bound of emulator/mime/bounds.py."""
    if not raw.strip():
        raise IntakeError("Message is empty")
    bounds.check_raw(raw)
    try:
        # compat32: the modern policy's header objects cost ~10x more, and only a few headers matter.
        message = BytesParser(policy=compat32).parsebytes(raw)
        bounds.check_tree(message)
        return _parse(message)
    except IntakeError:
        raise
    except Exception as exc:  # stdlib is lenient; anything it still chokes on is a client error
        raise IntakeError(f"Message could not be parsed ({type(exc).__name__})") from exc


def _parse(message: Message) -> Parsed:
    text: str | None = None
    html: str | None = None
    attachments: list[Part] = []
    for part, content_type in _leaves(message):
        if content_type.startswith("multipart/"):  # a multipart without a usable boundary
            text = _decoded_text(part) if text is None else text
        elif _is_attachment(part, content_type):
            attachments.append(_attachment(part, content_type))
        elif content_type == "text/html" and html is None:
            html = _decoded_text(part)
        elif content_type == "text/plain" and text is None:
            text = _decoded_text(part)
    fields = _raw_fields(message)
    return Parsed(
        from_=next(iter(_addresses(fields, "from")), None), to=_addresses(fields, "to"),
        cc=_addresses(fields, "cc"), bcc=_addresses(fields, "bcc"),
        reply_to=_addresses(fields, "reply-to"), subject=_header_text(fields, "subject"),
        message_id=_header_text(fields, "message-id"), text=text, html=html,
        headers=_all_headers(message), attachments=attachments,
    )


def custom_headers(parsed: Parsed) -> dict[str, str]:
    return {name: value for name, value in parsed.headers if name.lower() not in NOT_CUSTOM}


def _envelope_bcc(parsed: Parsed, recipients: Sequence[str]) -> list[str]:
    seen = {bare(a) for a in [*parsed.to, *parsed.cc, *parsed.bcc]}
    extra = []
    for rcpt in recipients:
        if rcpt.lower() not in seen:
            seen.add(rcpt.lower())
            extra.append(rcpt)
    return [*parsed.bcc, *extra]


def send_body(parsed: Parsed, mail_from: str | None, recipients: Sequence[str]) -> dict[str, object]:
    """The `POST /emails` body an SMTP submission stands for.

    [rec] With no `To` header, the envelope recipients are the `to` list (an API send needs one).
    """
    to = parsed.to
    bcc = _envelope_bcc(parsed, recipients)
    if not to:
        cc_seen = {bare(a) for a in parsed.cc}
        to = [r for r in recipients if r.lower() not in cc_seen]
        bcc = [b for b in parsed.bcc if bare(b) not in {t.lower() for t in to}]
    body: dict[str, object] = {"from": parsed.from_ or mail_from or "", "to": to,
                               "subject": parsed.subject or ""}
    for key, values in (("cc", parsed.cc), ("bcc", bcc), ("reply_to", parsed.reply_to)):
        if values:
            body[key] = values
    if parsed.html is not None:
        body["html"] = parsed.html
    # An HTML-only message keeps `text` absent (the API then derives it); a text-only one sends text.
    if parsed.text is not None or parsed.html is None:
        body["text"] = parsed.text or ""  # [rec] a body-less message is a valid empty email
    headers = custom_headers(parsed)
    if headers:
        body["headers"] = headers
    if parsed.attachments:
        body["attachments"] = [_api_attachment(part) for part in parsed.attachments]
    return body


def _api_attachment(part: Part) -> dict[str, str]:
    item = {"content": base64.b64encode(part.content).decode(), "content_type": part.content_type}
    # The API requires a file name in practice; inline images often have none on the wire.
    item["filename"] = part.filename or _fallback_name(part)
    if part.content_id:
        item["content_id"] = part.content_id
    return item


def _fallback_name(part: Part) -> str:
    import mimetypes

    extension = mimetypes.guess_extension(part.content_type) or ".bin"
    return f"{part.content_id or 'attachment'}{extension}"
