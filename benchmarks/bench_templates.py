"""Templates: renderer throughput, the cost a template adds to POST /emails, list paging at two sizes.

In-process (Starlette TestClient), so figures compare the emulator with itself, not with the network.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.core.config import Settings
from emulator.resources.templates.render import render

KEY = "re_bench_templates"
VARIABLES = [{"key": f"VAR_{n}", "type": "string", "fallback_value": f"value {n}"} for n in range(50)]
HTML = "".join(f"<p>Line {n}: {{{{{{VAR_{n % 50}}}}}}}</p>" for n in range(400))


def _timed(count: int, action: Callable[[], object]) -> float:
    """Seconds per call over `count` calls."""
    started = time.perf_counter()
    for _ in range(count):
        action()
    return (time.perf_counter() - started) / count


def _client() -> TestClient:
    settings = Settings(api_keys=[KEY], clock="frozen", clock_start=datetime(2026, 5, 14, 9, tzinfo=UTC),
                        smtp=False, quiet=True, allowed_hosts=["testserver"])
    return TestClient(create_app(settings), headers={"Authorization": f"Bearer {KEY}"})


def bench_render() -> None:
    values = {item["key"]: item["fallback_value"] for item in VARIABLES}
    per_call = _timed(2000, lambda: render(HTML, values))
    print(f"render {len(HTML) / 1024:.1f} KiB with 400 placeholders: {per_call * 1e6:.0f} µs"
          f" ({1 / per_call:,.0f}/s)")


def bench_send(client: TestClient) -> None:
    template_id = client.post("/templates", json={"name": "bench", "html": HTML, "subject": "S",
                                                  "from": "a@acme.dev", "variables": VARIABLES}).json()["id"]
    client.post(f"/templates/{template_id}/publish")
    plain = {"from": "a@acme.dev", "to": "delivered@resend.dev", "subject": "S", "html": HTML}
    templated = {"to": "delivered@resend.dev", "template": {"id": template_id, "variables": {"VAR_1": "x"}}}
    client.post("/emails", json=plain)  # warm-up
    without = _timed(200, lambda: client.post("/emails", json=plain))
    with_template = _timed(200, lambda: client.post("/emails", json=templated))
    print(f"POST /emails plain html: {without * 1e3:.2f} ms; with template: {with_template * 1e3:.2f} ms;"
          f" ratio {with_template / without:.2f}")


def bench_list(client: TestClient) -> None:
    figures, created = [], 0
    for target in (100, 2000):
        for n in range(created, target):
            client.post("/templates", json={"name": f"t{n}", "html": "<p>x</p>"})
        created = target
        figures.append((target, _timed(300, lambda: client.get("/templates"))))
    (small, small_t), (large, large_t) = figures
    print(f"GET /templates (20 per page): {small_t * 1e3:.2f} ms with {small} templates,"
          f" {large_t * 1e3:.2f} ms with {large}; ratio {large_t / small_t:.2f}")


def main() -> None:
    bench_render()
    with _client() as client:
        bench_send(client)
    with _client() as client:
        bench_list(client)


if __name__ == "__main__":
    main()
