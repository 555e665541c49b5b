"""Start-up (issue 40): spawn → first successful POST /emails.

Three processes, alternated round by round (A, B, C, A, B, C ...), each spawned on free ports and sent
POST /emails until one is answered 200:
- `resend-emulator` with its default flags (SMTP on) on free ports;
- the peer, `emulate` (Node);
- a stub: `uvicorn.run` of a one-route Starlette app (what a stock uvicorn + Starlette process costs).
With the bytecode cache on (the emulator compiled first, PYTHONDONTWRITEBYTECODE unset): target
<= 1.0x emulate. Then the emulator with no bytecode cache of its own modules (a copy without
__pycache__ run under PYTHONDONTWRITEBYTECODE=1, as a fresh editable checkout is): reported, no target.
Last, the phases of the emulator's start in one process (ms since spawn; benchmarks/startup_phases.py).
"""

from __future__ import annotations

import compileall
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import emulator
from benchmarks import peer, targets

ROUNDS = 9
PHASE_ROUNDS = 5
BODY = json.dumps({"from": "a@acme.dev", "to": ["b@x.dev"], "subject": "s", "html": "<p>x</p>"})
HEADERS = {"Authorization": "Bearer re_emulator_default_key", "Content-Type": "application/json"}
PACKAGE = Path(emulator.__file__).resolve().parent
STUB_APP = Path(__file__).with_name("stub_app.py")

Command = Callable[[int], list[str]]


def first_send(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with status {process.returncode} before answering")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("POST", "/emails", BODY, HEADERS)
            answer = conn.getresponse()
            answer.read()
            conn.close()
            if answer.status == 200:
                return
        except OSError:
            time.sleep(0.001)
    raise RuntimeError(f"no answer on port {port} within {timeout:.0f} s")


def spawn_to_send(command: Command, env: dict[str, str], cwd: Path | None = None) -> float:
    port = peer.free_port()
    started = time.perf_counter()
    process = subprocess.Popen(command(port), env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        first_send(port, process)
        return (time.perf_counter() - started) * 1000
    finally:
        process.terminate()
        process.wait(timeout=10)


def emulator_command(port: int) -> list[str]:
    # What the `resend-emulator` script runs (its entry point), whichever checkout is installed.
    start = [sys.executable, "-c", "from emulator.__main__ import main; main()"]
    return [*start, "--port", str(port), "--smtp-port", "0", "--smtps-port", "0"]


def stub_command(port: int) -> list[str]:
    return [sys.executable, str(STUB_APP), str(port)]


def environment(pythonpath: str, cached: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not cached:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def summary(name: str, figures: list[float]) -> str:
    return f"{name:<34} median {statistics.median(figures):6.1f} ms  ({min(figures):.0f}–{max(figures):.0f})"


def compare(emulate: list[str]) -> None:
    root = str(PACKAGE.parent)
    compileall.compile_dir(str(PACKAGE), quiet=1)
    cached = environment(os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]), cached=True)
    with tempfile.TemporaryDirectory() as scratch:
        # The emulator's own modules without bytecode: a copy with no __pycache__, none written.
        shutil.copytree(PACKAGE, Path(scratch) / "emulator", ignore=shutil.ignore_patterns("__pycache__"))
        uncached = environment(os.pathsep.join([scratch, root]), cached=False)
        variants: dict[str, tuple[Command, dict[str, str], Path | None]] = {
            "resend-emulator": (emulator_command, cached, Path(root)),
            "emulate": (lambda port: [*emulate, "--port", str(port)], cached, peer.folder()),
            "uvicorn + Starlette stub": (stub_command, cached, Path(root)),
            # Run from the copy's folder: `python -c` puts the working directory first on sys.path.
            "resend-emulator, no bytecode cache": (emulator_command, uncached, Path(scratch)),
        }
        figures: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name, (command, env, cwd) in variants.items():
                figures[name].append(spawn_to_send(command, env, cwd))
    for name, values in figures.items():
        print(summary(name, values), flush=True)
    emu, peer_ms = statistics.median(figures["resend-emulator"]), statistics.median(figures["emulate"])
    stub = statistics.median(figures["uvicorn + Starlette stub"])
    uncached_ms = statistics.median(figures["resend-emulator, no bytecode cache"])
    ratio = emu / peer_ms
    print(f"spawn → first send: {ratio:.2f}x emulate, {emu / stub:.2f}x the stub;"
          f" no bytecode cache {uncached_ms:.0f} ms ({uncached_ms / peer_ms:.2f}x emulate)", flush=True)
    targets.record("spawn → first send vs emulate", f"{ratio:.2f}x ({emu:.0f} vs {peer_ms:.0f} ms)",
                   "<= 1.0x", ratio <= 1.0)


def phases() -> None:
    env = environment(os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")]), cached=True)
    runs: list[dict[str, float]] = []
    for _ in range(PHASE_ROUNDS):
        port = peer.free_port()
        env["STARTUP_SPAWNED_AT"] = repr(time.time())
        out = subprocess.run([sys.executable, "-m", "benchmarks.startup_phases", str(port)], env=env,
                             capture_output=True, text=True, timeout=60, cwd=PACKAGE.parent)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("phases of the emulator's start (median ms since spawn; the step that ended there):")
    previous = 0.0
    for name in runs[0]:
        at = statistics.median(run[name] for run in runs)
        print(f"  {at:7.1f}  (+{at - previous:5.1f})  {name}")
        previous = at


def main() -> None:
    emulate = peer.ensure_installed()
    compare(emulate)
    phases()


if __name__ == "__main__":
    main()
