"""A `multipart/form-data` request body (RFC 7578) read with bounded work, without the email package.

Of a part only three things matter: the `name` and `filename` parameters of its Content-Disposition and
its (deprecated, rare) Content-Transfer-Encoding. The stdlib's header registry cost ~160 µs a part and
grew faster than the parameters did: one 600 KB Content-Disposition held the event loop 11–15 s, and
16 000 one-field parts 3.2 s (issue 36). Here every loop is bounded by a stated limit, and the body is
cut with bytes operations only.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import re
from typing import NamedTuple
from urllib.parse import unquote

from emulator.core import errors
from emulator.core.errors import ApiError

# Contact imports, the one operation that takes a form, send five fields; twenty times that is room for
# any client that adds its own, and keeps a hostile body's work at a few milliseconds.
MAX_PARTS = 100
# A browser's header block for a file part is ~150 bytes; a filename of 255 UTF-8 characters,
# percent-encoded, stays under 3 KB. 8 KB is the line limit most HTTP servers put on a request's headers.
MAX_HEAD_BYTES = 8 * 1024
# Content-Disposition carries `name` and `filename` (RFC 7578 §4.2); `filename*` and a few that
# clients add make five. Sixteen leaves room and stops a header of thousands of `; a=b`.
MAX_PARAMETERS = 16
NOT_FORM = "The request body is not valid multipart/form-data."
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"[^"\\]*(?:\\.[^"\\]*)*"'
# `; name=value`, the value a token, a quoted string or (leniently) anything up to the next `;`.
_PARAMETER = re.compile(rf"[ \t]*;[ \t]*({_TOKEN})[ \t]*=[ \t]*({_QUOTED}|[^;]*)")
_ESCAPED = re.compile(r"\\(.)")


class FormField(NamedTuple):
    data: bytes
    filename: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8-sig", errors="replace")


def _refuse(kind: errors.ErrorKind, message: str) -> ApiError:
    return ApiError(kind, message)


def parameters(value: str) -> dict[str, str]:
    """The `; name=value` parameters after a header's first token, names in lower case, quotes removed
    (RFC 7578 §4.2 / RFC 2045 §5.1). At most MAX_PARAMETERS: more is refused, not read."""
    found: dict[str, str] = {}
    position = value.find(";")
    count = 0
    while position != -1 and position < len(value):
        match = _PARAMETER.match(value, position)
        if match is None:
            break  # no more well-formed parameters: the rest is ignored, as the RFC's readers do
        count += 1
        if count > MAX_PARAMETERS:
            raise _refuse(errors.MALFORMED_BODY, f"A multipart/form-data header has more than"
                                                 f" {MAX_PARAMETERS} parameters.")
        name, given = match.group(1).lower(), match.group(2).strip()
        if given.startswith('"') and given.endswith('"') and len(given) > 1:
            given = _ESCAPED.sub(r"\1", given[1:-1])
        found.setdefault(name, given)
        position = match.end()
    return found


def boundary_of(content_type: str) -> bytes:
    """The boundary of a `multipart/form-data; boundary=...` header, as the bytes the body carries (ASGI
    headers are latin-1, so any byte a client sent is kept as itself)."""
    boundary = parameters(content_type).get("boundary", "")
    if not boundary or any(char in boundary for char in "\r\n\x00"):
        raise _refuse(errors.MALFORMED_BODY, NOT_FORM)
    return boundary.encode("latin-1", "replace")


def _filename(params: dict[str, str]) -> str | None:
    extended = params.get("filename*")
    if extended is not None:  # RFC 5987 `UTF-8''name%20.csv`; RFC 7578 §4.2 discourages it
        charset, _, rest = extended.partition("'")
        encoded = rest.partition("'")[2]
        if charset.lower() in ("utf-8", "us-ascii") and encoded:
            return unquote(encoded, "utf-8", "replace")
    return params.get("filename")


def _headers(head: bytes) -> dict[str, str]:
    """A part's header fields by lower-case name (the first of repeated ones), folded lines joined."""
    fields: dict[str, str] = {}
    last = ""
    for line in head.decode("utf-8", "replace").splitlines():
        if line[:1] in (" ", "\t") and last:
            fields[last] += " " + line.strip()
            continue
        name, colon, value = line.partition(":")
        last = name.strip().lower() if colon else ""
        if last and last not in fields:
            fields[last] = value.strip()
        elif last:
            last = ""  # a repeated header: its continuation lines belong to the ignored copy
    return fields


def _decoded(body: bytes, encoding: str) -> bytes:
    """A part's bytes under its Content-Transfer-Encoding (RFC 7578 §4.7 deprecates it)."""
    kind = encoding.strip().lower()
    try:
        if kind == "base64":
            return base64.b64decode(body)
        if kind == "quoted-printable":
            return quopri.decodestring(body)
    except (ValueError, binascii.Error):
        raise _refuse(errors.MALFORMED_BODY, NOT_FORM) from None
    return body


def _sections(raw: bytes, delimiter: bytes) -> tuple[list[bytes], bytes]:
    """The parts between the delimiters (RFC 2046 §5.1.1) and the line ending the body uses."""
    # Lines end with CRLF as the RFC says; a client that ends them with LF alone is understood too.
    newline = b"\r\n" if raw.startswith(delimiter + b"\r\n") or b"\r\n" + delimiter in raw else b"\n"
    separator = newline + delimiter
    # Counted before anything is cut: a body of 16 000 tiny parts is refused at bytes speed.
    if raw.count(separator) + raw.startswith(delimiter) > MAX_PARTS + 1:
        raise _refuse(errors.PAYLOAD_TOO_LARGE, f"A multipart/form-data body may have at most {MAX_PARTS}"
                                                " parts.")
    parts = (newline + raw).split(separator)[1:]
    if parts and parts[-1].startswith(b"--"):
        parts.pop()  # the closing delimiter and the epilogue
    elif parts:
        parts[-1] = parts[-1].removesuffix(newline)  # no closing delimiter: the body ends the last part
    if not parts:
        raise _refuse(errors.MALFORMED_BODY, NOT_FORM)
    return parts, newline


def _head_and_body(section: bytes, newline: bytes) -> tuple[bytes, bytes]:
    section = section.lstrip(b" \t\r\n")
    end = section.find(newline * 2, 0, MAX_HEAD_BYTES + 2 * len(newline))
    if end == -1:
        if len(section) > MAX_HEAD_BYTES:
            raise _refuse(errors.PAYLOAD_TOO_LARGE, "The headers of a multipart/form-data part may have"
                                                    f" at most {MAX_HEAD_BYTES} bytes.")
        return section, b""
    if end > MAX_HEAD_BYTES:
        raise _refuse(errors.PAYLOAD_TOO_LARGE, "The headers of a multipart/form-data part may have"
                                                f" at most {MAX_HEAD_BYTES} bytes.")
    return section[:end], section[end + 2 * len(newline):]


def parse_form(content_type: str, raw: bytes) -> dict[str, FormField]:
    """The named fields of a form body; of repeated names the last wins. ApiError if it is not one."""
    parts, newline = _sections(raw, b"--" + boundary_of(content_type))
    fields: dict[str, FormField] = {}
    for section in parts:
        head, body = _head_and_body(section, newline)
        headers = _headers(head)
        params = parameters(headers.get("content-disposition", ""))
        name = params.get("name")
        if name is not None:
            fields[name] = FormField(_decoded(body, headers.get("content-transfer-encoding", "")),
                                     _filename(params))
    return fields
