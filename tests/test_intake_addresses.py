"""The intake's shortcut for plain address headers agrees with `email.utils.getaddresses`."""

from __future__ import annotations

from email.utils import getaddresses

from hypothesis import given
from hypothesis import strategies as st

from emulator.mime.intake import _PLAIN_ADDRESS, read_addresses

PIECES = st.sampled_from(["a", "Z", "9", " ", "\t", ".", "@", "<", ">", ",", '"', "(", ")", ";", ":", "-",
                          "_", "+", "%", "é", "\\", "[", "]", "x.y", "acme.dev", "Jane", "Doe"])


@given(st.lists(PIECES, max_size=16).map("".join))
def test_the_shortcut_reads_what_getaddresses_reads(header: str) -> None:
    if _PLAIN_ADDRESS.fullmatch(header):
        assert read_addresses([header]) == getaddresses([header])


@given(name=st.from_regex(r"[A-Za-z0-9]{1,8}( [A-Za-z0-9]{1,8}){0,2}", fullmatch=True),
       local=st.from_regex(r"[a-z0-9_+-]{1,8}(\.[a-z0-9]{1,4})?", fullmatch=True),
       domain=st.from_regex(r"[a-z0-9]{1,8}(\.[a-z]{2,5}){1,2}", fullmatch=True),
       named=st.booleans())
def test_ordinary_headers_take_the_shortcut(name: str, local: str, domain: str, named: bool) -> None:
    header = f"{name} <{local}@{domain}>" if named else f"{local}@{domain}"
    assert _PLAIN_ADDRESS.fullmatch(header)
    assert read_addresses([header]) == getaddresses([header])


def test_anything_else_takes_the_stdlib() -> None:
    for header in ['"Doe, Jane" <j@x.io>', "Jane Q. Doe <j@x.io>", "a@x.io, b@y.io", "Jane (work) <j@x.io>",
                   "=?utf-8?q?J=C3=A9?= <j@x.io>", "<j@x.io>"]:
        assert not _PLAIN_ADDRESS.fullmatch(header) or read_addresses([header]) == getaddresses([header])


PARAMS = st.sampled_from(["", "; charset=utf-8", '; name="a.txt"', "; NAME=b", "; filename=c.txt",
                          "; name*=utf-8''d.txt", "; format=flowed"])
DISPOSITIONS = st.sampled_from([None, "inline", "attachment", "; filename=x.txt", 'inline; filename="y.txt"',
                                "attachment; FileName=z"])


@given(params=PARAMS, disposition=DISPOSITIONS)
def test_the_filename_shortcut_agrees_with_the_stdlib(params: str, disposition: str | None) -> None:
    from email.message import Message

    from emulator.mime.intake import _has_filename

    part = Message()
    part["Content-Type"] = "text/plain" + params
    if disposition is not None:
        part["Content-Disposition"] = disposition
    assert _has_filename(part) == bool(part.get_filename())


CONTENT_TYPE_PIECES = [
    "text/plain", "text/html", "; charset=utf-8", '; charset="UTF-8"', "; CHARSET=latin1",
    "; charset = us-ascii ", '; charset=""', ";", "; charset*=utf-8''x", '; x="a;charset=b"',
    "; format=flowed", " ", '; charset="utf-8', "; charset=", "; charset=latin1;charset=x",
]
CONTENT_TYPES = st.lists(st.sampled_from(CONTENT_TYPE_PIECES), min_size=1, max_size=4).map("".join)


@given(CONTENT_TYPES)
def test_the_charset_shortcut_agrees_with_the_stdlib(content_type: str) -> None:
    from email.message import Message

    from emulator.mime.intake import charset_of

    part = Message()
    part["Content-Type"] = content_type
    assert charset_of(part) == part.get_content_charset()
