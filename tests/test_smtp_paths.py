"""The SMTP session's fast MAIL FROM / RCPT TO address reading agrees with aiosmtpd's RFC 5322 rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from emulator.smtp.session import _SIMPLE_PATH, parse_path

PIECES = st.sampled_from(["a", "Z", "0", ".", "..", "@", "<", ">", " ", "\t", "(", ")", '"', "[", "]", "-",
                          "+", "_", "=", "SIZE=100", "BODY=8BITMIME", "é", "\\", ",", ":", ";", "x.y"])


def fast(arg: str) -> tuple[str | None, str | None] | None:
    simple = _SIMPLE_PATH.fullmatch(arg)
    return (simple.group(1), simple.group(2) or "") if simple else None


@given(st.lists(PIECES, max_size=14).map("".join))
def test_the_fast_path_reads_what_aiosmtpd_reads(arg: str) -> None:
    quick = fast(arg)
    if quick is not None:
        assert quick == parse_path(arg)


@given(local=st.from_regex(r"[A-Za-z0-9+_-]{1,10}(\.[A-Za-z0-9+_-]{1,5}){0,2}", fullmatch=True),
       domain=st.from_regex(r"[a-z0-9-]{1,10}(\.[a-z]{2,6}){1,2}", fullmatch=True),
       params=st.sampled_from(["", " SIZE=5000", "  BODY=8BITMIME SMTPUTF8", "\tSIZE=1"]))
def test_ordinary_paths_take_the_fast_path(local: str, domain: str, params: str) -> None:
    arg = f"<{local}@{domain}>{params}"
    assert fast(arg) == parse_path(arg) == (f"{local}@{domain}", params.strip(" \t"))


def test_everything_else_is_left_to_the_full_rules() -> None:
    for arg in ["<>", '<"a b"@c.d>', "<a@[127.0.0.1]>", "<a@b.c> (comment) SIZE=1", "a@b.c", "<jé@b.c>"]:
        assert fast(arg) is None
