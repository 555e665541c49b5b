"""Shared fixtures: an app per test (fresh in-memory state) driven through httpx (Starlette's TestClient)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.config import Settings

KEY = "re_test_123"
AUTH = {"Authorization": f"Bearer {KEY}"}
FROZEN_AT = datetime(2026, 5, 14, 9, 0, 0, tzinfo=UTC)


def make_settings(**overrides: object) -> Settings:
    values: dict[str, object] = {"api_keys": [KEY], "clock": "frozen", "clock_start": FROZEN_AT,
                                 "smtp": False, "seed": 0}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings() -> Settings:
    return make_settings()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as test_client:
        yield test_client


def flush(client: TestClient) -> None:
    assert client.post("/_emulator/flush").status_code == 200
