"""`POST /oauth/token`: full flows per client type, one test per row of seed §7.2, and the code and
refresh-token transitions of seed §3 (time moved with the control-plane clock, never slept)."""

from __future__ import annotations

import base64

import pytest
from starlette.testclient import TestClient

from tests.oauth_helpers import (
    NO_KEY,
    VERIFIER,
    Client,
    authenticated,
    bearer,
    code_for,
    consent,
    oauth_error,
    redeem,
    refresh,
    register,
    token_request,
    tokens,
)


@pytest.fixture
def http(client: TestClient) -> TestClient:
    consent(client, "approve")
    return client


def advance(http: TestClient, **amount: int) -> None:
    assert http.post("/_emulator/clock/advance", json=amount).status_code == 200


def grant_of(http: TestClient) -> dict[str, object]:
    return http.get("/oauth/grants").json()["data"][0]  # type: ignore[no-any-return]


# ---- full flows ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["none", "client_secret_basic", "client_secret_post"])
def test_full_flow_register_authorize_token_call_refresh_call(http: TestClient, method: str) -> None:
    client = register(http, method)
    assert (client.secret is None) == (method == "none")
    first = tokens(http, client)
    assert set(first) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    assert (first["token_type"], first["expires_in"], first["scope"]) == \
        ("Bearer", 900, "emails:send full_access")
    domains = http.get("/domains", headers=bearer(first["access_token"]))
    assert domains.json() == {"object": "list", "has_more": False, "data": []}
    second = refresh(http, client, first["refresh_token"])
    assert second.status_code == 200, second.text
    assert second.headers["cache-control"] == "no-store"
    renewed = second.json()
    assert renewed["refresh_token"] != first["refresh_token"]
    assert renewed["access_token"] != first["access_token"]
    assert http.get("/domains", headers=bearer(renewed["access_token"])).status_code == 200


def test_json_body_is_accepted_like_a_form(http: TestClient) -> None:
    client = register(http)
    code = code_for(http, client)
    response = http.post("/oauth/token", headers=NO_KEY, json={
        "grant_type": "authorization_code", "client_id": client.client_id, "code": code,
        "redirect_uri": client.redirect_uri, "code_verifier": VERIFIER})
    assert response.status_code == 200, response.text


def test_basic_credentials_are_url_encoded_before_base64(http: TestClient) -> None:
    client = register(http, "client_secret_basic")
    code = code_for(http, client)
    # A secret holding `_` is unchanged by URL encoding; send the id percent-encoded to prove decoding.
    encoded_id = "".join(f"%{byte:02X}" for byte in client.client_id.encode())
    token = base64.b64encode(f"{encoded_id}:{client.secret}".encode()).decode()
    response = http.post("/oauth/token", headers={"Authorization": f"Basic {token}"}, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": client.redirect_uri,
        "code_verifier": VERIFIER})
    assert response.status_code == 200, response.text


# ---- seed §7.2, one test per row ---------------------------------------------------------------

def test_invalid_request_when_a_required_field_is_missing(http: TestClient) -> None:
    client = register(http)
    response = token_request(http, client, grant_type="authorization_code", redirect_uri=client.redirect_uri,
                             code_verifier=VERIFIER)
    assert oauth_error(response, 400, "invalid_request") == "Missing required parameter `code`."
    assert oauth_error(token_request(http, client), 400, "invalid_request") == \
        "Missing required parameter `grant_type`."


def test_invalid_request_when_a_field_is_malformed(http: TestClient) -> None:
    client = register(http)
    response = redeem(http, client, code_for(http, client), verifier="short")
    assert "43 to 128" in oauth_error(response, 400, "invalid_request")


def test_invalid_request_when_basic_header_and_body_secret_are_both_sent(http: TestClient) -> None:
    client = register(http, "client_secret_basic")
    code = code_for(http, client)
    body, headers = authenticated(client, {"grant_type": "authorization_code", "code": code,
                                           "redirect_uri": client.redirect_uri, "code_verifier": VERIFIER})
    response = http.post("/oauth/token", headers=headers, data={**body, "client_secret": client.secret or ""})
    assert oauth_error(response, 400, "invalid_request") == \
        "Client credentials were sent by more than one mechanism."


def test_invalid_request_for_an_unknown_grant_type_or_content_type(http: TestClient) -> None:
    client = register(http)
    oauth_error(token_request(http, client, grant_type="password"), 400, "invalid_request")
    response = http.post("/oauth/token", headers={**NO_KEY, "Content-Type": "text/plain"}, content=b"x=1")
    oauth_error(response, 400, "invalid_request")


def test_invalid_scope_when_a_refresh_asks_for_more_than_the_grant(http: TestClient) -> None:
    client = register(http, scope="emails:send")
    first = tokens(http, client)
    response = refresh(http, client, first["refresh_token"], scope="emails:send full_access")
    assert oauth_error(response, 400, "invalid_scope") == "The scope `full_access` is not part of this grant."


def test_refresh_may_narrow_the_scope(http: TestClient) -> None:
    client = register(http)
    first = tokens(http, client)
    narrowed = refresh(http, client, first["refresh_token"], scope="emails:send").json()
    assert narrowed["scope"] == "emails:send"
    # The grant keeps its scopes: the next refresh may ask for all of them again.
    again = refresh(http, client, narrowed["refresh_token"], scope="full_access emails:send")
    assert again.json()["scope"] == "full_access emails:send"


def test_invalid_grant_for_an_unknown_code(http: TestClient) -> None:
    client = register(http)
    assert oauth_error(redeem(http, client, "ac_nope"), 400, "invalid_grant") == \
        "The authorization code is invalid."


