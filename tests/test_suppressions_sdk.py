"""Every method of the official Python SDK's Suppressions (with its Batch sub-API), sync and async, against a
real uvicorn server; each answer carries every field the SDK's types declare."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import resend
from resend.exceptions import ResendError
from resend.suppressions import BatchRemovedSuppression, BatchSuppression
from resend.suppressions._suppression import Suppression, SuppressionListItem
from resend.suppressions._suppressions import Suppressions

from emulator.testing import EmulatorServer
from tests.sdk_types import keys_declared as declared
from tests.templates_helpers import sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server



def test_suppressions_methods(emulator: EmulatorServer) -> None:
    added = declared(Suppressions.AddSuppressionResponse,
                     resend.Suppressions.add({"email": "ada@lovelace.dev"}))
    got = declared(Suppression, resend.Suppressions.get("ada@lovelace.dev"))
    assert got == {"object": "suppression", "id": added["id"], "email": "ada@lovelace.dev",
                   "origin": "manual", "source_id": None, "created_at": got["created_at"]}
    batch = declared(Suppressions.Batch.AddResponse,
                     resend.Suppressions.Batch.add({"emails": ["a@b.org", "c@d.org"]}))
    assert [declared(BatchSuppression, entry)["object"] for entry in batch["data"]] == ["suppression"] * 2
    listed = declared(Suppressions.ListResponse,
                      resend.Suppressions.list({"origin": "manual", "limit": 2}))
    emails = [declared(SuppressionListItem, item)["email"] for item in listed["data"]]
    assert (emails, listed["has_more"]) == (["c@d.org", "a@b.org"], True)
    removed = declared(Suppressions.Batch.RemoveResponse,
                       resend.Suppressions.Batch.remove({"ids": [batch["data"][0]["id"]]}))
    assert [declared(BatchRemovedSuppression, entry)["deleted"] for entry in removed["data"]] == [True]
    gone = declared(Suppressions.RemoveSuppressionResponse, resend.Suppressions.remove(added["id"]))
    assert gone == {"object": "suppression", "id": added["id"], "deleted": True}
    with pytest.raises(ResendError) as missing:
        resend.Suppressions.get(added["id"])
    assert missing.value.code == 404
    with pytest.raises(ResendError) as too_many:
        resend.Suppressions.Batch.add({"emails": [f"u{n}@example.org" for n in range(101)]})
    assert (too_many.value.code, too_many.value.error_type) == (422, "validation_error")


def test_async_methods(emulator: EmulatorServer) -> None:
    async def scenario() -> None:
        added = await resend.Suppressions.add_async({"email": "ada@lovelace.dev"})
        assert (await resend.Suppressions.get_async(added["id"]))["email"] == "ada@lovelace.dev"
        await resend.Suppressions.Batch.add_async({"emails": ["a@b.org"]})
        assert len((await resend.Suppressions.list_async())["data"]) == 2
        await resend.Suppressions.Batch.remove_async({"emails": ["a@b.org"]})
        assert (await resend.Suppressions.remove_async("ada@lovelace.dev"))["deleted"] is True
        assert (await resend.Suppressions.list_async())["data"] == []

    asyncio.run(scenario())
