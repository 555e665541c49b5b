"""The command line's value types and its argparse parser class: what `--port`, `--max-age` and the rest
accept, and how a usage error reads."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import NoReturn

from emulator.core import clock
from emulator.core.clock import parse_iso


def timestamp(value: str) -> datetime:
    try:
        at = parse_iso(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 timestamp: {value!r}") from None
    try:
        return clock.check(at)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(value: str) -> float:
    """`90`, `90s`, `15m`, `24h`, `7d` → seconds."""
    text = value.strip().lower()
    factor = DURATION_UNITS.get(text[-1:], 0)
    number = text[:-1] if factor else text
    try:
        seconds = float(number) * (factor or 1)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 100 * 365 * 86400:  # nan fails this too
        raise argparse.ArgumentTypeError(f"not a duration (like 3600, 90m, 24h or 7d): {value!r}")
    return seconds


def spamd(value: str) -> str:
    from emulator.control.qa.spam import parse_address

    try:
        return parse_address(value).address
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` gives it (COLUMNS, then the terminal, then 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the width found without `shutil`: argparse makes a formatter for every
    flag it is given, and its `import shutil` (with zlib, bz2, lzma) was ~3 ms of every start."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line, like every other start-up error (exit status 2), and
    a "did you mean" for a mistyped flag (Python 3.12's suggest_on_error covers choices only, and 3.11
    has none)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{self.suggestions(extras)}")
        return parsed

    def suggestions(self, extras: Sequence[str]) -> str:
        # Compared without their dashes, which every flag shares and would make any two look alike.
        import difflib  # only for a mistyped flag

        known = {flag.lstrip("-"): flag for action in self._actions for flag in action.option_strings}
        typos = [word.split("=", 1)[0] for word in extras if word[:1] == "-"]
        pairs = [(typed, known[close[0]]) for typed in typos
                 if (close := difflib.get_close_matches(typed.lstrip("-"), known, n=1, cutoff=0.6))]
        if len(pairs) == 1:
            return f"; did you mean {pairs[0][1]}?"
        named = ", ".join(f"{flag} (for {typed})" for typed, flag in pairs)
        return f"; did you mean {named}?" if pairs else ""


def port_number(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port: {value!r} (a number from 0 to 65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port: {port} (a number from 0 to 65535)")
    return port
