"""GET /_emulator/metrics (issue 38 item 5), read with Prometheus' own parser from a real server that
took mail over the API, SMTP and a broadcast, and delivered webhooks to one receiver that answers 200
and one that answers 500."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from emulator.testing.receiver import WebhookReceiver
from tests.contacts_helpers import contact, created, segment
from tests.smtp_helpers import LiveEmulator, transmit

P = "resend_emulator_"
SEND = {"from": "Acme <hello@acme.dev>", "to": ["ada@example.org"], "subject": "Hi", "text": "Hello"}


@pytest.fixture(scope="module")
def live() -> Iterator[LiveEmulator]:
    with LiveEmulator() as server:
        yield server


def scrape(live: LiveEmulator) -> dict[str, Metric]:
    response = live.http.get("/_emulator/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {family.name: family for family in text_string_to_metric_families(response.text)}


def values(family: Metric, label: str, suffix: str = "") -> dict[str, float]:
    return {sample.labels[label]: sample.value for sample in family.samples
            if sample.name == family.name + suffix}


def only(family: Metric) -> float:
    [sample] = family.samples
    return float(sample.value)


def send_everywhere(live: LiveEmulator) -> None:
    """3 emails over the API (one alone, a batch of two), 1 over SMTP, a broadcast to 2 contacts, and one
    send refused (422), which counts nowhere."""
    assert live.http.post("/emails", json=SEND).status_code == 200
    assert live.http.post("/emails/batch", json=[SEND, SEND]).status_code == 200
    assert live.http.post("/emails", json={"from": "hello@acme.dev"}).status_code == 422
    with live.starttls() as client:
        code, _ = transmit(client, b"Subject: Hi\r\n\r\nHello\r\n", "hello@acme.dev", ["bo@example.org"])
        assert code == 250
    segment_id = segment(live.http, "Everyone")
    for address in ("cy@example.org", "di@example.org"):
        contact_id = contact(live.http, address)
        assert live.http.post(f"/contacts/{contact_id}/segments/{segment_id}").status_code == 200
    broadcast_id = created(live.http.post("/broadcasts", json={
        "segment_id": segment_id, "from": "Acme <news@acme.dev>", "subject": "News", "html": "<p>News</p>"}))
    assert live.http.post(f"/broadcasts/{broadcast_id}/send").status_code == 200


def test_counters_count_mail_by_source_and_deliveries_by_outcome() -> None:
    # A server of its own: counters outlive a reset (Prometheus expects them only to go up).
    with LiveEmulator() as live, WebhookReceiver() as good, WebhookReceiver() as bad:
        bad.respond_with(500)
        for receiver in (good, bad):
            live.webhooks.register(receiver.url, ["email.sent"])
        send_everywhere(live)
        live.webhooks.flush()
        waiting = scrape(live)
        # Every one of the 6 emails went to both: 6 succeeded, 6 failed first attempts wait for a retry.
        accepted = values(waiting[P + "emails_accepted"], "source", "_total")
        assert accepted == {"api": 3, "smtp": 1, "broadcast": 2}
        deliveries = values(waiting[P + "webhook_deliveries"], "outcome", "_total")
        assert deliveries == {"succeeded": 6, "retrying": 6}
        assert only(waiting[P + "webhook_deliveries_pending"]) == 6
        assert values(waiting[P + "emails_stored"], "box") == {"sent": 6, "received": 0}
        # Past every retry (8 attempts over ~28 h): 7 retries and 1 final failure for each of the 6.
        assert live.http.post("/_emulator/clock/advance", json={"hours": 48}).status_code == 200
        live.webhooks.flush()
        done = scrape(live)
    assert values(done[P + "webhook_deliveries"], "outcome", "_total") == {
        "succeeded": 6, "retrying": 42, "failed": 6}
    assert only(done[P + "webhook_deliveries_pending"]) == 0
    assert len(bad.deliveries) == 48 and len(good.deliveries) == 6
    assert only(done[P + "database_bytes"]) > 0
    assert only(done[P + "uptime_seconds"]) >= 0 and only(done[P + "start_time_seconds"]) > 1.7e9


def test_requests_are_labelled_by_route_template_not_path(live: LiveEmulator) -> None:
    email_id = live.http.post("/emails", json=SEND).json()["id"]
    assert live.http.get(f"/emails/{email_id}").status_code == 200
    assert live.http.get("/no/such/path-123").status_code == 404
    assert live.http.get("/_emulator/ui/static/no-such-file.css").status_code == 404
    requests = scrape(live)[P + "http_requests"]
    labels = [sample.labels for sample in requests.samples]
    assert {"route": "/emails/{email_id}", "method": "GET", "status": "200"} in labels
    assert {"route": "/emails", "method": "POST", "status": "200"} in labels
    assert {"route": "unmatched", "method": "GET", "status": "404"} in labels
    assert {"route": "/_emulator/ui/static/{path}", "method": "GET", "status": "404"} in labels
    assert not [label for label in labels if email_id in label["route"] or "path-123" in label["route"]]


def test_histogram_buckets_are_cumulative_and_count_every_request(live: LiveEmulator) -> None:
    for _ in range(3):
        live.http.get("/domains")
    families = scrape(live)
    requests: dict[tuple[str, str], float] = defaultdict(float)
    for sample in families[P + "http_requests"].samples:
        requests[sample.labels["route"], sample.labels["method"]] += sample.value
    buckets: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    counts: dict[tuple[str, str], float] = {}
    durations = families[P + "http_request_duration_seconds"]
    for sample in durations.samples:
        key = sample.labels["route"], sample.labels["method"]
        if sample.name.endswith("_bucket"):
            buckets[key].append((float(sample.labels["le"]), sample.value))
        elif sample.name.endswith("_count"):
            counts[key] = sample.value
    assert counts == requests and counts["/domains", "GET"] >= 3
    for key, series in buckets.items():
        bounds = [bound for bound, _ in series]
        assert bounds == sorted(bounds) and bounds[0] == 0.0005 and bounds[-1] == float("inf")
        running = [value for _, value in series]
        assert running == sorted(running), key
        assert running[-1] == counts[key]


def test_metrics_lines_have_help_and_type(live: LiveEmulator) -> None:
    text = live.http.get("/_emulator/metrics").text
    families: dict[str, Any] = {family.name: family.type for family in text_string_to_metric_families(text)}
    assert families[P + "emails_accepted"] == "counter"
    assert families[P + "http_request_duration_seconds"] == "histogram"
    assert families[P + "jobs_pending"] == "gauge"
    for name in families:
        assert f"# HELP {name}" in text and f"# TYPE {name}" in text


def test_database_bytes_with_a_file_counts_the_file_and_its_log(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with LiveEmulator(db=str(path)) as server:
        assert server.http.post("/emails", json=SEND).status_code == 200
        reported = only(scrape(server)[P + "database_bytes"])
        on_disk = sum(os.path.getsize(name) for name in (path, f"{path}-wal") if os.path.exists(name))
    assert 0 < reported <= on_disk
