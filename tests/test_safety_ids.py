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


def test_ids_are_the_seeded_hash_shaped_as_uuid4() -> None:
    # The scheme every stored id depends on (a snapshot, a file database, a test pinning ids): the first
    # bytes of SHAKE-256 over `seed:stream:n`, with the version-4 and variant bits set as the uuid module
    # sets them.
    import hashlib
    import uuid

    from emulator.core.ids import IdFactory

    def expected(seed: int, stream: str, number: int) -> str:
        digest = hashlib.shake_256(f"{seed}:{stream}:{number}".encode()).digest(16)
        return str(uuid.UUID(bytes=digest, version=4))

    for seed, stream in ((0, ""), (7, "log")):
        ids = IdFactory(seed, stream=stream)
        assert [ids.uuid() for _ in range(300)] == [expected(seed, stream, n) for n in range(1, 301)]
    isolated = IdFactory(3)
    with isolated.account_scope("acct_1"):
        assert isolated.uuid() == expected(3, "@acct_1", 1)
