"""Elements by which an email tries to navigate the window that shows it, each with its source line.

Mail clients do not let an email replace the view it is read in: webmail strips or ignores a
`<meta http-equiv=refresh>`, opens every link in a new window whatever its `target`, and drops forms or
blocks their submission. The preview does the same (web/frame.py), so what the email meant to do is
visible only here:
- `meta_refresh` (warning): a redirect or reload the recipient never gets;
- `link_target` (warning): a link (or image-map area) targeting `_self`, `_top` or `_parent`;
- `base_target` (warning): a `<base target>` other than `_blank`, which every link without a target follows;
- `form` (warning): a form — unsupported or not submitted in most clients (Gmail, Outlook).
"""

from __future__ import annotations

from typing import Any

from emulator.control.qa.scan import Tag, scan

FINDINGS = {
    "meta_refresh": "A <meta http-equiv=refresh>: mail clients ignore or strip it; the preview blocks it.",
    "link_target": "This target would replace the view the email is read in: mail clients open links in a new"
                   " window instead, as the preview does.",
    "base_target": "A <base target> that would make links replace the view: mail clients open links in a new"
                   " window instead, as the preview does.",
    "form": "A form: most clients (Gmail, Outlook) drop it or do not submit it; the preview never"
            " submits it.",
}
_REPLACING = ("_self", "_top", "_parent")


def _finding(name: str, tag: Tag, detail: str) -> dict[str, Any]:
    return {"problem": name, "severity": "warning", "message": FINDINGS[name], "element": tag.name,
            "line": tag.line, "detail": detail}


def _of(tag: Tag) -> dict[str, Any] | None:
    attrs = tag.attrs
    target = (attrs.get("target") or "").strip().lower()
    if tag.name == "meta" and (attrs.get("http-equiv") or "").strip().lower() == "refresh":
        return _finding("meta_refresh", tag, attrs.get("content") or "")
    if tag.name in ("a", "area") and target in _REPLACING:
        return _finding("link_target", tag, f"target={target} {attrs.get('href') or ''}".rstrip())
    if tag.name == "base" and "target" in attrs and target != "_blank":
        return _finding("base_target", tag, f"target={target or '(empty)'}")
    if tag.name == "form":
        return _finding("form", tag, f"{(attrs.get('method') or 'get').lower()} {attrs.get('action') or ''}")
    return None


def check_navigation(html: str | None) -> dict[str, Any]:
    """Each navigating element of the HTML, in document order."""
    findings = [found for tag in scan(html or "").tags if (found := _of(tag))]
    return {"object": "navigation_check", "status": "warning" if findings else "ok", "problems": findings}
