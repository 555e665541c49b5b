"""Counters and histograms kept in memory for `GET /_emulator/metrics` (issue 38), and the Prometheus
text exposition format (version 0.0.4) they are written in.

Written here rather than with `prometheus_client`: a send pays one dict increment and a bisect, no
lock and no import at start, and the format is a few lines of text. The counters live as long as the
process (a reset of the emulator's state does not zero them: Prometheus expects counters that only
go up, and its `rate()` treats a fall as a restart).
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.core.tx import Host, Tx

PREFIX = "resend_emulator_"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Request durations in seconds, 0.5 ms to 10 s: a send in memory takes ~0.3 ms, a search or an
# export of a large outbox seconds.
DURATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
Labels = tuple[str, ...]


class Counter:
    """A counter per combination of label values (a tuple, in the order of `labels`)."""

    def __init__(self, name: str, help_text: str, labels: Labels) -> None:
        self.name, self.help, self.labels = PREFIX + name + "_total", help_text, labels
        self.values: dict[Labels, float] = {}

    def inc(self, key: Labels, amount: float = 1) -> None:
        self.values[key] = self.values.get(key, 0) + amount

    def lines(self) -> Iterator[str]:
        yield from _header(self.name, self.help, "counter")
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.labels, key)} {_number(value)}"


class Series:
    """One histogram's counts per bucket (not yet cumulative: one `+= 1` per observation) and sum."""

    __slots__ = ("counts", "total")

    def __init__(self, size: int) -> None:
        self.counts = [0] * size
        self.total = 0.0


class Histogram:
    def __init__(self, name: str, help_text: str, labels: Labels, bounds: Sequence[float]) -> None:
        self.name, self.help, self.labels, self.bounds = PREFIX + name, help_text, labels, tuple(bounds)
        self.series: dict[Labels, Series] = {}

    def observe(self, key: Labels, value: float) -> None:
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series(len(self.bounds) + 1)  # the last: above every bound (+Inf)
        series.counts[bisect_left(self.bounds, value)] += 1  # `le` is inclusive: bisect_left
        series.total += value

    def lines(self) -> Iterator[str]:
        yield from _header(self.name, self.help, "histogram")
        for key, series in sorted(self.series.items()):
            running = 0
            for bound, count in zip((*self.bounds, math.inf), series.counts, strict=True):
                running += count
                labels = _labels((*self.labels, "le"), (*key, _number(bound)))
                yield f"{self.name}_bucket{labels} {running}"
            yield f"{self.name}_sum{_labels(self.labels, key)} {_number(series.total)}"
            yield f"{self.name}_count{_labels(self.labels, key)} {running}"


class Metrics:
    """What the emulator counts as it runs; gauges are read at scrape time (control/metrics.py)."""

    def __init__(self) -> None:
        self.emails = Counter("emails_accepted", "Emails accepted for sending, by where they came from"
                              " (counted once committed; a batch counts each of its emails).", ("source",))
        self.deliveries = Counter("webhook_deliveries", "Webhook delivery attempts, by outcome: succeeded"
                                  " (a 2xx answer), retrying (failed, another attempt is scheduled),"
                                  " failed (failed, no attempt follows), disabled (the endpoint was"
                                  " disabled: no attempt made).", ("outcome",))
        self.requests = Counter("http_requests", "HTTP requests answered, by route template, method and"
                                " status.", ("route", "method", "status"))
        self.durations = Histogram("http_request_duration_seconds", "Time from a request's arrival to the"
                                   " end of its answer, by route template and method.",
                                   ("route", "method"), DURATION_BUCKETS)

    def counted(self) -> Iterator[str]:
        for family in (self.emails, self.deliveries, self.requests, self.durations):
            yield from family.lines()


def of(emu: Host) -> Metrics:
    found = emu.state.get("metrics")
    if found is None:
        found = emu.state["metrics"] = Metrics()
    return found  # type: ignore[no-any-return]


def count_on_commit(tx: Tx, counter: Counter, key: Labels, amount: float = 1) -> None:
    """Add to `counter` once `tx` commits: a rolled-back transaction counts nothing."""
    tx.after_commit(functools.partial(counter.inc, key, amount))


def gauge(name: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]) -> Iterator[str]:
    """A gauge family from (labels, value) pairs read at scrape time."""
    full = PREFIX + name
    yield from _header(full, help_text, "gauge")
    for labels, value in samples:
        yield f"{full}{_labels(tuple(labels), tuple(labels.values()))} {_number(value)}"


def exposition(lines: Iterable[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _header(name: str, help_text: str, kind: str) -> Iterator[str]:
    yield f"# HELP {name} {_escape_help(help_text)}"
    yield f"# TYPE {name} {kind}"


def _labels(names: Labels, values: Labels) -> str:
    if not names:
        return ""
    return "{" + ",".join(f'{name}="{_escape_value(value)}"' for name, value in zip(names, values,
                                                                                    strict=True)) + "}"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))
