"""Writing to stdout (the banner, --log-requests lines) in a way a closed pipe cannot break."""

from __future__ import annotations

import os
import sys


def say(text: str) -> None:
    """Write `text` in one piece. A reader that took the first line and closed the pipe (a test runner's
    global setup reading the URL) must not stop the server: later output goes to /dev/null."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
