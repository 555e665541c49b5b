"""Invisible and direction-changing characters in what a recipient reads as plain words: the subject, the
names and addresses, every header, each attachment's filename.

A U+202E (right-to-left override) makes `report<U+202E>slx.pdf` read as "reportfdp.xls": an old phishing
trick, and an easy accident when text is pasted from an RTL editor. The UI shows each such character as a
visible token (web/bidi.py, through `hidden_characters`); this check lists each one with where it is.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from emulator.control.qa.findings import problem, status_of

# The ones that reorder text: embeddings, overrides, isolates and the implicit marks.
BIDI = frozenset({*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C})
ZWJ = 0x200D
TAG_BLACK_FLAG = 0x1F3F4


@dataclass(frozen=True)
class Hidden:
    """One character that does not show as itself, at `position` (1-based, in characters)."""

    position: int
    char: str

    @property
    def code(self) -> str:
        return f"U+{ord(self.char):04X}"

    @property
    def name(self) -> str:
        return unicodedata.name(self.char, _control_name(self.char))

    @property
    def reorders(self) -> bool:
        return ord(self.char) in BIDI


def _control_name(char: str) -> str:
    return "CONTROL CHARACTER" if unicodedata.category(char) == "Cc" else "FORMAT CHARACTER"


def _invisible(char: str) -> bool:
    # Cf: format characters (bidi controls, zero-widths, BOM, soft hyphen…); Cc: C0/C1 controls;
    # Zl/Zp: line and paragraph separators, which break a one-line field invisibly.
    return unicodedata.category(char) in ("Cf", "Cc", "Zl", "Zp")


def _pictographic(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk") or 0x1F000 <= ord(char) <= 0x1FAFF


def _emoji_glue(text: str, at: int) -> bool:
    """Assumed harmless: a zero-width joiner between two pictographs (👩‍💻 is one emoji), and the tag
    characters that spell a subdivision flag after 🏴. Flagging them would mark every family emoji."""
    code = ord(text[at])
    if code == ZWJ:
        return 0 < at < len(text) - 1 and _pictographic(text[at - 1]) and _pictographic(text[at + 1])
    if 0xE0020 <= code <= 0xE007F:
        start = at
        while start > 0 and 0xE0020 <= ord(text[start - 1]) <= 0xE007F:
            start -= 1
        return start > 0 and ord(text[start - 1]) == TAG_BLACK_FLAG
    return False


def hidden_characters(text: str) -> list[Hidden]:
    """Each character of `text` that would not show as itself."""
    if text.isprintable():  # the common case, in C: every character this finds is non-printable
        return []
    return [Hidden(at + 1, char) for at, char in enumerate(text)
            if _invisible(char) and not _emoji_glue(text, at)]


def _findings(where: str, field: str, text: str) -> list[dict[str, Any]]:
    return [{"where": where, "field": field, "value": text, "character": found.code, "name": found.name,
             "position": found.position, "severity": "error" if found.reorders else "warning"}
            for found in hidden_characters(text)]


def _problem(finding: dict[str, Any]) -> dict[str, str]:
    what = "attachment's filename" if finding["where"] == "attachment" else f"header {finding['field']}"
    effect = ("reorders the text after it" if finding["severity"] == "error"
              else "is invisible")
    return problem(
        "bidi_control" if finding["severity"] == "error" else "invisible_character", finding["severity"],
        f"The {what} ({finding['value']!r}) has {finding['character']} {finding['name']} at character "
        f"{finding['position']}: it {effect}, so what a recipient reads is not what it says.")


def check_controls(headers: list[dict[str, str]], filenames: list[str]) -> dict[str, Any]:
    """`findings`: one per character (`where` header or attachment, `field` the header's name or
    `filename`, `value` the text, `character` U+XXXX, its `name`, `position` 1-based in `value`);
    `problems` and `status` as the other checks."""
    findings = [finding for header in headers
                for finding in _findings("header", header["name"], header["value"])]
    findings += [finding for filename in filenames
                 for finding in _findings("attachment", "filename", filename)]
    problems = [_problem(finding) for finding in findings]
    return {"status": status_of(problems), "findings": findings, "problems": problems}
