"""`GET /oauth/authorize`: PKCE S256 mandatory, `state` echoed, exact redirect-URI match (loopback: any
port), scopes, and which errors are JSON and which go back to the callback."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.oauth_helpers import (
    NO_KEY,
    VERIFIER,
    authorize_params,
    callback_params,
    consent,
    oauth_error,
    redeem,
    register,
)


def authorize(http: TestClient, params: dict[str, str]) -> Any:
    return http.get("/oauth/authorize", params=params, headers=NO_KEY, follow_redirects=False)


@pytest.fixture
def http(client: TestClient) -> TestClient:
    consent(client, "approve")
    return client


def test_approve_redirects_to_the_callback_with_code_and_state(http: TestClient) -> None:
    client = register(http)
    response = authorize(http, authorize_params(client))
    params = callback_params(response)
    assert set(params) == {"code", "state"} and params["state"] == "st4te"
    assert response.headers["location"].startswith("http://127.0.0.1/callback?code=ac_")


def test_a_loopback_redirect_uri_may_differ_only_in_port(http: TestClient) -> None:
    client = register(http)
    params = authorize_params(client, redirect_uri="http://127.0.0.1:49152/callback")
    location = authorize(http, params).headers["location"]
    assert location.startswith("http://127.0.0.1:49152/callback?code=")
    for other in ("http://localhost:49152/callback", "http://127.0.0.1:49152/other"):
        response = authorize(http, authorize_params(client, redirect_uri=other))
        assert oauth_error(response, 400, "invalid_request") == \
            "`redirect_uri` does not match any redirect URI registered for this client."


def test_the_port_variant_must_be_redeemed_with_the_same_uri(http: TestClient) -> None:
    client = register(http)
    client.redirect_uri = "http://127.0.0.1:49152/callback"
    code = callback_params(authorize(http, authorize_params(client)))["code"]
    assert redeem(http, client, code, VERIFIER).status_code == 200


def test_errors_before_the_redirect_uri_is_known_are_json(http: TestClient) -> None:
    client = register(http)
    assert oauth_error(authorize(http, {}), 400, "invalid_request") == \
        "Missing required parameter `client_id`."
    unknown = authorize(http, {**authorize_params(client), "client_id": "nope"})
    assert oauth_error(unknown, 401, "invalid_client") == "Unknown client."
    missing = {key: value for key, value in authorize_params(client).items() if key != "redirect_uri"}
    assert oauth_error(authorize(http, missing), 400, "invalid_request") == \
        "Missing required parameter `redirect_uri`."


@pytest.mark.parametrize(("change", "error", "description"), [
    ({"response_type": "token"}, "invalid_request", "`response_type` must be `code`."),
    ({"code_challenge": ""}, "invalid_request",
        "Missing required parameter `code_challenge` (PKCE is required)."),
    ({"code_challenge_method": "plain"}, "invalid_request", "`code_challenge_method` must be `S256`."),
    ({"code_challenge_method": ""}, "invalid_request", "`code_challenge_method` must be `S256`."),
    ({"code_challenge": "short"}, "invalid_request",
     "`code_challenge` must be the base64url SHA-256 of the code verifier."),
    ({"scope": "admin"}, "invalid_scope", "The scope `admin` is not allowed for this client."),
    ({"scope": " "}, "invalid_scope", "No scope was requested."),
])
def test_later_errors_go_back_to_a_loopback_callback_with_state(
        http: TestClient, change: dict[str, str], error: str, description: str) -> None:
    client = register(http)
    params = callback_params(authorize(http, {**authorize_params(client), **change}))
    assert params == {"error": error, "error_description": description, "state": "st4te"}


def test_later_errors_for_an_https_callback_are_json(http: TestClient) -> None:
    client = register(http, redirect_uris=["https://app.example/cb"])
    response = authorize(http, {**authorize_params(client), "code_challenge_method": "plain"})
    oauth_error(response, 400, "invalid_request")


def test_private_use_scheme_callbacks_get_redirected_errors(http: TestClient) -> None:
    client = register(http, redirect_uris=["cursor://acme/cb"])
    response = authorize(http, {**authorize_params(client), "scope": "admin"})
    assert response.headers["location"].startswith("cursor://acme/cb?error=invalid_scope")


def test_scope_outside_the_clients_registration_is_invalid_scope(http: TestClient) -> None:
    client = register(http, scope="emails:send")
    params = callback_params(authorize(http, {**authorize_params(client), "scope": "full_access"}))
    assert params["error"] == "invalid_scope"


def test_omitted_scope_grants_the_clients_registered_scopes(http: TestClient) -> None:
    client = register(http, scope="emails:send")
    code = callback_params(authorize(http, authorize_params(client)))["code"]
    assert redeem(http, client, code).json()["scope"] == "emails:send"


def test_state_longer_than_1024_characters_is_refused(http: TestClient) -> None:
    client = register(http)
    params = callback_params(authorize(http, authorize_params(client, state="s" * 1025)))
    assert params == \
        {"error": "invalid_request", "error_description": "`state` must be at most 1024 characters."}


def test_resource_is_accepted_and_ignored(http: TestClient) -> None:
    client = register(http)
    params = callback_params(authorize(http, authorize_params(client, resource="https://api.resend.com")))
    assert "code" in params


def test_deny_mode_redirects_with_access_denied(client: TestClient) -> None:
    consent(client, "deny")
    oauth_client = register(client)
    params = callback_params(authorize(client, authorize_params(oauth_client)))
    assert params == \
        {"error": "access_denied", "error_description": "The user denied the authorization request.",
                      "state": "st4te"}


def test_ask_mode_redirects_to_the_consent_page(client: TestClient) -> None:
    oauth_client = register(client)
    response = authorize(client, authorize_params(oauth_client))
    assert response.status_code == 302
    assert response.headers["location"].startswith("http://testserver/_emulator/ui/oauth/consent/")


def test_consent_settings_refuse_bad_values(client: TestClient) -> None:
    assert client.post("/_emulator/oauth", json={"consent": "maybe"}).status_code == 422
    unknown = client.post("/_emulator/oauth", json={"consent": "approve", "account": "nobody"})
    assert unknown.status_code == 422
    assert client.get("/_emulator/oauth").json() == {"consent": "ask", "account": "default",
                                                     "registration_limit": 20}


def test_the_consent_page_allows_its_form_to_reach_the_callback(client: TestClient) -> None:
    oauth_client = register(client, redirect_uris=["http://127.0.0.1:5555/cb"])
    location = authorize(client, authorize_params(oauth_client)).headers["location"]
    page = client.get(location)
    assert page.status_code == 200 and "Authorize Acme CLI" in page.text
    assert "form-action 'self' http://127.0.0.1:5555;" in page.headers["content-security-policy"]
    # Under `no-referrer` a browser would send `Origin: null` with the form POST, which the guard refuses.
    assert page.headers["referrer-policy"] == "same-origin"


def test_a_consent_decision_from_another_site_is_refused(client: TestClient) -> None:
    oauth_client = register(client)
    location = authorize(client, authorize_params(oauth_client)).headers["location"]
    form = {"decision": "approve", "account": "default"}
    forged = client.post(location, data=form, headers={"Origin": "http://evil.example"},
                         follow_redirects=False)
    assert (forged.status_code, forged.json()["name"]) == (403, "cross_site_request")
    same = client.post(location, data=form, follow_redirects=False,
                       headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 303 and same.headers["location"].startswith("http://127.0.0.1/callback?code=")


def test_a_client_id_metadata_document_url_is_invalid_client(http: TestClient) -> None:
    client = register(http)
    params = {**authorize_params(client), "client_id": "https://app.example/oauth/client.json"}
    assert "Client ID Metadata Documents" in oauth_error(authorize(http, params), 401, "invalid_client")


def test_an_unanswered_consent_request_expires_after_ten_minutes(client: TestClient) -> None:
    oauth_client = register(client)
    location = authorize(client, authorize_params(oauth_client)).headers["location"]
    assert client.get(location).status_code == 200
    assert client.post("/_emulator/clock/advance", json={"minutes": 10}).status_code == 200
    assert client.get(location).status_code == 404
    late = client.post(location, data={"decision": "approve", "account": "default"},
                       headers={"Sec-Fetch-Site": "same-origin"}, follow_redirects=False)
    assert late.status_code == 404
