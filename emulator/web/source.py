"""The HTML source tab: the email's HTML as stored, decoded, highlighted and numbered by line.

Lines are counted as the Checks tab counts them (emulator/control/qa/scan.py reads the same text with
html.parser, which counts only `\n`), so "line 12" there is line 12 here. Highlighting is a linear scan:
each tag's pattern stops at the next `<`, so no input makes it backtrack over the rest of the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The tab shows this much; the .eml download (and the Raw tab) always have everything.
SOURCE_PREVIEW_CHARS = 256 * 1024

_MARKUP = re.compile(r"""<!--.*?(?:-->|\Z)|<![^<>]*>?|<\?[^<>]*>?"""
                     r"""|</?[A-Za-z](?:"[^"<]*"|'[^'<]*'|[^'"<>])*>?""", re.DOTALL)
_IN_TAG = re.compile(r"""(?P<value>"[^"]*"|'[^']*')|(?P<attr>[^\s=/>"']+)""")


@dataclass(frozen=True)
class Source:
    lines: list[list[tuple[str, str]]]  # per line: (css class or "", text)
    truncated: bool


def _tag_tokens(tag: str) -> list[tuple[str, str]]:
    """`<a href="x">` → the name, attribute names and quoted values apart; punctuation plain."""
    name_end = len(re.match(r"</?[^\s/>]*", tag).group(0))  # type: ignore[union-attr]
    tokens, at = [("tag", tag[:name_end])], name_end
    for found in _IN_TAG.finditer(tag, name_end):
        tokens.append(("", tag[at:found.start()]))
        tokens.append(("value" if found.group("value") else "attr", found.group(0)))
        at = found.end()
    tokens.append(("", tag[at:]))
    return tokens


def tokens(html: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    at = 0
    for markup in _MARKUP.finditer(html):
        found.append(("", html[at:markup.start()]))
        text = markup.group(0)
        if text.startswith("<!--"):
            found.append(("comment", text))
        elif text.startswith(("<!", "<?")):
            found.append(("doctype", text))
        else:
            found.extend(_tag_tokens(text))
        at = markup.end()
    found.append(("", html[at:]))
    return [token for token in found if token[1]]


def source_of(html: str) -> Source:
    truncated = len(html) > SOURCE_PREVIEW_CHARS
    lines: list[list[tuple[str, str]]] = [[]]
    for kind, text in tokens(html[:SOURCE_PREVIEW_CHARS]):
        first, *rest = text.split("\n")
        lines[-1].append((kind, first.rstrip("\r")))
        lines.extend([(kind, piece.rstrip("\r"))] for piece in rest)
    if len(lines) > 1 and not any(text for _, text in lines[-1]):
        lines.pop()  # a final newline ends the last line; it does not start another
    return Source([[piece for piece in line if piece[1]] for line in lines], truncated)
