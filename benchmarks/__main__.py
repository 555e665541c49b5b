"""Run every benchmark module (`bench_*.py`), or only those named on the command line."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks import targets


def main(selected: list[str]) -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    for name in names:
        if selected and name.removeprefix("bench_") not in selected and name not in selected:
            continue
        print(f"\n== {name} ==", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main()
        print(f"({name} took {time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
    if targets.RESULTS:
        print("\n== targets ==\n" + targets.table(), flush=True)
        sys.exit(0 if targets.all_met() else 1)
