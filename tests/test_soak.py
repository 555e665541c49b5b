"""The short soak (issue 38): twenty seconds of the mixed load `make bench` runs for ten minutes
(benchmarks/soak.py) — API and SMTP sends, UI pages, searches, a slow receiver that fails every tenth
webhook call — against a `resend-emulator` process with `--db` and retention. Speed is the benchmark's
business; this checks that nothing fails, that retention bounds the stored mail, and that the webhooks
were called."""

from __future__ import annotations

from benchmarks import soak


def test_twenty_seconds_of_mixed_load_end_without_an_error_and_within_retention() -> None:
    result = soak.run(20, max_emails=60, max_age="8s")

    assert result.errors == [], result.summary()
    kinds = {kind for _, kind, _ in result.latencies}
    assert kinds == {"api", "smtp", "ui", "message", "search"}, result.summary()
    sent = sum(1 for _, kind, _ in result.latencies if kind in ("api", "smtp"))
    assert sent > result.max_emails, "the load must outgrow retention for the bound to mean anything"
    assert 0 < result.most_stored() <= result.stored_bound(), result.summary()
    assert result.samples[-1].received_by_hook > 0, result.summary()
