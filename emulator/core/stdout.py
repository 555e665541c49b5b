"""Writing to stdout (the banner, request lines, lifecycle events) in a way a closed pipe cannot break,
as text (the default: the banner and `-v` lines) or as JSON, one object a line (`--log-format json`,
for a team host's log collector). Every line the emulator writes to stdout goes through here."""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from datetime import UTC, datetime
from typing import Any

TEXT, JSON = "text", "json"
LOG_FORMATS = (TEXT, JSON)


def say(text: str) -> None:
    """Write `text` in one piece. A reader that took the first line and closed the pipe (a test runner's
    global setup reading the URL) must not stop the server: later output goes to /dev/null."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def wall_time() -> str:
    # The host's wall clock, not the emulator's: a log line says when it was written, and the emulator's
    # clock is often frozen or moved by tests.
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def json_line(event: str, **fields: Any) -> None:
    say(json.dumps({"time": wall_time(), "event": event, **fields}, default=str) + "\n")


def event(log_format: str, name: str, text: str | None, **fields: Any) -> None:
    """A lifecycle event: `text` as it has always printed (None: nothing in text), or one JSON line."""
    if log_format == JSON:
        json_line(name, **fields)
    elif text is not None:
        say(text)


class JsonLines(logging.Handler):
    """Log records (the errors the emulator reports as it runs) as JSON lines on stdout, beside the
    request lines, so one collector reads both. A traceback stays inside its line (`exception`)."""

    def emit(self, record: logging.LogRecord) -> None:
        fields: dict[str, Any] = {"level": record.levelname.lower(), "logger": record.name}
        try:
            fields["message"] = record.getMessage()
        except (TypeError, ValueError):
            fields["message"] = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            fields["exception"] = "".join(traceback.format_exception(record.exc_info[1])).rstrip()
        json_line("error" if record.levelno >= logging.ERROR else "warning", **fields)


def log_as_json(names: tuple[str, ...] = ("emulator", "uvicorn")) -> None:
    """Send these loggers' records to stdout as JSON lines instead of stderr text."""
    for name in names:
        logger = logging.getLogger(name)
        logger.handlers = [JsonLines(logging.WARNING)]
        logger.propagate = False
