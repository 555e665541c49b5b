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

import asyncio
import json
import re
from array import array
from itertools import accumulate
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
# 10 000 nested arrays crashed the decoder). Resend documents no limit; the deepest real body (a batch
# of emails with attachments, or a template's nested variables) is under ten levels, so 100 is ten times
# that, and far below the ~1 000 frames at which the stdlib's decoder would recurse out of its stack.
MAX_DEPTH = 100
TOO_DEEP = f"The request body is nested more than {MAX_DEPTH} levels deep."
# A JSON string (RFC 8259 §7), whose brackets do not nest; in bytes, as UTF-8 never uses ASCII bytes
# inside a multi-byte character.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Each opening bracket a step up (1), each closing one a step down (255, read as -1 by a signed array).
_STEPS = bytes(1 if byte in b"[{" else 255 if byte in b"]}" else 0 for byte in range(256))
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
# orjson reads an integer past 64 bits as a float; the stdlib keeps it an int (19 digits may be one).
_LONG_NUMBER = re.compile(r"[0-9]{19}")  # JSON digits are ASCII; `\d` (any Unicode digit): ~2x slower


class BodyError(ValueError):
    """A request body that is not a usable JSON document; the message says why."""


# A body up to this size is read on the event loop (orjson: ~2 ms a MB; a hostile one ~40 ms, the depth
# scan included); a bigger one on a worker thread, so one request holds the loop well under 100 ms.
ON_LOOP_BYTES = 1024 * 1024


async def parse_async(raw: bytes) -> Any:
    """`parse`, on a worker thread when the body is bigger than ON_LOOP_BYTES."""
    return parse(raw) if len(raw) <= ON_LOOP_BYTES else await asyncio.to_thread(parse, raw)


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
    # Each level of nesting opens a bracket, so a document with few brackets is shallow enough; brackets
    # inside strings only make the count larger. The depth is measured only for bigger documents.
    if text.count("[") + text.count("{") > MAX_DEPTH and depth(raw) > MAX_DEPTH:
        raise BodyError(TOO_DEEP)
    try:
        value = loads(text)
    except RecursionError:  # not reached: the depth was bounded above; kept so no decoder crash is a 500
        raise BodyError(TOO_DEEP) from None
    except ValueError as exc:
        raise BodyError(f"The request body is not valid JSON: {exc}.") from None
    # Escaped surrogates are rare; only then is every string checked (a pair is fine, one alone is not).
    if _ESCAPED_SURROGATE.search(text) is not None:
        _check(value)
    return value


def depth(raw: bytes) -> int:
    """How deep the brackets of JSON text nest, strings left out, measured without recursion and in
    linear time at C speed (~30 ms a MB): strings removed by one regex, the brackets kept as ±1 steps,
    the deepest running sum. For text that is not JSON, an upper bound or a guess: the parser says why."""
    steps = array("b", _STRING.sub(b"", raw).translate(_STEPS, _NOT_BRACKETS))
    return max(accumulate(steps), default=0)


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


def _check(value: Any) -> None:
    """Every string of a parsed document (keys too) is valid Unicode; walked without recursion."""
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            _check_text(item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BodyError("The request body contains a lone surrogate (`\\ud800`–`\\udfff`), which is"
                        " not a Unicode character.") from None
