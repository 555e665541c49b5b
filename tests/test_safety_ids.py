"""Ids never collide: every id sequence (request logs included) survives reset, snapshot restore and a
restart with a file database (issue 11: one sequence used to turn every later request into a 500)."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings


def walk(client: TestClient, snapshot: Path) -> list[int]:
    """GET; reset; GET ×2; snapshot save; snapshot restore; then a few more requests."""
    statuses = [client.get("/emails").status_code]
    statuses.append(client.post("/_emulator/reset").status_code)
    statuses += [client.get("/emails").status_code for _ in range(2)]
    statuses.append(client.post("/_emulator/snapshot/save", json={"path": str(snapshot)}).status_code)
    statuses.append(client.post("/_emulator/snapshot/restore", json={"path": str(snapshot)}).status_code)
    statuses += [client.get("/emails").status_code for _ in range(3)]
    statuses.append(client.post("/emails", json={"from": "a@acme.dev", "to": "b@example.org", "subject": "s",
                                                 "text": "t"}).status_code)
    return statuses


def log_ids(client: TestClient) -> list[str]:
    return [item["id"] for item in client.get("/logs?limit=100").json()["data"]]


def test_the_sequence_in_memory(tmp_path: Path) -> None:
    with api_client(make_settings()) as client:
        assert walk(client, tmp_path / "s.db") == [200] * 10
        ids = log_ids(client)
        assert len(ids) == len(set(ids)) >= 5


def test_the_sequence_with_a_file_database_and_a_restart(tmp_path: Path) -> None:
    database = str(tmp_path / "state.db")
    with api_client(make_settings(db=database)) as client:
        assert walk(client, tmp_path / "s.db") == [200] * 10
        before = log_ids(client)
    with api_client(make_settings(db=database)) as client:
        assert [client.get("/emails").status_code for _ in range(3)] == [200] * 3
        client.post("/_emulator/reset")
        assert [client.get("/domains").status_code for _ in range(2)] == [200] * 2
        assert set(log_ids(client)).isdisjoint(before)  # the reset emptied the log; new ids are new
    with api_client(make_settings(db=database)) as client:
        assert client.get("/emails").status_code == 200
        ids = log_ids(client)
        assert len(ids) == len(set(ids))
