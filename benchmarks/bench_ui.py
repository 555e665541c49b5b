"""Outbox UI at scale: time to render list pages (first, deep, search, status, tag) at 1 000 and
100 000 stored emails. Keyset paging should keep the deep page as cheap as the first one; searches go
through the FTS5 index (the rows inserted here are indexed by its trigger like any send)."""

from __future__ import annotations

import re
import statistics
import time

from starlette.testclient import TestClient

from benchmarks import targets
from emulator.app import create_app
from emulator.core.config import Settings

KEY = "re_bench_ui"
UI = "/_emulator/ui"
COLUMNS = ("account, key_id, source, from_addr, to_addrs, cc, bcc, reply_to, subject, html, text, headers, "
           "tags, scheduled_at, last_event, template_id, topic_id, broadcast_id, message_id, eml, created_at")


def _grow(client: TestClient, total: int) -> None:
    """Clone one real email (sent through the API) until `total` rows exist: ids, recipients, subjects
    and statuses vary per row so filters have something to find."""
    emu = client.app.state.emu  # type: ignore[attr-defined]
    have = int(client.get(f"{UI}/rows/outbox").json()["count"])
    need = total - have
    if need <= 0:
        return
    status = "CASE WHEN n % 10 = 3 THEN 'bounced' ELSE 'delivered' END"
    source = COLUMNS.replace("to_addrs", "json_array('user' || n || '@example.dev')") \
        .replace("subject", "'Digest #' || n").replace("last_event", status)
    numbers = f"SELECT {have} UNION ALL SELECT n + 1 FROM seqn WHERE n < {total - 1}"
    sql = (f"WITH RECURSIVE seqn(n) AS ({numbers}) INSERT INTO emails (id, {COLUMNS}) "
           f"SELECT printf('%08d-0000-4000-8000-000000000000', n), {source} "
           "FROM seqn, (SELECT * FROM emails ORDER BY seq LIMIT 1)")

    async def insert() -> None:
        async with emu.transaction("default") as tx:
            await tx.run(sql)

    client.portal.call(insert)  # type: ignore[union-attr]


def _median_ms(client: TestClient, url: str, rounds: int = 15) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return statistics.median(samples)


def _deep_url(client: TestClient, pages: int) -> str:
    url = f"{UI}/"
    for _ in range(pages):
        found = re.search(r'href="([^"]+)" rel="next"', client.get(url).text)
        assert found is not None
        url = found.group(1).replace("&amp;", "&")
    return url


def main() -> None:
    settings = Settings(api_keys=[KEY], clock="frozen", smtp=False, allowed_hosts=["testserver"])
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {KEY}"}) as client:
        response = client.post("/emails", json={"from": "a@resend.dev", "to": ["delivered@resend.dev"],
                                                "subject": "seed", "text": "x", "tags": [{"name": "plan",
                                                                                          "value": "pro"}]})
        assert response.status_code == 200
        results: dict[int, dict[str, float]] = {}
        for total in (1_000, 100_000):
            started = time.perf_counter()
            _grow(client, total)
            print(f"{total:>7} emails stored ({time.perf_counter() - started:.1f} s)")
            deep = _deep_url(client, 10)
            cases = {
                "first page": f"{UI}/", "page 11 (keyset)": deep, "search 'user77@'": f"{UI}/?q=user77@",
                "search to:…": f"{UI}/?q=to:user77@example.dev",
                "search status: tag:": f"{UI}/?q=status:bounced+tag:plan:pro",
                "status=bounced": f"{UI}/?status=bounced", "tag=plan:pro": f"{UI}/?tag=plan:pro",
                "live rows": f"{UI}/rows/outbox",
            }
            results[total] = {name: _median_ms(client, url) for name, url in cases.items()}
            for name, ms in results[total].items():
                print(f"  {name:<18} {ms:7.1f} ms")
        search = results[100_000]["search 'user77@'"]
        targets.record("outbox UI search, 100 000 emails", f"{search:.1f} ms", "< 10 ms", search < 10)
        print("ratio 100k / 1k:")
        for name in results[1_000]:
            print(f"  {name:<18} {results[100_000][name] / results[1_000][name]:6.1f}x")


if __name__ == "__main__":
    main()
