"""File downloads served from the emulator's origin (attachments, `.eml` files).

Anything a message carries is hostile: a download never renders as a page of this origin (sandbox CSP,
nosniff), and only raster images may show inline.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from starlette.responses import Response

# Raster formats a browser renders without running anything; SVG and HTML are always downloads.
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
                          "image/bmp", "image/x-icon", "image/vnd.microsoft.icon"})
ACTIVE_TYPES = frozenset({"text/html", "application/xhtml+xml", "image/svg+xml", "text/xml",
                          "application/xml", "application/wasm", "text/xsl"})
SAFE_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")
FILE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox"


def disposition(kind: str, filename: str) -> str:
    """RFC 6266: an ASCII fallback name plus the exact name in `filename*`."""
    ascii_name = re.sub(r"[^A-Za-z0-9._ -]", "_", filename) or "file"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


def served_type(content_type: str) -> str:
    """The type a file is served with from the emulator's origin: a type a browser would run or
    render as a document there (script, HTML, SVG, XML) is served as bytes (issue 11: a
    `text/javascript` attachment could be loaded as a script). The download keeps its name."""
    base = content_type.split(";")[0].strip().lower()
    if not SAFE_HEADER_VALUE.fullmatch(content_type):  # stored text of any kind must not break the header
        return "application/octet-stream"
    if not base or base in ACTIVE_TYPES or "script" in base or base.endswith(("+xml", "/xml")):
        return "application/octet-stream"
    return content_type


def file_response(content: bytes, content_type: str, filename: str, inline: bool = False) -> Response:
    kind = "inline" if inline and content_type.lower() in INLINE_TYPES else "attachment"
    return Response(content, media_type=served_type(content_type), headers={
        "Content-Disposition": disposition(kind, filename),
        "Content-Security-Policy": FILE_CSP,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    })


def eml_response(raw: bytes, email_id: str) -> Response:
    return file_response(raw, "message/rfc822", f"{email_id}.eml")
