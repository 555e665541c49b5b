"""Every method of the official Python SDK's `OAuthGrants` (list, revoke, list_async, revoke_async) against a
real uvicorn server; each answer carries every field the SDK's types declare."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from functools import partial
from typing import Any

import httpx
import pytest
import resend
from resend.exceptions import ResendError
from resend.oauth_grants import OAuthGrant, OAuthGrantClient, OAuthGrants

from emulator.testing import EmulatorServer
from tests.oauth_helpers import bearer, consent, register, tokens
from tests.sdk_types import keys_declared
from tests.templates_helpers import plain, sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


declared = partial(keys_declared, every_key=True)  # every declared key, optional ones too


def grant_tokens(server: EmulatorServer, count: int) -> list[dict[str, Any]]:
    with httpx.Client(base_url=server.url) as http:
        consent(http, "approve")
        issued = []
        for index in range(count):
            client = register(http, client_name=f"Agent {index}", scope="emails:send")
            issued.append(tokens(http, client))
        return issued


def check_grant(grant: Any) -> None:
    declared(OAuthGrant, grant)
    declared(OAuthGrantClient, grant["client"])


def test_list_and_revoke(emulator: EmulatorServer) -> None:
    issued = grant_tokens(emulator, 2)
    listed = OAuthGrants.list()
    declared(OAuthGrants.ListResponse, listed)
    assert (listed["object"], listed["has_more"], len(listed["data"])) == ("list", False, 2)
    for grant in listed["data"]:
        check_grant(grant)
    assert [grant["client"]["name"] for grant in listed["data"]] == ["Agent 1", "Agent 0"]
    page = OAuthGrants.list({"limit": 1, "after": listed["data"][0]["id"]})
    assert (page["has_more"], page["data"][0]["id"]) == (False, listed["data"][1]["id"])
    revoked = OAuthGrants.revoke(listed["data"][1]["id"])
    declared(OAuthGrants.RevokeOAuthGrantResponse, revoked)
    assert plain(revoked) == {"object": "oauth_grant", "id": listed["data"][1]["id"],
                              "revoked_at": revoked["revoked_at"], "revoked_reason": "revoked_from_api"}
    with httpx.Client(base_url=emulator.url) as http:
        assert http.get("/domains", headers=bearer(issued[0]["access_token"])).status_code == 403
    with pytest.raises(ResendError) as refused:
        OAuthGrants.revoke(listed["data"][1]["id"])
    assert refused.value.code == 404


def test_list_async_and_revoke_async(emulator: EmulatorServer) -> None:
    grant_tokens(emulator, 1)

    async def run() -> tuple[Any, Any, Any]:
        listed = await OAuthGrants.list_async()
        revoked = await OAuthGrants.revoke_async(listed["data"][0]["id"])
        return listed, revoked, await OAuthGrants.list_async({"limit": 5})

    listed, revoked, after = asyncio.run(run())
    check_grant(listed["data"][0])
    declared(OAuthGrants.RevokeOAuthGrantResponse, revoked)
    assert after["data"][0]["revoked_reason"] == "revoked_from_api"
    assert after["data"][0]["revoked_at"] is not None


def test_an_access_token_works_as_the_sdk_key(emulator: EmulatorServer) -> None:
    """The SDK sends `Authorization: Bearer <key>`: an OAuth access token slots straight in."""
    full = grant_tokens(emulator, 1)[0]
    with httpx.Client(base_url=emulator.url) as http:
        consent(http, "approve")
        client = register(http)
        everything = tokens(http, client)
    with sdk_against(emulator.url, everything["access_token"]):
        assert plain(resend.Domains.list())["data"] == []
        assert len(OAuthGrants.list()["data"]) == 2
    with sdk_against(emulator.url, full["access_token"]), pytest.raises(ResendError) as refused:
        resend.Domains.list()
    assert (refused.value.code, refused.value.error_type) == (403, "invalid_permission")
