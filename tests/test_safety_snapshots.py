"""Snapshots write only where asked and only snapshots (issue 11): no other file is overwritten, a
directory is refused, nothing `.partial` is left behind, a refusal says nothing about what exists, and
--snapshot-dir confines both routes."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from emulator.control import snapshots
from emulator.core.config import Settings
from tests.conftest import api_client, make_settings

SAVE, RESTORE = "/_emulator/snapshot/save", "/_emulator/snapshot/restore"


def _cannot_write(path: Path | str) -> dict[str, object]:
    return {"statusCode": 422, "name": "validation_error",
            "message": f"Cannot write a snapshot to `{path}`: give a new file in an existing directory"
                       " (inside --snapshot-dir when set), or an emulator snapshot to replace."}


def _no_snapshot(path: Path | str) -> dict[str, object]:
    return {"statusCode": 422, "name": "validation_error", "message": f"No emulator snapshot at `{path}`."}


def _foreign_database(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a table name is not enough
        conn.execute("INSERT INTO meta VALUES ('owner', 'another app')")


def _leftovers(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if "partial" in name)


@pytest.mark.parametrize("kind", ["text", "sqlite", "directory", "missing-dir"])
def test_save_refuses_anything_but_a_new_file_or_a_snapshot(client: TestClient, tmp_path: Path,
                                                            kind: str) -> None:
    target = tmp_path / "thesis.tex" if kind != "missing-dir" else tmp_path / "nope" / "state.db"
    if kind == "text":
        target.write_bytes(b"\\documentclass{article} years of work")
    elif kind == "sqlite":
        _foreign_database(target)
    elif kind == "directory":
        target.mkdir()
    before = target.read_bytes() if target.is_file() else None
    response = client.post(SAVE, json={"path": str(target)})
    assert response.json() == _cannot_write(target)
    assert (target.read_bytes() if target.is_file() else None) == before
    assert target.is_dir() == (kind == "directory")
    assert _leftovers(tmp_path) == []


def test_the_refusal_is_the_same_whether_the_path_exists_or_not(client: TestClient, tmp_path: Path) -> None:
    existing = tmp_path / "a" / "secret.txt"
    existing.parent.mkdir()
    existing.write_text("x")
    missing_dir = tmp_path / "b" / "secret.txt"
    answers = [client.post(SAVE, json={"path": str(path)}).json()["message"].replace(str(path), "P")
               for path in (existing, missing_dir, existing.parent)]
    assert len(set(answers)) == 1, answers
    for path in (existing, tmp_path / "nothing.db", existing.parent):
        assert client.post(RESTORE, json={"path": str(path)}).json() == _no_snapshot(path)


def test_save_replaces_a_snapshot_or_an_empty_file_and_leaves_nothing_behind(client: TestClient,
                                                                            tmp_path: Path) -> None:
    empty = tmp_path / "made-by-mktemp"
    empty.touch()
    assert client.post(SAVE, json={"path": str(empty)}).status_code == 200
    assert client.post("/domains", json={"name": "second.dev"}).status_code == 201
    assert client.post(SAVE, json={"path": str(empty)}).status_code == 200
    assert snapshots.is_snapshot(empty)
    assert stat.S_IMODE(empty.stat().st_mode) == 0o600  # it holds API keys and webhook secrets
    assert _leftovers(tmp_path) == []
    assert client.post(RESTORE, json={"path": str(empty)}).json() == {"path": str(empty), "restored": True}
    assert [row["name"] for row in client.get("/domains").json()["data"]] == ["second.dev"]


def test_a_failed_write_leaves_no_partial_file(client: TestClient, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(source: str, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshots.os, "replace", full_disk)
    response = client.post(SAVE, json={"path": str(tmp_path / "state.db")})
    assert response.json() == {"statusCode": 422, "name": "validation_error",
                               "message": f"Could not write the snapshot to `{tmp_path / 'state.db'}`:"
                                          " [Errno 28] No space left on device."}
    assert os.listdir(tmp_path) == []


@pytest.fixture
def confined(tmp_path: Path) -> Settings:
    (tmp_path / "snaps").mkdir()
    return make_settings(snapshot_dir=str(tmp_path / "snaps"))


def test_snapshot_dir_takes_relative_paths_and_refuses_everything_outside(confined: Settings,
                                                                         tmp_path: Path) -> None:
    folder = tmp_path / "snaps"
    outside = tmp_path / "outside.db"
    (folder / "escape").symlink_to(tmp_path)
    with api_client(confined) as client:
        saved = client.post(SAVE, json={"path": "base.db"})
        assert saved.json() == {"path": str(folder / "base.db"), "bytes": (folder / "base.db").stat().st_size}
        assert client.post(SAVE, json={"path": str(outside)}).json() == _cannot_write(outside)
        for escape in ("../outside.db", "escape/outside.db", "."):
            assert client.post(SAVE, json={"path": escape}).json() == _cannot_write(escape)
        assert not outside.exists()
        # The same refusal whether the outside file exists (and is a real snapshot) or not.
        os.link(folder / "base.db", outside)
        assert client.post(RESTORE, json={"path": str(outside)}).json() == _no_snapshot(outside)
        assert client.post(RESTORE, json={"path": str(tmp_path / "gone.db")}).json() == _no_snapshot(
            tmp_path / "gone.db")
        assert client.post(RESTORE, json={"path": "base.db"}).json()["restored"] is True


def test_snapshot_dir_is_a_documented_flag() -> None:
    from emulator.cli import build_parser, parse_settings

    assert "[env RESEND_EMULATOR_SNAPSHOT_DIR]" in " ".join(build_parser().format_help().split())
    assert parse_settings(["--snapshot-dir", "/tmp/snaps"]).snapshot_dir == "/tmp/snaps"
