"""Every scan of stored HTML timed on 1 MB of hostile markup (issue 25), apart from the test suite.

    python -m benchmarks.hostile_html [BYTES]

Each row is one input (a construct repeated to BYTES, 1 MB by default); each column one reader of
stored HTML: the QA scan and its four checks (`qa` = the whole report as /_emulator/outbox/{id}/qa runs
it), the generated text part, the message frame's rewrites and the click-tracking rewrite, in CPU
seconds (wall time on a shared, loaded machine says little). Quadratic readers took minutes here;
linear ones take well under a second per MB of constructs that never close.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from emulator.control.qa import CHECKS, Material
from emulator.control.qa.scan import scan
from emulator.mime.message import html_to_text
from emulator.resources.emails import tracking
from emulator.web import frame

CONSTRUCTS = {
    "<!--": "<!--", "<!": "<!", "<?": "<?", "<a": "<a", "</": "</", "</a": "</a", "<": "<",
    "&#": "&#", "<a b='": " b='", "<head ": "<head ", "color-scheme": "color-scheme", "src=": "src=",
    "<style> a": "a", "<style> /*": "/*", "<style> a{": "a{", "<style> (": "c(",
}
PREFIXES = {"<a b='": "<a", "<style> a": "<style>", "<style> /*": "<style>", "<style> a{": "<style>",
            "<style> (": "<style>a{b:"}


class _Tx:
    """Just what the link rewriter uses of a transaction (it queues one row per tracked link)."""

    account = "bench"
    emu = type("Emu", (), {"settings": type("Settings", (), {"host": "127.0.0.1", "port": 2580}),
                           "state": {}})

    def new_id(self) -> str:
        return "token"

    def queue(self, *_: Any) -> None:
        pass


def _qa(html: str) -> None:
    found = Material(html=html, text=None, text_auto=True, headers=[], tracking={}, content_ids=set())
    for check in CHECKS.values():
        check(found)


READERS: dict[str, Callable[[str], Any]] = {
    "qa": _qa,
    "text_part": html_to_text,
    "frame": lambda html: (frame.remote_count(html), frame.with_base_target(frame.in_scheme(html, True)),
                           frame.dark_capable(html)),
    "tracking": lambda html: tracking._rewrite_links(_Tx(), "email", html),  # type: ignore[arg-type]
}


def main(size: int) -> float:
    worst = 0.0
    print(f"{'input':14}" + "".join(f"{name:>11}" for name in READERS) + "   (CPU seconds)")
    for name, unit in CONSTRUCTS.items():
        html = PREFIXES.get(name, "") + unit * (size // len(unit))
        cells = []
        for reader in READERS.values():
            scan.cache_clear()
            started = time.process_time()
            reader(html)
            spent = time.process_time() - started
            worst = max(worst, spent)
            cells.append(f"{spent:11.3f}")
        print(f"{name:14}" + "".join(cells), flush=True)
    print(f"slowest: {worst:.3f} s for {size / 1e6:.1f} MB")
    return worst


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
