"""HTTP load from `wrk` (Debian package `wrk`), a C load generator that outruns the servers it measures.

A Python load generator saturates at ~1.5 k requests/s on a 2-core machine, below both the emulator and
its ceiling, which hides the gap between them. Servers run pinned to core 0 and `wrk` to core 1
(`taskset`), so neither steals the other's CPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from typing import NamedTuple

SERVER_CORE, LOAD_CORE = "0", "1"
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


class Running(NamedTuple):
    """A server under load: where it listens, and its process (for its CPU time)."""

    port: int
    pid: int


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere). On a machine shared
    with other work, CPU per request moves far less than requests per second does."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def available() -> bool:
    return shutil.which("wrk") is not None


def pinned(command: Sequence[str], core: str = SERVER_CORE) -> list[str]:
    """`command` pinned to one core when `taskset` exists and the machine has two cores or more."""
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", core, *command]
    return list(command)


def _lua(method: str, body: str, headers: dict[str, str], extra: str) -> str:
    lines = [f'wrk.method = "{method}"']
    if body:
        lines.append(f"wrk.body = [==[{body}]==]")
        headers = {"Content-Type": "application/json", **headers}
    lines += [f'wrk.headers["{name}"] = "{value}"' for name, value in headers.items()]
    return "\n".join(lines) + "\n" + extra


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse(output: str, seconds: float) -> dict[str, float]:
    """requests, errors (socket errors + non-2xx/3xx), rps, p50_ms, p99_ms from `wrk --latency`."""
    quantiles = dict(re.findall(r"^\s+(50|99)%\s+(\S+)[ \t]*$", output, re.M))  # "1.32s " when in seconds
    if len(quantiles) < 2:
        raise RuntimeError(f"wrk printed no latency distribution:\n{output}")
    requests = int(re.search(r"^\s*(\d+) requests in", output, re.M).group(1))  # type: ignore[union-attr]
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", output))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors += int(non_2xx.group(1)) if non_2xx else 0
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    return {"requests": requests, "errors": errors, "seconds": seconds, "rps": rps,
            "p50_ms": _ms(quantiles["50"]), "p99_ms": _ms(quantiles["99"])}


def load(port: int, connections: int, seconds: float, method: str = "GET", path: str = "/",
         body: str = "", headers: dict[str, str] | None = None, lua: str = "",
         pid: int | None = None) -> dict[str, float]:
    """`lua`: more of the wrk script, after the method, body and headers (a `request` function, say).
    `pid`: the server's process, to add `cpu_us`, its CPU time per request."""
    cpu_before = cpu_seconds(pid) if pid else 0.0
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_lua(method, body, headers or {}, lua))
    try:
        duration = f"-d{max(1, round(seconds))}s"  # wrk takes whole seconds
        command = pinned(["wrk", "-t1", f"-c{connections}", duration, "--latency", "-s", script.name,
                          f"http://127.0.0.1:{port}{path}"], LOAD_CORE)
        output = subprocess.run(command, capture_output=True, text=True, check=True,
                                timeout=seconds + 30).stdout
    finally:
        os.unlink(script.name)
    result = parse(output, seconds)
    if pid:
        result["cpu_us"] = (cpu_seconds(pid) - cpu_before) * 1e6 / max(result["requests"], 1)
    return result
