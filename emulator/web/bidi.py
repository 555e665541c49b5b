"""The `visible` filter: a user-supplied string (subject, name, address, filename, tag…) with every
invisible or direction-changing character replaced by a marked token, `⟨U+202E⟩`.

Templates put the result in an element with `dir="auto"` (or a `<bdi>`), so an RTL subject stays one
isolated run and a chip after it stays after it. The token replaces the character instead of standing
beside it: a U+202E left in place would still reverse what follows it (`report⟨U+202E⟩slx.pdf`, never
"reportfdp.xls"). Which characters: emulator/control/qa/controls.py, whose check lists the same ones.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from emulator.control.qa.controls import hidden_characters

if TYPE_CHECKING:
    from markupsafe import Markup


def _token(code: str) -> str:
    return f"\u27e8{code}\u27e9"


def visible_text(value: object) -> str:
    """For attributes (`title`, `aria-label`) and `<title>`, where no markup can go: the bare token."""
    text = "" if value is None else str(value)
    found = hidden_characters(text)
    if not found:
        return text
    at, parts = 0, []
    for hidden in found:
        parts += [text[at:hidden.position - 1], _token(hidden.code)]
        at = hidden.position
    return "".join([*parts, text[at:]])


LAYOUT = frozenset("\n\r\t")


def escaped_in_json(text: str) -> str:
    """A JSON text (a payload shown in a `<pre>`) with each hidden character inside its strings written as
    its JSON escape (`\\u202e`): still the same JSON, and nothing reorders it. Its line breaks stay."""
    found = [hidden for hidden in hidden_characters(text) if hidden.char not in LAYOUT]
    if not found:
        return text
    at, parts = 0, []
    for hidden in found:
        parts += [text[at:hidden.position - 1], json.dumps(hidden.char)[1:-1]]
        at = hidden.position
    return "".join([*parts, text[at:]])


def visible(value: object, plain: bool = False) -> Markup | str:
    """Escaped HTML with each hidden character as `<span class="ctl">⟨U+XXXX⟩</span>` (its name in the
    title); `plain=True` gives `visible_text` for an attribute."""
    from markupsafe import Markup, escape

    if plain:
        return visible_text(value)
    text = "" if value is None else str(value)
    if text.isprintable():  # the common case, at once
        return escape(text)
    found = hidden_characters(text)
    if not found:
        return escape(text)
    at, parts = 0, []
    for hidden in found:
        parts.append(escape(text[at:hidden.position - 1]))
        parts.append(Markup('<span class="ctl" dir="ltr" title="{} {}">{}</span>').format(
            hidden.code, hidden.name, _token(hidden.code)))
        at = hidden.position
    parts.append(escape(text[at:]))
    return Markup("").join(parts)
