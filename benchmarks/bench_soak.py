"""The soak row (issue 38): ten minutes of steady mixed load on one `--db` emulator with retention
(benchmarks/soak.py), held to the issue's rules. `SOAK_SECONDS` changes the length (the 2-hour run:
`SOAK_SECONDS=7200 python -m benchmarks soak`)."""

from __future__ import annotations

import os

from benchmarks import soak, targets

SECONDS = float(os.environ.get("SOAK_SECONDS", "600"))
MEMORY_GROWTH_MB = 10.0
P99_RATIO = 1.5
DB_GROWTH = 1.25


def main() -> None:
    result = soak.run(SECONDS, max_emails=3000, max_age="4m")
    print(result.summary(), flush=True)
    minutes = f"soak {SECONDS / 60:.0f} min"
    growth, ratio = result.memory_growth_mb(), result.p99_ratio()
    targets.record(f"{minutes}: RSS over the last half", f"{growth:+.1f} MB",
                   f"<= +{MEMORY_GROWTH_MB:.0f} MB", growth <= MEMORY_GROWTH_MB)
    targets.record(f"{minutes}: p99 last third / first", f"{ratio:.2f}x", f"<= {P99_RATIO}x",
                   ratio <= P99_RATIO)
    stored, bound = result.most_stored(), result.stored_bound()
    targets.record(f"{minutes}: stored mail", f"at most {stored}", f"<= {bound} (retention)", stored <= bound)
    db = result.db_growth()
    targets.record(f"{minutes}: database, end / midpoint", f"{db:.2f}x", f"<= {DB_GROWTH}x", db <= DB_GROWTH)
    targets.record(f"{minutes}: errors", str(len(result.errors)), "0", not result.errors)
