"""The linear HTML tokenizer (emulator/mime/html_tokens.py): the events of the stdlib parser on the HTML
emails are made of, and linear time on markup that never closes (issue 25)."""

from __future__ import annotations

import time
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.control.qa.scan import scan
from emulator.mime.html_tokens import LinearHTMLParser
from emulator.mime.message import html_to_text

# CPU seconds for 1 MB (CPU time: wall time on a loaded shared machine says little); the stdlib parser
# took minutes on the same input, the tokenizer takes a few tenths.
GENEROUS = 2.0


def events(base: type[Any], html: str) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []

    class Recorder(base):  # type: ignore[valid-type,misc]
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append(("start", tag, attrs, self.getpos()[0]))

        def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append(("startend", tag, attrs, self.getpos()[0]))

        def handle_endtag(self, tag: str) -> None:
            found.append(("end", tag))

        def handle_data(self, data: str) -> None:
            if found and found[-1][0] == "data":  # the stdlib splits text at will: compare it whole
                found[-1] = ("data", found[-1][1] + data)
            else:
                found.append(("data", data))

        def handle_comment(self, data: str) -> None:
            found.append(("comment", data, self.getpos()[0]))

        def handle_decl(self, decl: str) -> None:
            found.append(("decl", decl))

    parser = Recorder(convert_charrefs=True) if base is HTMLParser else Recorder()
    parser.feed(html)
    parser.close()
    return found


NAMES = st.sampled_from(["p", "a", "div", "td", "img", "br", "span", "h1", "table", "style", "b"])
TEXT = st.text(st.characters(blacklist_characters="<>&\"'", blacklist_categories=("Cs",)), max_size=12)
ENTITY = st.sampled_from(["&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x263A;", "&nbsp;", "&copy;"])
ATTR = st.tuples(st.sampled_from(["href", "class", "style", "alt", "data-x"]),
                 st.lists(st.one_of(TEXT, ENTITY), max_size=3).map("".join),
                 st.sampled_from(['"', "'"]))


@st.composite
def element(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(NAMES)
    attrs = "".join(f" {key}={quote}{value.replace(quote, '')}{quote}" for key, value, quote in
                    draw(st.lists(ATTR, max_size=3)))
    if name in ("img", "br"):
        return f"<{name}{attrs}{draw(st.sampled_from(['', '/', ' /']))}>"
    if name == "style":
        return f"<style>{draw(TEXT)} a {{ color: red }}</style>"
    inner = draw(st.lists(st.one_of(TEXT, ENTITY, st.just("\n"), st.just("<!-- note -->"),
                                    element(depth + 1) if depth < 3 else TEXT), max_size=4))
    return f"<{draw(st.sampled_from([name, name.upper()]))}{attrs}>{''.join(inner)}</{name}>"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(body=st.lists(element(), max_size=4).map("".join), doctype=st.booleans())
def test_the_events_of_the_stdlib_parser_on_well_formed_html(body: str, doctype: bool) -> None:
    html = ("<!DOCTYPE html>\n" if doctype else "") + f"<html><body>{body}</body></html>"
    assert events(LinearHTMLParser, html) == events(HTMLParser, html)


@pytest.mark.parametrize("unit", ["<!--", "<!", "<?", "<a", "</", "</a ", "<", "<a b", "&#", "<![CDATA[",
                                  "<script>", "<a b='x"])
def test_a_megabyte_of_markup_that_never_closes_is_read_in_linear_time(unit: str) -> None:
    html = unit * (1_000_000 // len(unit))
    scan.cache_clear()
    started = time.process_time()
    scan(html)
    html_to_text(html)
    assert time.process_time() - started < GENEROUS
