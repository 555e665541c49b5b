"""The official `resend` Python SDK against a real emulator process: every ApiKeys and Domains method."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import resend

from tests.conftest import running_cli


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with running_cli("--api-key", "re_test_123", "--clock", "frozen",
                     "--clock-start", "2026-05-14T09:00:00Z") as url:
        yield url


@pytest.fixture
def sdk(server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    httpx.post(f"{server_url}/_emulator/reset")
    monkeypatch.setattr(resend, "api_url", server_url)
    monkeypatch.setattr(resend, "api_key", "re_test_123")
    yield server_url


def test_api_keys_methods(sdk: str) -> None:
    created = resend.ApiKeys.create({"name": "Production"})
    assert created["token"].startswith("re_")
    listed = resend.ApiKeys.list()
    assert created["id"] in [key["id"] for key in listed["data"]]
    assert resend.ApiKeys.list({"limit": 1})["has_more"] is True
    updated = resend.ApiKeys.update({"id": created["id"], "name": "Renamed"})
    assert updated["id"] == created["id"]
    removed = resend.ApiKeys.remove(created["id"])
    assert removed["deleted"] is True
    with pytest.raises(resend.exceptions.ResendError) as raised:
        resend.ApiKeys.remove(created["id"])
    assert raised.value.code == 404


def test_domains_methods(sdk: str) -> None:
    created = resend.Domains.create({"name": "mail.acme.dev", "region": "eu-west-1"})
    assert created["status"] == "not_started" and len(created["records"]) == 3
    got = resend.Domains.get(created["id"])
    assert got["name"] == "mail.acme.dev" and got["region"] == "eu-west-1"
    assert [d["id"] for d in resend.Domains.list()["data"]] == [created["id"]]
    updated = resend.Domains.update({"id": created["id"], "open_tracking": True, "tls": "enforced"})
    assert updated["id"] == created["id"]
    assert resend.Domains.verify(created["id"])["id"] == created["id"]
    httpx.post(f"{sdk}/_emulator/flush")
    assert resend.Domains.get(created["id"])["status"] == "verified"
    assert resend.Domains.remove(created["id"])["deleted"] is True


def test_sdk_sees_resend_errors(sdk: str) -> None:
    with pytest.raises(resend.exceptions.ResendError) as raised:
        resend.Domains.create({"name": "x", "region": "mars-1"})  # type: ignore[typeddict-item]
    assert raised.value.code == 422
    resend.api_key = "re_not_a_key"
    with pytest.raises(resend.exceptions.ResendError) as denied:
        resend.Domains.list()
    assert denied.value.code == 403


def test_async_api_keys_and_domains_methods(sdk: str) -> None:
    async def scenario() -> None:
        key = await resend.ApiKeys.create_async({"name": "async"})
        assert key["id"] in [k["id"] for k in (await resend.ApiKeys.list_async())["data"]]
        await resend.ApiKeys.update_async({"id": key["id"], "name": "renamed"})
        assert (await resend.ApiKeys.remove_async(key["id"]))["deleted"] is True
        domain = await resend.Domains.create_async({"name": "async.acme.dev"})
        assert (await resend.Domains.get_async(domain["id"]))["name"] == "async.acme.dev"
        assert [d["id"] for d in (await resend.Domains.list_async())["data"]] == [domain["id"]]
        await resend.Domains.update_async({"id": domain["id"], "click_tracking": True})
        assert (await resend.Domains.verify_async(domain["id"]))["id"] == domain["id"]
        assert (await resend.Domains.remove_async(domain["id"]))["deleted"] is True

    asyncio.run(scenario())
