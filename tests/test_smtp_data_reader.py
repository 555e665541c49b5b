"""The SMTP session's own DATA reader (emulator/smtp/session.py) answers and stores exactly what aiosmtpd's
does: dot-unstuffing, partial and over-long lines (500), messages over the size limit (552)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiosmtpd.smtp import SMTP
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.smtp.session import Protocol

LIMIT = 3000  # small, so generated messages cross it


class Keep:
    def __init__(self) -> None:
        self.contents: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.contents.append(envelope.content)
        return "250 OK kept"


async def transcript(protocol: type[SMTP], data: bytes) -> tuple[list[bytes], list[bytes]]:
    """Replies to one session sending `data` as DATA, then NOOP; and what the handler stored."""
    keep = Keep()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: protocol(keep, hostname="localhost", data_size_limit=LIMIT, auth_required=False),
        "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    replies = [await reader.readline()]

    async def command(line: bytes) -> None:
        writer.write(line)
        while True:
            reply = await reader.readline()
            replies.append(reply)
            if reply[3:4] != b"-":
                return

    await command(b"EHLO test.local\r\n")
    await command(b"MAIL FROM:<a@b.c>\r\n")
    await command(b"RCPT TO:<d@e.f>\r\n")
    await command(b"DATA\r\n")
    await command(data + b".\r\n")
    await command(b"NOOP\r\n")
    writer.close()
    server.close()
    await server.wait_closed()
    return replies, keep.contents


LINE = st.one_of(
    st.sampled_from([b"", b"..", b".x", b"x.", b"...", b"Subject: hi", b"\tfold"]).map(lambda b: b + b"\r\n"),
    st.integers(400, 999).map(lambda n: b"z" * n + b"\r\n"),  # long but allowed: a few pass LIMIT
    st.binary(max_size=80).filter(lambda b: b"\r\n" not in b and b != b".").map(lambda b: b + b"\r\n"),
    st.integers(900, 2500).map(lambda n: b"y" * n + b"\r\n"),  # at, and past, the 1001-byte line limit
)


@settings(max_examples=60, deadline=None)
@given(st.lists(LINE, max_size=12).map(b"".join))
def test_the_session_reads_data_as_aiosmtpd_does(data: bytes) -> None:
    async def both() -> tuple[Any, Any]:
        return await transcript(SMTP, data), await transcript(Protocol, data)

    (stock_replies, stock_kept), (ours_replies, ours_kept) = asyncio.run(both())
    assert [reply[:3] for reply in ours_replies] == [reply[:3] for reply in stock_replies]
    assert ours_replies[-2:] == stock_replies[-2:]  # the DATA verdict (word for word) and the NOOP after
    assert ours_kept == stock_kept


def test_too_much_data_and_too_long_a_line_get_aiosmtpd_replies() -> None:
    replies, kept = asyncio.run(transcript(Protocol, (b"z" * 900 + b"\r\n") * 4))
    assert replies[-2] == b"552 Error: Too much mail data\r\n" and kept == []
    replies, kept = asyncio.run(transcript(Protocol, b"y" * 1500 + b"\r\nshort\r\n"))
    assert replies[-2] == b"500 Line too long (see RFC5321 4.5.3.1.6)\r\n" and kept == []
    assert replies[-1].startswith(b"250")  # the session goes on


def test_a_dot_stuffed_message_is_unstuffed() -> None:
    replies, kept = asyncio.run(transcript(Protocol, b"..leading dot\r\nplain\r\n...\r\n"))
    assert replies[-2].startswith(b"250")
    assert kept == [b".leading dot\r\nplain\r\n..\r\n"]
