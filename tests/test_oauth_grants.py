"""`POST /oauth/revoke` (RFC 7009) and the grants API (`GET /oauth/grants`, `DELETE /oauth/grants/{id}`):
revoking a grant stops every token of it at once; bodies validate against Resend's OpenAPI schemas."""

from __future__ import annotations

import httpx
import pytest
from starlette.testclient import TestClient

from tests.oauth_helpers import (
    NO_KEY,
    Client,
    authenticated,
    bearer,
    consent,
    oauth_error,
    refresh,
    register,
    tokens,
)
from tests.openapi_oracle import check


@pytest.fixture
def http(client: TestClient) -> TestClient:
    consent(client, "approve")
    return client


def revoke(http: TestClient, client: Client, **fields: str) -> httpx.Response:
    body, headers = authenticated(client, fields)
    return http.post("/oauth/revoke", data=body, headers=headers)


@pytest.mark.parametrize("method", ["none", "client_secret_basic", "client_secret_post"])
def test_revoke_with_the_refresh_token_ends_the_whole_grant(http: TestClient, method: str) -> None:
    client = register(http, method)
    issued = tokens(http, client)
    response = revoke(http, client, token=issued["refresh_token"], token_type_hint="refresh_token")
    assert (response.status_code, response.content) == (200, b"")
    assert http.get("/domains", headers=bearer(issued["access_token"])).status_code == 403
    oauth_error(refresh(http, client, issued["refresh_token"]), 400, "invalid_grant")
    grant = http.get("/oauth/grants").json()["data"][0]
    assert (grant["revoked_at"], grant["revoked_reason"]) == ("2026-05-14 09:00:00+00", "revoked_by_client")


def test_revoke_of_an_unknown_or_foreign_token_is_a_silent_success(http: TestClient) -> None:
    owner, other = register(http), register(http)
    issued = tokens(http, owner)
    assert revoke(http, other, token="nope").status_code == 200
    assert revoke(http, other, token=issued["refresh_token"]).status_code == 200
    assert http.get("/domains", headers=bearer(issued["access_token"])).status_code == 200


def test_revoke_refuses_an_access_token_hint(http: TestClient) -> None:
    client = register(http)
    issued = tokens(http, client)
    response = revoke(http, client, token=issued["access_token"], token_type_hint="access_token")
    assert oauth_error(response, 400, "invalid_request") == \
        "Access tokens cannot be revoked; revoke the refresh token instead."


def test_revoke_errors(http: TestClient) -> None:
    public, confidential = register(http), register(http, "client_secret_basic")
    oauth_error(revoke(http, public), 400, "invalid_request")
    no_client = http.post("/oauth/revoke", data={"token": "x"}, headers=NO_KEY)
    assert oauth_error(no_client, 400, "invalid_request") == "Missing required parameter `client_id`."
    body, headers = authenticated(confidential, {"token": "x", "client_secret": "again"})
    both = http.post("/oauth/revoke", data=body, headers=headers)
    oauth_error(both, 400, "invalid_request")
    body = {"token": "x", "client_id": confidential.client_id}
    wrong = http.post("/oauth/revoke", data=body, headers=NO_KEY)
    oauth_error(wrong, 401, "invalid_client")


def test_list_grants_whole_body_newest_first_and_valid(http: TestClient) -> None:
    first = register(http, scope="emails:send", logo_uri="https://acme.example/logo.png")
    tokens(http, first)
    http.post("/_emulator/clock/advance", json={"seconds": 1})
    second = register(http)
    tokens(http, second)
    body = http.get("/oauth/grants").json()
    check("ListOAuthGrantsResponse", body)
    ids = [grant["id"] for grant in body["data"]]
    assert body == {"object": "list", "has_more": False, "data": [
        {"id": ids[0], "client_id": second.client_id, "scopes": ["emails:send", "full_access"],
         "created_at": "2026-05-14 09:00:01+00", "revoked_at": None, "revoked_reason": None,
         "client": {"name": "Acme CLI", "logo_uri": None}},
        {"id": ids[1], "client_id": first.client_id, "scopes": ["emails:send"],
         "created_at": "2026-05-14 09:00:00+00", "revoked_at": None, "revoked_reason": None,
         "client": {"name": "Acme CLI", "logo_uri": "https://acme.example/logo.png"}},
    ]}
    page = http.get("/oauth/grants", params={"limit": 1}).json()
    assert (page["has_more"], [g["id"] for g in page["data"]]) == (True, ids[:1])
    after = http.get("/oauth/grants", params={"limit": 1, "after": ids[0]}).json()
    assert (after["has_more"], [g["id"] for g in after["data"]]) == (False, ids[1:])
    assert http.get("/oauth/grants", params={"limit": 0}).status_code == 422


def test_delete_grant_revokes_it_and_a_second_delete_is_404(http: TestClient) -> None:
    client = register(http)
    issued = tokens(http, client)
    grant_id = http.get("/oauth/grants").json()["data"][0]["id"]
    http.post("/_emulator/clock/advance", json={"seconds": 2.5})
    response = http.delete(f"/oauth/grants/{grant_id}")
    assert response.status_code == 200
    assert response.json() == {"object": "oauth_grant", "id": grant_id,
                               "revoked_at": "2026-05-14T09:00:02.500Z", "revoked_reason": "revoked_from_api"}
    check("RevokeOAuthGrantResponse", response.json())
    assert http.delete(f"/oauth/grants/{grant_id}").json() == \
        {"statusCode": 404, "message": "OAuth grant not found", "name": "not_found"}
    assert http.delete("/oauth/grants/nope").status_code == 404
    oauth_error(refresh(http, client, issued["refresh_token"]), 400, "invalid_grant")
    listed = http.get("/oauth/grants").json()["data"][0]
    assert (listed["revoked_at"], listed["revoked_reason"]) == \
        ("2026-05-14 09:00:02.5+00", "revoked_from_api")


def test_every_key_of_the_team_sees_its_grants(client: TestClient) -> None:
    consent(client, "approve")
    oauth_client = register(client)
    tokens(client, oauth_client)
    other_key = client.post("/api-keys", json={"name": "same team"}).json()["token"]
    assert len(client.get("/oauth/grants", headers=bearer(other_key)).json()["data"]) == 1
