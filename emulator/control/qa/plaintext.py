"""The plain-text part: there, readable, and saying what the HTML says.

Spam filters score an HTML-only message, and the text part is what watches, screen readers and
text-only clients show. When the sender gave none, the emulator (like Resend) generated one from the
HTML: reported as `generated` (info) so QA reads it once.
"""

from __future__ import annotations

import re
from typing import Any

from emulator.control.qa.findings import problem, status_of
from emulator.control.qa.scan import scan

# `[^<>]*`, not `[^>]*`: each attempt stops at the next `<`, so a run of `<p <p <p` without any `>`
# is read once, not once per `<p` (issue 25).
_TAG = re.compile(r"</?(p|br|div|table|td|tr|a|span|img|html|body)\b[^<>]*>", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{\{\{?\s*[\w.|]+\s*\}?\}\}")
SHORT_RATIO = 1 / 3  # a text part with under a third of the HTML's words is likely a stub


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _missing_links(html: str, text: str, targets: dict[str, str]) -> list[str]:
    links = []
    for tag in scan(html).tags:
        href = (tag.attrs.get("href") or "").strip() if tag.name == "a" else ""
        if href.lower().startswith(("http://", "https://")):
            original = targets.get(href, href)
            if href not in text and original not in text and original not in links:
                links.append(original)
    return links


def check_text(html: str | None, text: str | None, generated: bool,
               targets: dict[str, str]) -> dict[str, Any]:
    """`targets`: tracking URL → original link, so a text part quoting the original counts."""
    problems = []
    if generated:
        problems.append(problem("generated", "info", "No text part was given: it was generated from the"
                                 " HTML. Read it once; better, send your own `text`."))
    if not (text or "").strip():
        if html:
            problems.append(problem("missing", "error", "The HTML has no plain-text alternative."))
        return {"object": "text_check", "text": text, "status": status_of(problems), "problems": problems}
    if _TAG.search(text or ""):
        problems.append(problem("html_in_text", "warning", "The text part contains HTML tags."))
    if _PLACEHOLDER.search(text or ""):
        problems.append(problem("placeholder", "warning", "The text part contains an unfilled"
                                 " `{{placeholder}}`."))
    if html and not generated:
        html_words, text_words = _words(" ".join(scan(html).text)), _words(_TAG.sub(" ", text or ""))
        if html_words and text_words < html_words * SHORT_RATIO:
            problems.append(problem("short", "warning", f"The text part has {text_words} words, the HTML"
                                     f" {html_words}: is it the same message?"))
        for link in _missing_links(html, text or "", targets):
            problems.append(problem("missing_link", "warning", f"The HTML links to {link}, the text"
                                     " part does not."))
    return {"object": "text_check", "text": text, "status": status_of(problems), "problems": problems}
