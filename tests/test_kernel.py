"""Cross-cutting kernel behaviour: routing errors, bodies, headers, control plane, transactions."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings


def test_unknown_path_is_404_not_found(client: TestClient) -> None:
    response = client.get("/nope")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "The requested endpoint does not exist.",
                                "name": "not_found"}


def test_wrong_method_is_405(client: TestClient) -> None:
    response = client.put("/domains", json={})
    assert response.status_code == 405
    assert response.json() == {"statusCode": 405, "name": "method_not_allowed",
                               "message": "Method is not allowed for the requested path."}


def test_malformed_json_is_400_validation_error(client: TestClient) -> None:
    response = client.post("/domains", content=b"{not json", headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["name"]) == (400, "validation_error")


def test_non_object_body_is_400(client: TestClient) -> None:
    response = client.post("/domains", json=["a", "b"])
    assert (response.status_code, response.json()["name"]) == (400, "validation_error")


def test_empty_body_with_json_content_type_is_accepted_on_any_method(client: TestClient) -> None:
    domain_id = client.post("/domains", json={"name": "acme.dev"}).json()["id"]
    headers = {"content-type": "application/json"}
    assert client.post(f"/domains/{domain_id}/verify", content=b"", headers=headers).status_code == 200
    assert client.request("GET", "/domains", json={}).status_code == 200
    assert client.request("DELETE", f"/domains/{domain_id}", json={}).status_code == 200


def test_oversize_body_is_refused_cleanly() -> None:
    settings = make_settings(max_body_bytes=1024)
    with api_client(settings) as client:
        response = client.post("/domains", json={"name": "a.dev", "pad": "x" * 2048})
        assert response.status_code == 413
        assert response.json()["message"] == "The request body is too large."
        assert client.get("/domains").json()["data"] == []


def test_success_bodies_never_carry_status_code_and_are_json(client: TestClient) -> None:
    response = client.post("/domains", json={"name": "acme.dev"})
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert "statusCode" not in response.json()


def test_rate_limit_headers_on_every_response(client: TestClient) -> None:
    for response in (client.get("/domains"), client.get("/nope/x", headers={"Authorization": ""}),
                     client.get("/domains", headers={"Authorization": ""})):
        if response.status_code == 404:
            continue  # unknown routes never reach the API pipeline
        assert response.headers["ratelimit-limit"] == "10"
        assert response.headers["ratelimit-policy"] == "10;w=1"
        assert int(response.headers["ratelimit-remaining"]) >= 0
        assert int(response.headers["ratelimit-reset"]) >= 1


def test_rate_limit_enforcement_switch() -> None:
    with api_client(make_settings(rate_limit=2)) as client:
        statuses = [client.get("/domains") for _ in range(6)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited, [r.status_code for r in statuses]
        assert limited[0].json()["name"] == "rate_limit_exceeded"
        assert limited[0].headers["retry-after"] == "1"
        assert limited[0].headers["ratelimit-remaining"] == "0"


def test_reset_returns_to_a_fresh_state_with_the_same_ids(client: TestClient) -> None:
    first = client.post("/domains", json={"name": "acme.dev"}).json()
    assert client.post("/_emulator/reset").json() == {"reset": True}
    assert client.get("/domains").json()["data"] == []
    again = client.post("/domains", json={"name": "acme.dev"}).json()
    assert again == first
    assert client.get("/domains").status_code == 200  # the configured key still works


def test_clock_freeze_set_advance(client: TestClient) -> None:
    assert client.get("/_emulator/clock").json() == {"mode": "frozen", "now": "2026-05-14T09:00:00.000000Z"}
    state = client.post("/_emulator/clock/advance", json={"hours": 1, "minutes": 30}).json()
    assert state["now"] == "2026-05-14T10:30:00.000000Z"
    state = client.post("/_emulator/clock/set", json={"at": "2026-06-01T00:00:00Z"}).json()
    assert state["now"] == "2026-06-01T00:00:00.000000Z"
    created = client.post("/domains", json={"name": "acme.dev"}).json()
    assert created["created_at"] == "2026-06-01 00:00:00+00"
    assert client.post("/_emulator/clock/unfreeze").json()["mode"] == "real"


def test_clock_rejects_bad_input(client: TestClient) -> None:
    assert client.post("/_emulator/clock/set", json={"at": "yesterday"}).status_code == 422
    assert client.post("/_emulator/clock/advance", json={"seconds": -5}).status_code == 422
    json_type = {"content-type": "application/json"}
    assert client.post("/_emulator/clock/advance", content=b"[", headers=json_type).status_code == 400
    # Without a type a cross-site page could have sent it: refused before it is read (issue 11).
    assert client.post("/_emulator/clock/advance", content=b"[").status_code == 415


def test_concurrent_requests_never_interleave_inside_a_transaction(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def bump() -> None:
        async with emu.transaction("default") as tx:
            row = await tx.one("SELECT COUNT(*) AS n FROM accounts")
            await asyncio.sleep(0)  # yield to the other coroutines mid-transaction
            await tx.run("INSERT INTO accounts (id, created_at) VALUES (?, ?)",
                         (f"acct{row['n']}", tx.now_db))

    async def run_all() -> int:
        await asyncio.gather(*(bump() for _ in range(20)))
        async with emu.transaction("default") as tx:
            return (await tx.one("SELECT COUNT(*) AS n FROM accounts"))["n"]  # type: ignore[index, no-any-return]

    assert client.portal.call(run_all) == 21  # type: ignore[union-attr]


def test_back_to_back_transactions_let_other_tasks_run(client: TestClient) -> None:
    """Statements run on the loop's thread without suspending; each transaction still yields first,
    so one task's burst of transactions (events, a broadcast) does not starve the others."""
    emu = client.app.state.emu  # type: ignore[attr-defined]
    order: list[str] = []

    async def burst(name: str) -> None:
        for _ in range(5):
            async with emu.transaction("default") as tx:
                await tx.one("SELECT 1")
                order.append(name)

    async def both() -> None:
        await asyncio.gather(burst("a"), burst("b"))

    client.portal.call(both)  # type: ignore[union-attr]
    assert order == ["a", "b"] * 5


