"""The send body (`SendEmailRequest`, reference/emails.md §1) checked field by field.

Each checker raises the Resend-shaped error for its field. Checks run in the order of the
`SendEmailRequest` schema (from, to, subject, cc, bcc, reply_to, content, headers, attachments, tags,
scheduled_at, topic_id): the real API reports the first failing field and its order is undocumented
[rec].
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from emulator.core import errors
from emulator.core.errors import ApiError, invalid, missing_field
from emulator.mime.message import guess_content_type

MAX_TAGS = 75
MAX_TAG_LENGTH = 256
MAX_CONTENT_ID = 127  # "must be < 128 chars" [docs]
MAX_EMAIL_BYTES = 40 * 1024 * 1024  # "≤ 40 MB after base64" [docs]
TAG_CHARS = re.compile(r"^[A-Za-z0-9_-]+$")
BLOCKED_EXTENSIONS = frozenset({
    "adp", "app", "asp", "bas", "bat", "cer", "chm", "cmd", "com", "cpl", "crt", "csh", "der", "exe",
    "fxp", "gadget", "hlp", "hta", "inf", "ins", "isp", "its", "js", "jse", "ksh", "lib", "lnk", "mad",
    "maf", "mag", "mam", "maq", "mar", "mas", "mat", "mau", "mav", "maw", "mda", "mdb", "mde", "mdt",
    "mdw", "mdz", "msc", "msh", "msh1", "msh2", "mshxml", "msh1xml", "msh2xml", "msi", "msp", "mst",
    "ops", "pcd", "pif", "plg", "prf", "prg", "reg", "scf", "scr", "sct", "shb", "shs", "sys", "ps1",
    "ps1xml", "ps2", "ps2xml", "psc1", "psc2", "tmp", "url", "vb", "vbe", "vbs", "vps", "vsmacros",
    "vss", "vst", "vsw", "vxd", "ws", "wsc", "wsf", "wsh", "xnk",
})



@dataclass
class Attachment:
    content: bytes
    filename: str | None
    content_type: str
    content_id: str | None
    path: str | None = None

    @property
    def disposition(self) -> str:
        return "inline" if self.content_id else "attachment"


@dataclass
class EmailDraft:
    """A send request after parsing; template defaults are merged in by the service."""

    from_: str | None
    to: list[str]
    subject: str | None
    cc: list[str] | None = None
    bcc: list[str] | None = None
    reply_to: list[str] | None = None
    html: str | None = None
    text: str | None = None  # None ⇒ generated from html; "" ⇒ opt out
    headers: dict[str, str] | None = None
    attachments: list[Attachment] = field(default_factory=list)
    tags: list[dict[str, str]] | None = None
    scheduled_at: datetime | None = None
    template: dict[str, Any] | None = None
    topic_id: str | None = None


def subject(body: dict[str, Any], required: bool) -> str | None:
    value = body.get("subject")
    if value is None:
        if required:
            raise missing_field("subject")
        return None
    if not isinstance(value, str):
        raise invalid("The `subject` field must be a `string`.")
    single_line(value, "subject")
    return value


def single_line(value: str, field: str) -> None:
    """Fields that become headers may not carry CR, LF or NUL: a header cannot hold them, and accepting one
    left a stored email that no view could render. Refused with the usual 422 [recommendation: the real
    service's answer is undocumented]."""
    if "\r" in value or "\n" in value or "\x00" in value:
        raise invalid(f"Invalid `{field}` field. It must not contain line breaks or NUL characters.")


def content(body: dict[str, Any]) -> tuple[str | None, str | None]:
    html, text = body.get("html"), body.get("text")
    for name, value in (("html", html), ("text", text)):
        if value is not None and not isinstance(value, str):
            raise invalid(f"The `{name}` field must be a `string`.")
    if body.get("template") is not None:
        if html is not None or text is not None or body.get("react") is not None:
            raise invalid("The `template` field cannot be used together with `html`, `text` or `react`.")
    elif html is None and text is None:
        # [rec] real message undocumented.
        raise invalid("Missing email content. Provide `html`, `text` or a `template`.")
    return html, text


def headers(body: dict[str, Any]) -> dict[str, str] | None:
    value = body.get("headers")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid("The `headers` field must be an `object`.")
    for name, item in value.items():
        if not re.fullmatch(r"[!-9;-~]+", name):
            raise invalid(f"Invalid `headers` field. `{name}` is not a valid header name.")
        if not isinstance(item, str):
            raise invalid(f"Invalid `headers` field. The value of `{name}` must be a `string`.")
        if "\r" in item or "\n" in item or "\x00" in item:
            raise invalid(f"Invalid `headers` field. The value of `{name}` must be a single line.")
    return dict(value)


def tags(body: dict[str, Any]) -> list[dict[str, str]] | None:
    value = body.get("tags")
    if value is None:
        return None
    if not isinstance(value, list):
        raise invalid("The `tags` field must be an array.")
    if len(value) > MAX_TAGS:
        raise invalid(f"Too many tags. An email can have at most {MAX_TAGS} tags.")
    return [_tag(item, index) for index, item in enumerate(value)]


def _tag(item: Any, index: int) -> dict[str, str]:
    if not isinstance(item, dict):
        raise invalid(f"The `tags[{index}]` field must be an `object`.")
    parsed: dict[str, str] = {}
    for part in ("name", "value"):
        text = item.get(part)
        if text is None:
            raise missing_field(f"tags[{index}].{part}")
        if not isinstance(text, str):
            raise invalid(f"The `tags[{index}].{part}` field must be a `string`.")
        if len(text) > MAX_TAG_LENGTH:
            raise invalid(f"The `tags[{index}].{part}` field must be at most {MAX_TAG_LENGTH} characters.")
        if not TAG_CHARS.match(text):
            raise invalid(f"Invalid `tags[{index}].{part}` field. Tags can only contain ASCII letters"
                          " (a-z, A-Z), numbers (0-9), underscores (_) or dashes (-).")
        parsed[part] = text
    return parsed


def topic_id(body: dict[str, Any]) -> str | None:
    value = body.get("topic_id")
    if value is not None and not isinstance(value, str):
        raise invalid("The `topic_id` field must be a `string`.")
    return value


# ---- attachments -------------------------------------------------------------------------------

def attachments(body: dict[str, Any], in_batch: bool) -> list[Attachment]:
    value = body.get("attachments")
    if value is None:
        return []
    if in_batch:
        raise invalid("Attachments are not supported in batch emails.")  # [docs] batch, message [rec]
    if not isinstance(value, list):
        raise invalid("The `attachments` field must be an array.")
    parsed = [_attachment(item, index) for index, item in enumerate(value)]
    total = sum(len(item.content) for item in parsed) * 4 // 3
    if total > MAX_EMAIL_BYTES:
        raise invalid("The email exceeds the maximum size of 40MB (including attachments after encoding).")
    return parsed


def _attachment(item: Any, index: int) -> Attachment:
    if not isinstance(item, dict):
        raise invalid(f"The `attachments[{index}]` field must be an `object`.")
    raw, path = item.get("content"), item.get("path")
    if raw is None and path is None:
        raise ApiError(errors.INVALID_ATTACHMENT)
    if path is not None and not isinstance(path, str):
        raise invalid(f"The `attachments[{index}].path` field must be a `string`.")
    filename = _optional_text(item, "filename", index)
    if filename is None and path:
        filename = path.split("?")[0].rstrip("/").rpartition("/")[2] or None
    if filename and "." in filename and filename.rpartition(".")[2].lower() in BLOCKED_EXTENSIONS:
        ext = filename.rpartition(".")[2].lower()
        raise ApiError(errors.INVALID_ATTACHMENT,
                       f"Attachments with the `.{ext}` extension are not supported.")
    content_id = _optional_text(item, "content_id", index) or _optional_text(item, "inline_content_id", index)
    if content_id is not None and len(content_id) > MAX_CONTENT_ID:
        raise ApiError(errors.INVALID_ATTACHMENT, "The `content_id` must be less than 128 characters.")
    content_type = _optional_text(item, "content_type", index) or guess_content_type(filename)
    # [rec] `path` is not fetched: nothing leaves the machine; the part travels empty.
    data = decode_content(raw, index) if raw is not None else b""
    return Attachment(data, filename, content_type, content_id or None, path)


def _optional_text(item: dict[str, Any], name: str, index: int) -> str | None:
    value = item.get(name)
    if value is not None and not isinstance(value, str):
        raise invalid(f"The `attachments[{index}].{name}` field must be a `string`.")
    if value is not None:
        single_line(value, f"attachments[{index}].{name}")
    return value


def decode_content(raw: Any, index: int) -> bytes:
    """The three encodings clients send: base64 text, an int array, Node's `{type: "Buffer", data}`."""
    if isinstance(raw, dict) and raw.get("type") == "Buffer":
        raw = raw.get("data")
    if isinstance(raw, str):
        try:
            return base64.b64decode(re.sub(r"\s+", "", raw), validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(errors.INVALID_ATTACHMENT,
                           f"The `attachments[{index}].content` must be base64-encoded.") from None
    if isinstance(raw, list) and all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255
                                     for b in raw):
        return bytes(raw)
    raise ApiError(errors.INVALID_ATTACHMENT,
                   f"The `attachments[{index}].content` must be a base64 string or an array of bytes.")
