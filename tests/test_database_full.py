"""A database with no room left (SQLITE_FULL: the in-memory database at its 1 GiB, or a full disk)
answers Resend's 500 shape with what to do, stores nothing of the request, and serves again once
there is room."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.app import create_app
from emulator.core.config import Settings

pytestmark = pytest.mark.anyio
HEADERS = {"Authorization": "Bearer re_full"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "file"])
async def client(request: pytest.FixtureRequest,
                 tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    db = ":memory:" if request.param == "memory" else str(tmp_path / "state.db")
    app = create_app(Settings(db=db, api_keys=["re_full"], smtp=False, quiet=True))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield http, app.state.emu.db.conn._conn


def email(subject: str, size: int = 0) -> dict[str, Any]:
    return {"from": "a@example.com", "to": ["delivered@resend.dev"], "subject": subject,
            "html": "<p>" + "x" * size + "</p>"}


async def test_a_full_database_refuses_the_write_with_a_clear_error(
        client: tuple[httpx.AsyncClient, Any]) -> None:
    http, raw = client
    first = await http.post("/emails", json=email("first"), headers=HEADERS)
    assert first.status_code == 200
    # SQLite's own limit of pages plays the part of a full memory or disk.
    raw.execute(f"PRAGMA max_page_count = {raw.execute('PRAGMA page_count').fetchone()['page_count']}")

    refused = await http.post("/emails", json=email("too big", 400_000), headers=HEADERS)

    assert refused.status_code == 500
    body = refused.json()
    assert body["name"] == "application_error" and body["statusCode"] == 500
    assert body["message"].startswith("The emulator's database is full")
    assert "--db FILE" in body["message"]
    listed = await http.get("/emails", headers=HEADERS)
    assert [item["subject"] for item in listed.json()["data"]] == ["first"]

    raw.execute("PRAGMA max_page_count = 1073741823")
    again = await http.post("/emails", json=email("after", 400_000), headers=HEADERS)
    assert again.status_code == 200
    listed = await http.get("/emails", headers=HEADERS)
    assert [item["subject"] for item in listed.json()["data"]] == ["after", "first"]
