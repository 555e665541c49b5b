"""Compact JSON text, as the API answers and as rows store it, and request bodies read as JSON.

orjson does the common case: a send encodes about eight small documents and decodes one, and with the
stdlib's codec that was ~12% of its instructions (issue 28: 1.63 M → 1.44 M per POST /emails). The
stdlib stays the reference for what orjson handles differently: it encodes what orjson refuses
(integers past 64 bits, lone surrogates, non-string keys), and it reads every body orjson refuses, so
errors keep their messages. Two differences remain, both JavaScript's behaviour, i.e. the real
service's: floats with small exponents print as `1e-7` (the stdlib writes `1e-07`), and NaN and
±Infinity, which are not JSON (RFC 8259 §6), are refused in request bodies as `JSON.parse` refuses them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_bytes(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: see the module's docstring
        return _COMPACT.encode(value).encode()


def compact(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return _COMPACT.encode(value)


# Deeper documents than any request needs are refused before they reach code that recurses (issue 11:
# 10 000 nested arrays crashed the decoder). Resend documents no limit; 100 is an assumption.
MAX_DEPTH = 100
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
# orjson reads an integer past 64 bits as a float; the stdlib keeps it an int (19 digits may be one).
_LONG_NUMBER = re.compile(r"[0-9]{19}")  # JSON digits are ASCII; `\d` (any Unicode digit): ~2x slower


class BodyError(ValueError):
    """A request body that is not a usable JSON document; the message says why."""


def parse(raw: bytes) -> Any:
    """A request body as JSON: UTF-8 only (RFC 8259 §8.1), at most MAX_DEPTH deep, valid Unicode."""
    try:
        # An object or array whose second byte is not NUL is UTF-8 (RFC 8259 §8.1 detection); anything
        # else (a BOM, UTF-16/32) takes the stdlib's full check.
        plain = raw[:1] in (b"{", b"[") and raw[1:2] != b"\x00"
        if not plain and json.detect_encoding(raw) not in ("utf-8", "utf-8-sig"):
            raise UnicodeDecodeError("utf-8", raw[:4], 0, 4, "not UTF-8")
        text = raw.decode("utf-8") if plain else raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BodyError("The request body must be JSON encoded as UTF-8.") from None
    try:
        value = loads(text)
    except RecursionError:
        raise BodyError(f"The request body is nested more than {MAX_DEPTH} levels deep.") from None
    except ValueError as exc:
        raise BodyError(f"The request body is not valid JSON: {exc}.") from None
    # Escaped surrogates are rare; only then is every string checked (a pair is fine, one alone is not).
    surrogates = _ESCAPED_SURROGATE.search(text) is not None
    # Each level of nesting opens a bracket, so a document with few brackets is shallow enough; brackets
    # inside strings only make the count larger. Walking the tree is then needed only for big documents.
    if surrogates or text.count("[") + text.count("{") > MAX_DEPTH:
        _check(value, surrogates)
    return value


def loads(text: str) -> Any:
    """JSON text (a request body, or what this emulator stored with `compact`) into values: orjson, ~3x
    faster than the stdlib, or the stdlib where they differ (integers past 64 bits, a lone surrogate)."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the stdlib reads what orjson refuses (a lone surrogate), or says why it is not JSON
    return json.loads(text, parse_constant=_not_json)


def _not_json(constant: str) -> Any:
    raise ValueError(f"`{constant}` is not a JSON value")


def _check(value: Any, surrogates: bool) -> None:
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: list[Any] = [*item.keys(), *item.values()] if surrogates else list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            if surrogates and isinstance(item, str):
                _check_text(item)
            continue
        if depth > MAX_DEPTH:
            raise BodyError(f"The request body is nested more than {MAX_DEPTH} levels deep.")
        pending.extend((child, depth + 1) for child in children)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BodyError("The request body contains a lone surrogate (`\\ud800`–`\\udfff`), which is"
                        " not a Unicode character.") from None
