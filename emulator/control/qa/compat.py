"""HTML compatibility: which features of an email's HTML/CSS the major mail clients do not (fully) render.

The facts come from caniemail.com's dataset (vendored: caniemail.json, see CANIEMAIL.md). Each dataset
feature is recognised from its title (`<table> element`, `align attribute`, `display:flex`, `margin`,
`@media (prefers-color-scheme)`, `:hover`, `clamp()`, `rem unit`, `PNG image format`) plus a few named
by hand; a feature whose title names nothing detectable in HTML (e.g. `Chaining selectors`) is never
reported. A client's support is that of the newest version the dataset tested.

`unsupported` lists the features some major client does not render at all, with those clients; `partial`
the rest of the features some client renders only in part, with the dataset's notes saying which part.
Score (our choice; caniemail has none): over every detected feature and every major client with a
known answer, supported counts 1, partial ½, unsupported 0; 100 when nothing is detected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from emulator.control.qa.scan import Index, index, scan

PACKAGE_VERSION = "1.0.5"  # the npm package the JSON came from (CANIEMAIL.md)
DATA = Path(__file__).resolve().parent / "caniemail.json"
MAJOR_CLIENTS = [
    ("apple-mail", "macos"), ("apple-mail", "ios"), ("gmail", "desktop-webmail"), ("gmail", "ios"),
    ("gmail", "android"), ("gmail", "mobile-webmail"), ("outlook", "windows"), ("outlook", "windows-mail"),
    ("outlook", "macos"), ("outlook", "outlook-com"), ("outlook", "ios"), ("outlook", "android"),
    ("yahoo", "desktop-webmail"), ("yahoo", "ios"), ("yahoo", "android"), ("samsung-email", "android"),
    ("thunderbird", "macos"),
]
SUPPORT = {"y": "supported", "a": "partial", "n": "unsupported"}
Matcher = Callable[[Index], list[int]]


def _tags(*names: str, attr: tuple[str, str] | None = None) -> Matcher:
    def match(ix: Index) -> list[int]:
        return [tag.line for name in names for tag in ix.tags.get(name, [])
                if attr is None or (tag.attrs.get(attr[0]) or "").lower() == attr[1]]
    return match


def _attributes(*names: str) -> Matcher:
    return lambda ix: [line for name in names for line in ix.attributes.get(name, [])]


def _properties(names: set[str], value: str | None = None) -> Matcher:
    """Declarations of these properties (with exactly this value, `!important` aside, when given)."""
    def match(ix: Index) -> list[int]:
        return [d.line for name in names for d in ix.props.get(name, [])
                if value is None or d.value.lower().split("!")[0].strip() == value]
    return match


def _declarations(test: Callable[[str, str], bool]) -> Matcher:
    """A scan of every declaration: for the few features no index entry names."""
    return lambda ix: [d.line for d in ix.inventory.declarations if test(d.prop, d.value.lower())]


def _href(test: Callable[[str], bool]) -> Matcher:
    return lambda ix: [tag.line for tag in ix.tags.get("a", [])
                       if test((tag.attrs.get("href") or "").strip().lower())]


def _image_sources(test: Callable[[str], bool]) -> Matcher:
    return lambda ix: [tag.line for tag in ix.tags.get("img", [])
                       if test((tag.attrs.get("src") or "").strip().lower().split("?")[0])]


def _values(*words: str) -> Matcher:
    return _declarations(lambda prop, value: any(word in value for word in words))


def _functions(*names: str) -> Matcher:
    return lambda ix: [line for name in names for line in ix.functions.get(name, [])]


HAND_MADE: dict[str, Matcher] = {
    # Every email has a <body>: what a client loses without it is what the tag carries (a background,
    # a style, a class), so only a body with attributes counts.
    "html-body": lambda ix: [t.line for t in ix.tags.get("body", []) if t.attrs],
    "html-comments": lambda ix: ix.inventory.comments,
    "html-mailto-links": _href(lambda href: href.startswith("mailto:")),
    "html-anchor-links": _href(lambda href: href.startswith("#") and len(href) > 1),
    "html-meta-color-scheme": lambda ix: [t.line for t in ix.tags.get("meta", []) if (
        t.attrs.get("name") or "").lower() in ("color-scheme", "supported-color-schemes")],
    "html-h1-h6": _tags("h1", "h2", "h3", "h4", "h5", "h6"),
    "html-lists": _tags("ul", "ol", "dl"),
    "html-semantics": _tags("article", "aside", "details", "figcaption", "figure", "footer", "header",
                            "main", "mark", "nav", "section", "summary", "time"),
    "html-srcset": _attributes("srcset", "sizes"),
    "html-address": _tags("address"),
    "html-image-maps": _tags("map", "area"),
    "html-svg": _tags("svg"),
    "image-base64": _image_sources(lambda src: src.startswith("data:image/")),
    "css-unit-calc": _functions("calc"),
    "css-important": _declarations(lambda prop, value: "!important" in value),
    "css-variables": _declarations(lambda prop, value: prop.startswith("--") or "var(" in value),
    "css-sytem-ui": _values("system-ui", "ui-serif", "ui-sans-serif", "ui-rounded", "ui-monospace"),
    "css-intrinsic-size": _values("fit-content", "min-content", "max-content"),
    "css-modern-color": _functions("lch", "oklch", "lab", "oklab"),
}
# Not checked: a client that drops the doctype renders the email in its own mode, which no sender can
# change, so reporting it would only bury the findings one can act on.
NOT_CHECKED = {"html-doctype"}
IMAGE_ALIASES = {"jpg": ("jpg", "jpeg"), "tiff": ("tif", "tiff"), "heif": ("heif", "heic")}


def _css_matcher(title: str, keywords: list[str], titles: set[str]) -> Matcher | None:
    if title.startswith("@"):
        name = title[1:].split()[0].rstrip(",")
        conditions = [c.strip().removeprefix("-webkit-") for c in re.findall(r"\(([^)]+)\)", title)]
        return lambda ix: [r.line for r in ix.inventory.at_rules if r.name == name
                           and (not conditions or any(c in r.prelude.lower() for c in conditions))]
    if title.startswith(":"):
        alone = "" if title.startswith("::") else "(?<!:)"  # `:before` is not `::before`
        pattern = re.compile(alone + re.escape(title) + r"(?![\w-])")
        return lambda ix: [line for selector, line in ix.inventory.selectors
                           if pattern.search(selector.lower())]
    if match := re.fullmatch(r"([a-z-]+)\(\)", title):
        return _functions(match.group(1))
    if match := re.fullmatch(r"([a-z-]+):\s*([a-z-]+)", title):
        return _properties({match.group(1)}, match.group(2))
    if match := re.fullmatch(r"(\S+) unit", title):
        unit = match.group(1)
        return lambda ix: ix.units.get(unit, [])
    listed = [part.strip() for part in re.split(r",|&", re.sub(r" (CSS )?(property|properties|shorthand)$",
                                                               "", title.strip()))]
    if all(re.fullmatch(r"[a-z-]+", name) for name in listed):
        longhands = {k for k in keywords if k.startswith(f"{title}-") and k not in titles}
        return _properties(set(listed) | longhands)
    return None



def _html_matcher(title: str) -> Matcher | None:
    if match := re.fullmatch(r'<(\w+)(?: type="(\w+)")?>(?: element)?', title):
        tag, kind = match.groups()
        return _tags(tag, attr=("type", kind) if kind else None)
    if match := re.fullmatch(r"([a-z-]+) attribute", title):
        return _attributes(match.group(1))
    return None


def _image_matcher(slug: str) -> Matcher | None:
    fmt = slug.removeprefix("image-")
    if fmt in ("apng", "mp4"):  # not told apart by a file name
        return None
    extensions = tuple(f".{ext}" for ext in IMAGE_ALIASES.get(fmt, (fmt,)))
    return _image_sources(lambda src: src.endswith(extensions))


def matcher(feature: dict[str, Any], titles: set[str]) -> Matcher | None:
    slug, title = feature["slug"], feature["title"]
    if slug in NOT_CHECKED:
        return None
    if slug in HAND_MADE:
        return HAND_MADE[slug]
    keywords = [k.strip() for k in (feature.get("keywords") or "").split(",")]
    category = feature["category"]
    if category == "css":
        return _css_matcher(title, keywords, titles)
    if category == "html":
        return _html_matcher(title)
    return _image_matcher(slug) if category == "image" else None


@cache
def dataset() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    titles = {f["title"] for f in data["data"]}
    data["matchers"] = [(f, m) for f in data["data"] if (m := matcher(f, titles)) is not None]
    return data


def client_name(family: str, platform: str) -> str:
    nice = dataset()["nicenames"]
    return f"{nice['family'].get(family, family)} {nice['platform'].get(platform, platform)}"


def _support(feature: dict[str, Any], family: str, platform: str) -> dict[str, Any] | None:
    versions = feature["stats"].get(family, {}).get(platform)
    if not versions:
        return None
    version, answer = list(versions.items())[-1]
    level = SUPPORT.get(answer[:1])
    if level is None:
        return None
    notes = [feature.get("notes_by_num", {}).get(num) for num in re.findall(r"#(\d+)", answer)]
    return {"client": f"{family}.{platform}", "name": client_name(family, platform), "version": version,
            "support": level, "notes": [note for note in notes if note]}


def _score(points: list[float]) -> float:
    return round(100 * sum(points) / len(points), 1) if points else 100.0


def _entry(feature: dict[str, Any], lines: list[int], clients: list[dict[str, Any]]) -> dict[str, Any]:
    return {"slug": feature["slug"], "title": feature["title"], "category": feature["category"],
            "url": feature["url"], "lines": lines, "clients": clients}


def check_html(html: str | None) -> dict[str, Any]:
    data = dataset()
    ix = index(scan(html or ""))
    detected, points = 0, []
    flagged: list[dict[str, Any]] = []
    caveats: list[dict[str, Any]] = []
    per_client: dict[str, list[float]] = {f"{f}.{p}": [] for f, p in MAJOR_CLIENTS}
    for feature, match in data["matchers"]:
        lines = sorted(set(match(ix)))
        if not lines:
            continue
        detected += 1
        answers = [a for f, p in MAJOR_CLIENTS if (a := _support(feature, f, p)) is not None]
        for answer in answers:
            value = {"supported": 1.0, "partial": 0.5}.get(answer["support"], 0.0)
            points.append(value)
            per_client[answer["client"]].append(value)
        unsupported = [a for a in answers if a["support"] == "unsupported"]
        partial = [a for a in answers if a["support"] == "partial"]
        if unsupported:
            flagged.append(_entry(feature, lines, unsupported))
        elif partial:
            caveats.append(_entry(feature, lines, partial))
    return {
        "object": "html_check",
        "dataset": {"name": "caniemail", "package_version": PACKAGE_VERSION,
                    "updated": data["last_update_date"][:10]},
        "score": _score(points),
        "features_detected": detected,
        "unsupported": flagged,
        "partial": caveats,
        "clients": [{"client": f"{f}.{p}", "name": client_name(f, p), "score": _score(per_client[f"{f}.{p}"])}
                    for f, p in MAJOR_CLIENTS],
    }
