"""The HTML source tab's numbering and highlighting, and the preview's light/dark rewriting (web/source.py,
web/frame.py), checked against the QA checks' own line numbers."""

from __future__ import annotations

from emulator.control.qa.compat import check_html
from emulator.web.frame import in_scheme
from emulator.web.source import SOURCE_PREVIEW_CHARS, source_of

TRICKY = ("<!doctype html>\r\n<html><head><style>\r\n/* a comment\r\nover lines */\r\n"
          ".row { display: flex; }\r\n</style></head>\r\n<body><!-- a\nmulti-line\ncomment -->\n"
          "<p title='a > b' class=\"x\">Hi\u2028there</p>\n"
          "<div style=\"display:flex\">x</div>\n</body></html>\n")


def text_of(line: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in line)


def test_lines_are_the_lines_the_checks_tab_names() -> None:
    source = source_of(TRICKY)
    flex = next(f for f in check_html(TRICKY)["unsupported"] if f["title"] == "display:flex")
    assert flex["lines"] == [5, 11]
    assert [text_of(source.lines[n - 1]) for n in flex["lines"]] == [
        ".row { display: flex; }", '<div style="display:flex">x</div>']
    assert len(source.lines) == len(TRICKY.split("\n")) - 1  # the final newline starts no line
    assert text_of(source.lines[9]) == "<p title='a > b' class=\"x\">Hi\u2028there</p>"  # U+2028 is no break


def test_tags_attributes_values_and_comments_are_told_apart() -> None:
    source = source_of('<a href="https://acme.dev" data-x=\'1\'>Go</a><!-- c -->')
    assert source.lines == [[("tag", "<a"), ("", " "), ("attr", "href"), ("", "="),
                             ("value", '"https://acme.dev"'), ("", " "), ("attr", "data-x"), ("", "="),
                             ("value", "'1'"), ("", ">"), ("", "Go"), ("tag", "</a"), ("", ">"),
                             ("comment", "<!-- c -->")]]
    comment = source_of("<!-- one\ntwo -->").lines
    assert comment == [[("comment", "<!-- one")], [("comment", "two -->")]]


def test_a_huge_part_is_cut_and_says_so() -> None:
    source = source_of("<p>x</p>\n" * (SOURCE_PREVIEW_CHARS // 9 + 10))
    assert source.truncated and len(source.lines) == SOURCE_PREVIEW_CHARS // 9 + 1


DARK_AWARE = ('<meta name="color-scheme" content="light dark"><style>@media (prefers-color-scheme: dark)'
              ' { body { color: #eee } } @media (prefers-color-scheme:light) { body { color: #222 } }</style>'
              '<picture><source srcset="d.png" media="(prefers-color-scheme: dark)">'
              '<img src="l.png"></picture>')


def test_the_light_rendering_never_matches_dark_queries_and_pins_a_light_canvas() -> None:
    light = in_scheme(DARK_AWARE, dark=False)
    assert "prefers-color-scheme" not in light
    assert light.count("min-width: 999999px") == 2 and light.count("min-width: 0px") == 1
    assert light.startswith("<style>:root { color-scheme: light only !important; }</style>")


def test_the_dark_rendering_matches_dark_queries_and_only_pins_a_dark_canvas_when_declared() -> None:
    dark = in_scheme(DARK_AWARE, dark=True)
    assert dark.count("min-width: 0px") == 2 and dark.count("min-width: 999999px") == 1
    assert dark.startswith("<style>:root { color-scheme: dark only !important; }</style>")
    assert in_scheme("<p>plain</p>", dark=True) == "<p>plain</p>"
