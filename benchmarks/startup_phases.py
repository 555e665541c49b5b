"""The emulator's start, phase by phase, in one process: when each step ended (ms since the interpreter
spawned), up to the first answered POST /emails. Prints one JSON object.

    STARTUP_SPAWNED_AT=<time.time()> python -m benchmarks.startup_phases PORT
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import threading
import time
from typing import Any

BODY = json.dumps({"from": "a@acme.dev", "to": ["b@x.dev"], "subject": "s", "html": "<p>x</p>"})
marks: dict[str, float] = {}


def since_start() -> float:
    # From the parent's clock reading just before it spawned this process (the same wall clock).
    return (time.time() - float(os.environ["STARTUP_SPAWNED_AT"])) * 1000


def mark(name: str) -> None:
    marks.setdefault(name, round(since_start(), 1))


def wrap(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)

    def wrapped(*args: Any) -> Any:
        result = original(*args)
        mark(label)
        return result

    setattr(owner, name, wrapped)


def first_send(port: int) -> None:
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("POST", "/emails", BODY, {"Authorization": "Bearer re_emulator_default_key",
                                                   "Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            if answer.status == 200:
                break
        except OSError:
            time.sleep(0.001)
    mark("first send answered")
    print(json.dumps(marks), flush=True)
    os._exit(0)


def main(port: int) -> None:
    mark("interpreter ready")
    import emulator.cli as cli

    mark("emulator.cli imported")
    wrap(cli, "parse_settings", "argv parsed")
    import emulator.app as app

    mark("emulator.app imported")
    wrap(app, "create_app", "uvicorn imported, app built")
    wrap(cli, "on_ready", "lifespan done (ready)")
    threading.Thread(target=first_send, args=(port,), daemon=True).start()
    cli.main(["--port", str(port), "--smtp-port", "0", "--smtps-port", "0", "--quiet"])


if __name__ == "__main__":
    main(int(sys.argv[1]))
