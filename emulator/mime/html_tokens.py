"""A linear-time HTML tokenizer with the callback interface of `html.parser.HTMLParser`.

The stdlib parser rescans the rest of the document for every construct that never ends: 25 000
unterminated `<!--` (100 KB an API user may send) kept the QA checks busy for 12 s (issue 25). Here
every construct that lacks its terminator runs to the end of the input and is done (an open comment
holds the rest, an open tag is reported as text, as the stdlib does at the end), so each character is
read a bounded number of times.

What subclasses get, as from HTMLParser with `convert_charrefs=True`: lower-case tag and attribute
names, attribute values and text with character references decoded (not inside `script`/`style`),
`handle_startendtag` for `<br/>` (by default start + end), `handle_comment`, `handle_decl` for
`<!DOCTYPE …>`, `handle_pi`, and `getpos()` giving the line of the token being reported.
"""

from __future__ import annotations

import re
from html import unescape

_MARKUP = re.compile(r"<[A-Za-z/!?]")  # where markup can begin; any other `<` is text
_TAG_NAME = re.compile(r"[^\s/>]*")
_GAP = re.compile(r"[\s/]*")
# A name (its first character may be `=`, as in HTML5), then maybe `= value`: quoted, or unquoted when it
# does not start with a quote. A quote that never closes fails the value; _OPEN_QUOTE then tells.
_ATTRIBUTE = re.compile(r"""([^\s/>][^\s/>=]*)(\s*=\s*(?:"([^"]*)"|'([^']*)'|(?!["'])([^\s>]*)))?""")
_OPEN_QUOTE = re.compile(r"""\s*=\s*["']""")
_RAW_TEXT = frozenset({"script", "style"})
_RAW_END = {name: re.compile(rf"</{name}(?=[\s/>])", re.IGNORECASE) for name in _RAW_TEXT}

Attrs = list[tuple[str, str | None]]


def _decoded(text: str) -> str:
    return unescape(text) if "&" in text else text


class LinearHTMLParser:
    """Feed the whole document (`feed` may be called more than once; `close` tokenizes it)."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._line, self._line_offset, self._line_start, self._token_at = 1, 0, 0, 0
        self._html = ""

    # ---- the HTMLParser-shaped interface ------------------------------------------------------

    def feed(self, data: str) -> None:
        self._chunks.append(data)

    def close(self) -> None:
        self._html = "".join(self._chunks)
        self._chunks = []
        self._tokenize()

    def getpos(self) -> tuple[int, int]:
        """(line, column) of the token being reported; the text is counted forward, each part once."""
        html, start, end = self._html, self._line_offset, self._token_at
        if end > start:
            self._line += html.count("\n", start, end)
            last = html.rfind("\n", start, end)
            self._line_start = last + 1 if last >= 0 else self._line_start
            self._line_offset = end
        return self._line, end - self._line_start

    def handle_starttag(self, tag: str, attrs: Attrs) -> None:
        pass

    def handle_startendtag(self, tag: str, attrs: Attrs) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        pass

    def handle_data(self, data: str) -> None:
        pass

    def handle_comment(self, data: str) -> None:
        pass

    def handle_decl(self, decl: str) -> None:
        pass

    def handle_pi(self, data: str) -> None:
        pass

    # ---- tokenizing ----------------------------------------------------------------------------

    def _tokenize(self) -> None:
        html, at = self._html, 0
        while (found := _MARKUP.search(html, at)) is not None:
            lt = found.start()
            if lt > at:
                self._data(at, lt)
            at = self._markup(lt)
        if at < len(html):
            self._data(at, len(html))

    def _data(self, start: int, end: int, raw: bool = False) -> None:
        self._token_at = start
        text = self._html[start:end]
        self.handle_data(text if raw else _decoded(text))

    def _markup(self, lt: int) -> int:
        """Handle the markup (or lone `<`) at `lt`; the offset after it."""
        html = self._html
        following = html[lt + 1:lt + 2]
        self._token_at = lt
        if following.isascii() and following.isalpha():
            return self._start_tag(lt)
        if following == "/":
            return self._end_tag(lt)
        if following == "!":
            return self._bang(lt)
        end = self._until(">", lt + 2)  # `<?…>`: a processing instruction, to the next `>`
        self.handle_pi(html[lt + 2:end])
        return end + 1

    def _until(self, terminator: str, start: int) -> int:
        """Where `terminator` starts from `start`, or the end of the input when it never comes."""
        found = self._html.find(terminator, start)
        return len(self._html) if found < 0 else found

    def _bang(self, lt: int) -> int:
        html = self._html
        if html.startswith("<!--", lt):
            body = lt + 4
            for empty in (">", "->"):  # `<!-->` and `<!--->` are complete, empty comments
                if html.startswith(empty, body):
                    self.handle_comment("")
                    return body + len(empty)
            end = self._until("-->", body)
            self.handle_comment(html[body:end])
            return end + 3
        end = self._until(">", lt + 2)
        text = html[lt + 2:end]
        if text[:7].lower() == "doctype":
            self.handle_decl(text)
        else:
            self.handle_comment(text)  # a bogus comment (`<!x>`, `<![CDATA[…]]>` outside foreign content)
        return end + 1

    def _end_tag(self, lt: int) -> int:
        html = self._html
        following = html[lt + 2:lt + 3]
        end = self._until(">", lt + 2)
        if following.isascii() and following.isalpha():
            name = _TAG_NAME.match(html, lt + 2)
            assert name is not None
            if end < len(html):
                self.handle_endtag(name.group(0).lower())
            else:
                self._data(lt, end)
        elif following != ">":
            self.handle_comment(html[lt + 2:end])  # `</ x>`: a bogus comment
        return end + 1

    def _start_tag(self, lt: int) -> int:
        html, size = self._html, len(self._html)
        name_match = _TAG_NAME.match(html, lt + 1)
        assert name_match is not None
        name, at = name_match.group(0).lower(), name_match.end()
        attrs: Attrs = []
        while True:
            gap = _GAP.match(html, at)
            assert gap is not None
            at = gap.end()
            if at < size and html[at] == ">":
                break
            attr = _ATTRIBUTE.match(html, at) if at < size else None
            if attr is None or (attr.group(2) is None and _OPEN_QUOTE.match(html, attr.end())):
                # End of input inside the tag (an open quote runs to it): its text, as the stdlib says.
                self._data(lt, size)
                return size
            value = next((v for v in attr.group(3, 4, 5) if v is not None), None)
            attrs.append((attr.group(1).lower(), None if value is None else _decoded(value)))
            at = attr.end()
        if gap.group(0).endswith("/"):
            self.handle_startendtag(name, attrs)
        else:
            self.handle_starttag(name, attrs)
        if name in _RAW_TEXT:
            return self._raw_text(name, at + 1)
        return at + 1

    def _raw_text(self, name: str, start: int) -> int:
        """`script`/`style` content: text up to the closing tag, never parsed for markup."""
        closing = _RAW_END[name].search(self._html, start)
        end = closing.start() if closing else len(self._html)
        if end > start:
            self._data(start, end, raw=True)
        return end
