"""SpamAssassin's verdict on one email, asked of a running spamd (`--spamassassin HOST:PORT`).

The spamd protocol (SPAMC/1.5, see spamd's PROTOCOL document): one TCP connection per question, a request
line, headers, a blank line and the message; the answer is `SPAMD/1.x 0 EX_OK`, a `Spam: True ; 7.9 / 5.0`
header and a body. REPORT's body ends with a table of the rules that hit (points, name, description),
which is what the Checks tab and `GET /_emulator/outbox/{id}/qa` show, as Mailpit does. Waiting on spamd
never holds the event loop or a database transaction, and never longer than the timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from emulator.api.ops import emulator_of, json_response
from emulator.control.outbox import requested_email
from emulator.core.typed import whole_number_or_none
from emulator.resources.emails.service import email_eml

if TYPE_CHECKING:
    from emulator.core.db import Row

TIMEOUT = 20.0  # spamd's first answer after start takes a few seconds (it compiles its rules)
MAX_ANSWER = 1024 * 1024
ENABLE_HINT = ("Start the emulator with --spamassassin HOST:PORT (env RESEND_EMULATOR_SPAMASSASSIN) and a"
               " running spamd to see SpamAssassin's score and rules.")
_STATUS = re.compile(rb"^SPAMD/\d+\.\d+\s+(\d+)\s+(.*)$")
# `True ; 7.9 / 5.0`: numbers as spamd prints them (`-?\d+(\.\d+)?`), so `1.2.3` or `.` is no verdict
# rather than a ValueError (a 500, issue 36).
_NUMBER = rb"(-?[0-9]{1,9}(?:\.[0-9]{1,9})?)"
_SCORE = re.compile(rb"^(True|False|Yes|No)[ \t]*;[ \t]*" + _NUMBER + rb"[ \t]*/[ \t]*" + _NUMBER
                    + rb"[ \t]*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*(-?[0-9]{1,9}(?:\.[0-9]{1,9})?)\s+([A-Z0-9_]+)\s+(.*)$")
_TABLE_RULE = re.compile(r"^-{3,}\s+-{3,}")


class SpamdError(Exception):
    """spamd could not be asked, or answered something that is not the protocol."""


@dataclass(frozen=True)
class Spamd:
    host: str
    port: int
    timeout: float = TIMEOUT

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> Spamd:
    """`HOST:PORT` or `[IPv6]:PORT` → Spamd (ValueError otherwise)."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    number = whole_number_or_none(port, minimum=1, maximum=65535)
    if not sep or not host or number is None:
        raise ValueError(f"not HOST:PORT: {text!r}")
    return Spamd(host, number)


async def _ask(spamd: Spamd, command: str, message: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(spamd.host, spamd.port)
    try:
        writer.write(f"{command} SPAMC/1.5\r\nContent-length: {len(message)}\r\n\r\n".encode() + message)
        await writer.drain()
        writer.write_eof()
        answer = b""
        while chunk := await reader.read(65536):  # until spamd closes the connection
            answer += chunk
            if len(answer) > MAX_ANSWER:
                raise SpamdError(f"an answer longer than {MAX_ANSWER} bytes")
        return answer
    finally:
        writer.close()


def _split(answer: bytes) -> tuple[dict[bytes, bytes], str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.split(b"\r\n")
    status = _STATUS.match(status_line)
    if not status:
        raise SpamdError(f"not a spamd answer: {status_line[:80]!r}")
    if status.group(1) != b"0":
        raise SpamdError(f"spamd refused: {status.group(2).decode('latin-1')}")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    return headers, body.decode("utf-8", "replace")


def rules_of(report: str) -> list[dict[str, Any]]:
    """The rule table at the end of a REPORT body; a wrapped description continues on indented lines."""
    lines = report.splitlines()
    start = next((n for n, line in enumerate(lines) if _TABLE_RULE.match(line)), None)
    rules: list[dict[str, Any]] = []
    words: list[list[str]] = []  # each rule's description lines, joined once (`+=` was quadratic)
    for line in lines[start + 1:] if start is not None else []:
        hit = _RULE.match(line)
        if hit:
            rules.append({"name": hit.group(2), "score": float(hit.group(1))})
            words.append([hit.group(3).strip()])
        elif line.strip() and rules:
            words[-1].append(line.strip())
    for rule, description in zip(rules, words, strict=True):
        rule["description"] = " ".join(description)
    return rules


def verdict(answer: bytes) -> dict[str, Any]:
    headers, body = _split(answer)
    score = _SCORE.match(headers.get(b"spam", b""))
    if not score:
        given = headers.get(b"spam")
        raise SpamdError("spamd gave no Spam: header" if given is None else
                         f"spamd's Spam: header is not `True|False ; SCORE / THRESHOLD`: {given[:80]!r}")
    value, threshold = float(score.group(2)), float(score.group(3))
    is_spam = score.group(1).lower() in (b"true", b"yes")
    status = "error" if is_spam else "warning" if value >= threshold / 2 else "ok"
    return {"status": status, "score": value, "threshold": threshold, "is_spam": is_spam,
            "rules": rules_of(body)}


# Answers by message digest: the message of an email never changes, and asking again costs spamd a scan.
_ANSWERS: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
_REMEMBERED = 256


async def check(spamd: Spamd, message: bytes) -> dict[str, Any]:
    """spamd's score and rules for `message`, or why there are none (never raises for spamd's sake)."""
    key = (spamd.address, hashlib.sha256(message).hexdigest())
    if key in _ANSWERS:
        _ANSWERS.move_to_end(key)
        return _ANSWERS[key]
    base = {"enabled": True, "spamd": spamd.address}
    try:
        answer = await asyncio.wait_for(_ask(spamd, "REPORT", message), spamd.timeout)
        found = {**base, **verdict(answer)}
    except TimeoutError:
        return {**base, "status": "unavailable", "error": f"spamd at {spamd.address} did not answer"
                f" within {spamd.timeout:g} s"}
    except (OSError, SpamdError) as error:
        return {**base, "status": "unavailable", "error": f"spamd at {spamd.address}: {error}"}
    _ANSWERS[key] = found
    if len(_ANSWERS) > _REMEMBERED:
        _ANSWERS.popitem(last=False)
    return found


def disabled() -> dict[str, Any]:
    return {"enabled": False, "status": "disabled", "message": ENABLE_HINT}


def configured(request: Request) -> Spamd | None:
    address = emulator_of(request).settings.spamassassin
    return parse_address(address) if address else None


async def check_message(request: Request, message: bytes) -> dict[str, Any]:
    spamd = configured(request)
    return await check(spamd, message) if spamd else disabled()


async def for_email(request: Request, row: Row) -> dict[str, Any]:
    """The spam check of an outbox email. Its message is read in one short transaction; spamd is asked
    after that has ended."""
    if configured(request) is None:
        return disabled()
    async with emulator_of(request).transaction(row["account"]) as tx:
        message = await email_eml(tx, row)
    return await check_message(request, message)


async def endpoint(request: Request) -> Response:
    row = await requested_email(request)
    return json_response({"email_id": row["id"], **await for_email(request, row)})
