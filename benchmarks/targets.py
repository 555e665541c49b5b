"""The targets table (issue 18): each benchmark records its figure and verdict here; `make bench` prints
the table at the end and exits non-zero when any target is missed, so a regression fails loudly."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    path: str
    figure: str
    target: str
    met: bool


RESULTS: list[Verdict] = []


def record(path: str, figure: str, target: str, met: bool) -> None:
    RESULTS.append(Verdict(path, figure, target, met))


def table() -> str:
    width = max((len(v.path) for v in RESULTS), default=10)
    lines = [f"{'path':<{width}}  {'measured':<34}  {'target':<28}  verdict"]
    lines += [f"{v.path:<{width}}  {v.figure:<34}  {v.target:<28}  {'met' if v.met else 'MISSED'}"
              for v in RESULTS]
    return "\n".join(lines)


def all_met() -> bool:
    return all(v.met for v in RESULTS)
