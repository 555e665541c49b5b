"""API fault injection (/_emulator/faults) and the real rate limit (--rate-limit)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import resend
from resend.exceptions import ApplicationError, RateLimitError, ResendError
from starlette.testclient import TestClient

from emulator.api import ratelimit
from emulator.testing import EmulatorServer
from tests.conftest import KEY, api_client, make_settings

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Hi", "html": "<p>Hi</p>"}
RATE_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy")


def add_rule(client: TestClient, **rule: Any) -> dict[str, Any]:
    response = client.post("/_emulator/faults", json=rule)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(smtp=False), port=0) as running:
        yield running


@pytest.fixture
def sdk(server: EmulatorServer) -> Iterator[EmulatorServer]:
    server.reset()
    with server.patch_env():
        yield server


def test_next_two_sends_get_429_then_the_sdk_succeeds(sdk: EmulatorServer) -> None:
    sdk.faults.rate_limit("POST", "/emails", times=2)
    for _ in range(2):
        with pytest.raises(RateLimitError) as raised:
            resend.Emails.send(MAIL)  # type: ignore[arg-type]
        error = raised.value
        assert (error.code, error.error_type) == (429, "rate_limit_exceeded")
        assert error.headers["retry-after"] == "1"
        assert error.headers["ratelimit-remaining"] == "0"
        assert error.headers["ratelimit-policy"] == "10;w=1"
        assert all(name in error.headers for name in RATE_HEADERS)
        assert error.headers["x-emulator-fault"] == "fault_1"
    sent = resend.Emails.send(MAIL)  # type: ignore[arg-type]
    assert sent["id"]
    assert "x-emulator-fault" not in sent["http_headers"]
    assert [email["id"] for email in sdk.outbox.list()] == [sent["id"]]
    rule = sdk.faults.list()[0]
    assert (rule["matched"], rule["remaining"]) == (2, 0)


def test_500_and_503_come_from_the_catalogue(sdk: EmulatorServer) -> None:
    sdk.faults.add("GET", "/domains", error="application_error")
    sdk.faults.add("GET", "/domains", error="service_unavailable", retry_after=30)
    with pytest.raises(ApplicationError) as crashed:
        resend.Domains.list()
    assert crashed.value.message == "An unexpected error occurred."
    with pytest.raises(ResendError) as unavailable:
        resend.Domains.list()
    assert (unavailable.value.code, unavailable.value.error_type) == (503, "service_unavailable")
    assert unavailable.value.headers["retry-after"] == "30"
    assert resend.Domains.list()["data"] == []


def test_delay_holds_the_answer_and_marks_it(sdk: EmulatorServer) -> None:
    rule = sdk.faults.add("GET", "/api-keys", delay_ms=150)
    started = time.perf_counter()
    response = httpx.get(f"{sdk.url}/api-keys", headers={"Authorization": f"Bearer {KEY}"})
    assert time.perf_counter() - started >= 0.15
    assert response.status_code == 200
    assert response.headers["x-emulator-fault"] == rule["id"]


def test_rule_matches_globs_templates_and_methods(client: TestClient) -> None:
    add_rule(client, method="DELETE", path="/domains/*", error="application_error", times=None)
    add_rule(client, method="*", path="/api-keys/{api_key_id}", error="service_unavailable")
    assert client.get("/domains").status_code == 200
    assert client.delete("/domains/abc").status_code == 500
    assert client.delete("/domains/def").status_code == 500
    assert client.patch("/api-keys/xyz", json={"name": "n"}).status_code == 503
    assert client.patch("/api-keys/xyz", json={"name": "n"}).status_code == 404


def test_rule_for_one_account_leaves_others_alone() -> None:
    with api_client(make_settings(isolate_keys=True)) as client:
        add_rule(client, method="GET", path="/domains", error="rate_limit_exceeded", api_key="re_team_a")
        other = client.get("/domains", headers={"Authorization": "Bearer re_team_b"})
        mine = client.get("/domains", headers={"Authorization": "Bearer re_team_a"})
    assert (other.status_code, mine.status_code) == (200, 429)


def test_faulted_request_still_needs_a_valid_key(client: TestClient) -> None:
    add_rule(client, method="GET", path="/domains", error="application_error")
    assert client.get("/domains", headers={"Authorization": "Bearer re_unknown"}).status_code == 403
    assert client.get("/domains").status_code == 500


def test_list_remove_clear_and_reset(client: TestClient) -> None:
    first = add_rule(client, method="POST", path="/emails", error="rate_limit_exceeded", times=3)
    add_rule(client, path="/domains", status=500)
    assert [rule["id"] for rule in client.get("/_emulator/faults").json()["data"]] == ["fault_1", "fault_2"]
    assert first == {"object": "api_fault", "id": "fault_1", "method": "POST", "path": "/emails",
                     "remaining": 3, "delay_ms": 0, "status": 429, "error": "rate_limit_exceeded",
                     "message": None, "retry_after": None, "account": None, "matched": 0}
    assert client.delete("/_emulator/faults/fault_1").json()["deleted"] is True
    assert client.delete("/_emulator/faults/fault_1").status_code == 404
    assert len(client.get("/_emulator/faults").json()["data"]) == 1
    client.post("/_emulator/reset")
    assert client.get("/_emulator/faults").json()["data"] == []
    add_rule(client, path="/domains", status=500)
    client.delete("/_emulator/faults")
    assert client.get("/domains").status_code == 200


def test_custom_message_replaces_the_catalogue_text(client: TestClient) -> None:
    add_rule(client, method="GET", path="/domains", error="application_error", message="Database on fire.")
    assert client.get("/domains").json() == {"statusCode": 500, "message": "Database on fire.",
                                             "name": "application_error"}


@pytest.mark.parametrize(("rule", "complaint"), [
    ({"path": "/emails"}, "needs an `error`"),
    ({"path": "emails", "error": "application_error"}, "`path` must be"),
    ({"path": "/emails", "error": "no_such_error"}, "`error` must name"),
    ({"path": "/emails", "error": "validation_error"}, "give `status`"),
    ({"path": "/emails", "status": 418}, "No Resend error has status 418"),
    ({"path": "/emails", "error": "application_error", "times": 0}, "`times`"),
    ({"path": "/emails", "delay_ms": -1}, "`delay_ms`"),
    ({"path": "/emails", "error": "application_error", "method": "FETCH"}, "`method`"),
    ({"path": "/emails", "error": "application_error", "api_key": "re_nobody"}, "Unknown `api_key`"),
])
def test_bad_rules_are_refused_with_422(client: TestClient, rule: dict[str, Any], complaint: str) -> None:
    response = client.post("/_emulator/faults", json=rule)
    assert response.status_code == 422
    assert response.json()["name"] == "validation_error"
    assert complaint in response.json()["message"]


def test_validation_error_with_status_picks_the_400_kind(client: TestClient) -> None:
    add_rule(client, method="POST", path="/emails", error="validation_error", status=400)
    response = client.post("/emails", json=MAIL)
    assert (response.status_code, response.json()["name"]) == (400, "validation_error")


def test_real_rate_limit_answers_429_on_the_eleventh_request_in_a_second(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The window is real time (not the emulator clock): pin it so all 11 requests share one second.
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(monotonic=lambda: 1000.25))
    with api_client(make_settings(rate_limit=10)) as client:
        answers = [client.get("/domains") for _ in range(11)]
    assert [a.status_code for a in answers] == [200] * 10 + [429]
    assert [a.headers["ratelimit-remaining"] for a in answers[:3]] == ["9", "8", "7"]
    refused = answers[-1]
    assert refused.json()["name"] == "rate_limit_exceeded"
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["ratelimit-limit"] == "10"


def test_next_window_serves_again(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [2000.5]
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(monotonic=lambda: now[0]))
    with api_client(make_settings(rate_limit=2)) as client:
        first = [client.get("/domains").status_code for _ in range(3)]
        now[0] += 1
        second = client.get("/domains")
    assert first == [200, 200, 429]
    assert (second.status_code, second.headers["ratelimit-remaining"]) == (200, "1")