def test_invalid_grant_when_the_verifier_does_not_match_the_challenge(http: TestClient) -> None:
    client = register(http)
    code = code_for(http, client)
    response = redeem(http, client, code, verifier="x" * 43)
    assert oauth_error(response, 400, "invalid_grant") == \
        "The `code_verifier` does not match the `code_challenge`."


def test_invalid_grant_when_the_redirect_uri_differs(http: TestClient) -> None:
    client = register(http)
    code = code_for(http, client)
    response = token_request(http, client, grant_type="authorization_code", code=code,
                             redirect_uri="http://127.0.0.1/other", code_verifier=VERIFIER)
    assert "redirect_uri" in oauth_error(response, 400, "invalid_grant")


def test_invalid_grant_for_another_clients_code(http: TestClient) -> None:
    owner, thief = register(http), register(http)
    code = code_for(http, owner)
    oauth_error(redeem(http, thief, code), 400, "invalid_grant")
    assert redeem(http, owner, code).status_code == 200


def test_invalid_client_for_an_unknown_client_id(http: TestClient) -> None:
    ghost = Client("00000000-0000-4000-8000-000000000000", None, "none")
    assert oauth_error(redeem(http, ghost, "ac_x"), 401, "invalid_client") == "Unknown client."


def test_invalid_client_when_a_confidential_client_sends_no_secret(http: TestClient) -> None:
    client = register(http, "client_secret_post")
    code = code_for(http, client)
    response = redeem(http, Client(client.client_id, None, "none"), code)
    assert oauth_error(response, 401, "invalid_client") == \
        "This client must authenticate with `client_secret_post`."


def test_invalid_client_for_a_wrong_secret_with_a_basic_challenge(http: TestClient) -> None:
    client = register(http, "client_secret_basic")
    code = code_for(http, client)
    response = redeem(http, Client(client.client_id, "wrong", "client_secret_basic"), code)
    assert oauth_error(response, 401, "invalid_client") == "Invalid client secret."
    assert response.headers["www-authenticate"].startswith("Basic")


def test_invalid_client_when_basic_id_differs_from_body_id(http: TestClient) -> None:
    client, other = register(http, "client_secret_basic"), register(http)
    body, headers = authenticated(client, {"grant_type": "authorization_code", "code": "ac_x",
                                           "client_id": other.client_id})
    oauth_error(http.post("/oauth/token", headers=headers, data=body), 401, "invalid_client")


def test_unauthorized_client_for_a_grant_type_it_did_not_register(http: TestClient) -> None:
    client = register(http, grant_types=["authorization_code"])
    first = tokens(http, client)
    assert "refresh_token" not in first
    response = refresh(http, client, "anything")
    assert oauth_error(response, 400, "unauthorized_client") == \
        "This client is not registered for `refresh_token`."


# ---- seed §3: authorization codes -------------------------------------------------------------

def test_first_redemption_consumes_the_code_and_the_second_is_invalid_grant(http: TestClient) -> None:
    client = register(http)
    code = code_for(http, client)
    assert redeem(http, client, code).status_code == 200
    assert oauth_error(redeem(http, client, code), 400, "invalid_grant") == \
        "The authorization code has already been used."


def test_a_failed_redemption_does_not_consume_the_code(http: TestClient) -> None:
    client = register(http)
    code = code_for(http, client)
    oauth_error(redeem(http, client, code, verifier="y" * 43), 400, "invalid_grant")
    assert redeem(http, client, code).status_code == 200


def test_code_expires_ten_minutes_after_issue(http: TestClient) -> None:
    client = register(http)
    late, in_time = code_for(http, client), code_for(http, client)
    advance(http, minutes=9, seconds=59)
    assert redeem(http, client, in_time).status_code == 200
    advance(http, seconds=1)
    assert oauth_error(redeem(http, client, late), 400, "invalid_grant") == \
        "The authorization code has expired."


# ---- seed §3: refresh tokens ------------------------------------------------------------------

def test_refresh_rotates_the_token_and_the_new_one_is_current(http: TestClient) -> None:
    client = register(http)
    first = tokens(http, client)
    second = refresh(http, client, first["refresh_token"]).json()
    third = refresh(http, client, second["refresh_token"])
    assert third.status_code == 200, third.text


def test_reuse_of_a_rotated_refresh_token_revokes_the_grant(http: TestClient) -> None:
    client = register(http)
    first = tokens(http, client)
    second = refresh(http, client, first["refresh_token"]).json()
    advance(http, minutes=5)
    reuse = refresh(http, client, first["refresh_token"])
    assert oauth_error(reuse, 400, "invalid_grant") == \
        "The refresh token was already used; the grant has been revoked."
    assert oauth_error(refresh(http, client, second["refresh_token"]), 400, "invalid_grant") == \
        "The grant of this refresh token has been revoked."
    assert http.get("/domains", headers=bearer(second["access_token"])).status_code == 403
    grant = grant_of(http)
    assert (grant["revoked_at"], grant["revoked_reason"]) == ("2026-05-14 09:05:00+00", "refresh_token_reuse")


def test_refresh_token_is_valid_sixty_days_from_its_issue(http: TestClient) -> None:
    client = register(http)
    first = tokens(http, client)
    advance(http, days=59, hours=23)
    second = refresh(http, client, first["refresh_token"])
    assert second.status_code == 200  # a new token: 60 days from now
    advance(http, days=59)
    third = refresh(http, client, second.json()["refresh_token"])
    assert third.status_code == 200
    advance(http, days=60)
    assert oauth_error(refresh(http, client, third.json()["refresh_token"]), 400, "invalid_grant") == \
        "The refresh token has expired."


def test_another_clients_refresh_token_is_invalid_grant(http: TestClient) -> None:
    owner, thief = register(http), register(http)
    first = tokens(http, owner)
    oauth_error(refresh(http, thief, first["refresh_token"]), 400, "invalid_grant")