def test_a_failed_request_writes_nothing(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def failing() -> None:
        async with emu.transaction("default") as tx:
            await tx.run("INSERT INTO accounts (id, created_at) VALUES ('half', 'x')")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        client.portal.call(failing)  # type: ignore[union-attr]

    async def count() -> int:
        async with emu.transaction("default") as tx:
            return len(await tx.all("SELECT id FROM accounts WHERE id = 'half'"))

    assert client.portal.call(count) == 0  # type: ignore[union-attr]


def test_file_database_persists_across_restarts(tmp_path: object) -> None:
    path = f"{tmp_path}/state.db"
    with api_client(make_settings(db=path)) as client:
        created = client.post("/domains", json={"name": "acme.dev"}).json()
    with api_client(make_settings(db=path)) as client:
        assert client.get(f"/domains/{created['id']}").json()["name"] == "acme.dev"
        second = client.post("/domains", json={"name": "other.dev"}).json()
        assert second["id"] != created["id"]


def test_a_database_file_is_checkpointed_off_the_request_path(tmp_path: object,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """core/checkpoint.py: every CHECKPOINT_EVERY commits a thread copies the WAL into the file."""
    monkeypatch.setattr("emulator.core.checkpoint.CHECKPOINT_EVERY", 5)
    path = f"{tmp_path}/state.db"
    mail = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "Hi", "text": "x"}
    with api_client(make_settings(db=path)) as client:
        database = client.app.state.emu.db  # type: ignore[attr-defined]
        empty = Path(path).stat().st_size
        sent = [client.post("/emails", json=mail).json()["id"] for _ in range(30)]
        client.portal.call(database.checkpointer.wait)  # type: ignore[union-attr]
        assert database.checkpointer.done >= 1
        assert Path(path).stat().st_size > empty  # pages reached the file itself, not only the log
        with sqlite3.connect(path) as other:  # a second reader sees every acknowledged send
            stored = {row[0] for row in other.execute("SELECT id FROM emails")}
        assert stored == set(sent)
    assert database.checkpointer is None  # closed with the database
