"""Folding for search (issue 39): case and accents set aside by Unicode's rules, the same for what is
searched and what is searched for, so `soren` finds "Søren", `ΣΟΦΙΑ` finds "σοφία", `strasse` "Straße".

    fold(text) = NFC(letters(strip_marks(NFKD(casefold(NFKD(text))))))

NFKD before and after casefold is Unicode's NFKC_Casefold order (`ℌ` decomposes to an `H` that then
folds). The marks stripped are the general-purpose combining diacritics (U+0300–036F and their
supplement/extension blocks): accents, cedillas, the Greek tonos. Marks of other scripts stay: a
Devanagari vowel sign or the kana voicing mark (`ガ` is not `カ`) changes the word, not its accent;
NFC at the end puts them back together. `letters` is a small table (assumed, as the issue asks) for
Latin letters a reader takes for a base letter with a stroke but that no decomposition reaches:
ø→o, ł→l, đ/ð→d, ħ→h, ŧ→t, ı→i, æ→ae, œ→oe, þ→th (ß→ss is casefold's own).
ASCII text takes a fast path: lowering is all folding does to it.
"""

from __future__ import annotations

import re
import unicodedata

_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_LETTERS = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "ħ": "h", "ŧ": "t", "ı": "i",
                          "æ": "ae", "œ": "oe", "þ": "th"})
SQL_NAME = "FOLD_TEXT"


def fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return unicodedata.normalize("NFC", _MARKS.sub("", folded).translate(_LETTERS))


def fold_sql(value: object) -> str | None:
    """The SQL function FOLD_TEXT: NULL stays NULL, anything else is folded as text."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return fold(str(value))
