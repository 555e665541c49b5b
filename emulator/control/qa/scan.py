"""One pass over an email's HTML: the elements, attributes and CSS it uses, each with its source line.

The QA checks (compatibility, links) read this inventory instead of parsing the HTML themselves. The
tokenizer (mime/html_tokens.py) is forgiving like mail clients are, and linear on hostile markup.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache

from emulator.mime.html_tokens import LinearHTMLParser

# Every pattern is tried only where a match can begin (after a delimiter, at the start of a run): a
# pattern free to start anywhere rescans a long run once per character (issue 25: 100 KB of `a` in a
# <style> took a minute). The matches found are the ones the unanchored patterns found.
_AT_RULE = re.compile(r"@([a-zA-Z-]+)([^{;]*)")
_RULE = re.compile(r"(?<![^{}@;])([^{}@;]+)\{([^{}]*)\}")
_FUNCTION = re.compile(r"(?<![a-z0-9-])([a-z0-9-]+)\(")
_UNIT = re.compile(r"\d(vmin|vmax|rem|px|em|ex|ch|cm|mm|in|pt|pc|vh|vw|%)(?![a-z])")


@dataclass(frozen=True)
class Tag:
    name: str
    attrs: dict[str, str | None]
    line: int


@dataclass(frozen=True)
class Declaration:
    prop: str
    value: str
    line: int


@dataclass(frozen=True)
class AtRule:
    name: str
    prelude: str
    line: int


@dataclass
class Inventory:
    tags: list[Tag] = field(default_factory=list)
    declarations: list[Declaration] = field(default_factory=list)
    at_rules: list[AtRule] = field(default_factory=list)
    selectors: list[tuple[str, int]] = field(default_factory=list)
    comments: list[int] = field(default_factory=list)
    doctype: str | None = None
    text: list[str] = field(default_factory=list)


def declarations(block: str, line: int) -> list[Declaration]:
    """`a: b; c: d` (a style attribute or a rule's body starting on `line`)."""
    found, offset, counted = [], 0, 0
    for part in block.split(";"):
        prop, colon, value = part.partition(":")
        if colon and prop.strip():
            lead = len(part) - len(part.lstrip())
            line += block.count("\n", counted, offset + lead)  # counted forward: linear in the block
            counted = offset + lead
            found.append(Declaration(prop.strip().lower(), value.strip(), line))
        offset += len(part) + 1
    return found


def blank_comments(css: str) -> str:
    """`/* … */` blanked, line breaks kept (so offsets keep pointing at the same lines); an unclosed
    comment runs to the end, as in CSS."""
    parts, at = [], 0
    while (start := css.find("/*", at)) >= 0:
        end = css.find("*/", start + 2)
        end = len(css) if end < 0 else end + 2
        comment = css[start:end]
        parts += [css[at:start], re.sub(r"[^\n]", " ", comment) if "\n" in comment else " " * len(comment)]
        at = end
    return "".join([*parts, css[at:]])


def scan_css(css: str, first_line: int, into: Inventory) -> None:
    css = blank_comments(css)

    breaks = [at for at, char in enumerate(css) if char == "\n"]

    def line_at(offset: int) -> int:  # a search in the line breaks, not a count from the start each time
        return first_line + bisect_left(breaks, offset)

    for match in _AT_RULE.finditer(css):
        into.at_rules.append(AtRule(match.group(1).lower(), match.group(2).strip(), line_at(match.start())))
    for match in _RULE.finditer(css):
        selector = match.group(1).strip()
        if selector:
            lead = len(match.group(1)) - len(match.group(1).lstrip())
            into.selectors.append((selector, line_at(match.start(1) + lead)))
        into.declarations.extend(declarations(match.group(2), line_at(match.start(2))))


class _Scanner(LinearHTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inventory = Inventory()
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        values = {name.lower(): value for name, value in attrs}
        self.inventory.tags.append(Tag(tag.lower(), values, line))
        if values.get("style"):
            self.inventory.declarations.extend(declarations(values["style"] or "", line))
        self._in_style = tag.lower() == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._in_style = False

    def handle_endtag(self, tag: str) -> None:
        if tag.lower() == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            scan_css(data, self.getpos()[0], self.inventory)
        elif data.strip():
            self.inventory.text.append(data)

    def handle_comment(self, data: str) -> None:
        # Outlook's conditional comments (`<!--[if mso]>`) are markup for Outlook, not comments to flag.
        if not data.lstrip().startswith("[if"):
            self.inventory.comments.append(self.getpos()[0])

    def handle_decl(self, decl: str) -> None:
        self.inventory.doctype = decl


@lru_cache(maxsize=8)
def scan(html: str) -> Inventory:
    """Cached: the four checks of one message view read the same HTML (callers never change the result)."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.inventory


@dataclass
class Index:
    """The inventory looked up by name, built in one pass: each of the ~280 feature checks then reads
    only its own entries (a 300 KB newsletter is checked in milliseconds, not by 280 full scans)."""

    inventory: Inventory
    tags: dict[str, list[Tag]] = field(default_factory=dict)
    attributes: dict[str, list[int]] = field(default_factory=dict)
    props: dict[str, list[Declaration]] = field(default_factory=dict)
    functions: dict[str, list[int]] = field(default_factory=dict)
    units: dict[str, list[int]] = field(default_factory=dict)


def index(inventory: Inventory) -> Index:
    found = Index(inventory)
    for tag in inventory.tags:
        found.tags.setdefault(tag.name, []).append(tag)
        for name in tag.attrs:
            found.attributes.setdefault(name, []).append(tag.line)
    for declaration in inventory.declarations:
        found.props.setdefault(declaration.prop, []).append(declaration)
        value = declaration.value.lower()
        for run in _FUNCTION.findall(value):
            if name := run.lstrip("0123456789-"):  # a name starts with a letter
                found.functions.setdefault(name, []).append(declaration.line)
        for unit in _UNIT.findall(value):
            found.units.setdefault(unit, []).append(declaration.line)
        if value == "initial":
            found.units.setdefault("initial", []).append(declaration.line)
    return found
