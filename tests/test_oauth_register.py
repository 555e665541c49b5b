"""`POST /oauth/register` (Dynamic Client Registration): every field rule and documented error."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.oauth_helpers import CALLBACK, NO_KEY, oauth_error


def post(client: TestClient, **fields: Any) -> Any:
    body = {"client_name": "Acme CLI", "redirect_uris": [CALLBACK], **fields}
    return client.post("/oauth/register", json=body, headers=NO_KEY)


def test_a_confidential_client_gets_its_secret_once_and_the_whole_body_is_deterministic(
        client: TestClient) -> None:
    response = post(client, token_endpoint_auth_method="client_secret_basic", scope="emails:send",
                    client_uri="https://acme.example", logo_uri="https://acme.example/logo.png")
    assert response.status_code == 201
    body = response.json()
    assert body == {
        "client_id": body["client_id"], "client_id_issued_at": 1778749200, "client_name": "Acme CLI",
        "redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "client_secret_basic",
        "scope": "emails:send", "client_uri": "https://acme.example",
        "logo_uri": "https://acme.example/logo.png", "client_secret": body["client_secret"],
        "client_secret_expires_at": 0,
    }
    assert len(body["client_secret"]) == 32
    tab = client.get("/_emulator/ui/oauth")  # shown once: the UI lists the client, never its secret
    assert body["client_id"] in tab.text and body["client_secret"] not in tab.text
    assert client.post("/_emulator/reset").status_code == 200  # same seed, fresh state: same id and secret
    repeat = post(client, token_endpoint_auth_method="client_secret_basic", scope="emails:send",
                  client_uri="https://acme.example", logo_uri="https://acme.example/logo.png").json()
    assert (repeat["client_id"], repeat["client_secret"]) == (body["client_id"], body["client_secret"])


def test_a_public_client_defaults_to_none_and_every_scope(client: TestClient) -> None:
    body = post(client).json()
    assert body["token_endpoint_auth_method"] == "none"
    assert body["scope"] == "emails:send full_access"
    assert "client_secret" not in body and "client_secret_expires_at" not in body


@pytest.mark.parametrize("uri", [
    "https://app.example/cb", "http://127.0.0.1:8765/cb", "http://localhost/cb", "http://[::1]/cb",
    "cursor://anysphere.cursor-retrieval/oauth/callback", "vscode://publisher.ext/cb",
])
def test_allowed_redirect_uris(client: TestClient, uri: str) -> None:
    assert post(client, redirect_uris=[uri]).status_code == 201


@pytest.mark.parametrize(("uri", "description"), [
    ("http://app.example/cb", "`http` redirect URIs are only allowed for loopback hosts (127.0.0.1, "
                              "localhost, [::1])."),
    ("https://app.example/cb#frag", "Redirect URIs must not contain a fragment."),
    ("javascript:alert(1)", "The `javascript` scheme is not allowed for redirect URIs."),
    ("file:///etc/passwd", "The `file` scheme is not allowed for redirect URIs."),
    ("data:text/html,x", "The `data` scheme is not allowed for redirect URIs."),
    ("https://" + "a" * 2048, "Redirect URIs must be at most 2048 characters."),
    ("no-scheme", "Invalid redirect URI: no-scheme"),
])
def test_refused_redirect_uris(client: TestClient, uri: str, description: str) -> None:
    assert oauth_error(post(client, redirect_uris=[uri]), 400, "invalid_request") == description


@pytest.mark.parametrize(("fields", "description"), [
    ({"client_name": None}, "`client_name` is required."),
    ({"client_name": "x" * 201}, "`client_name` must be at most 200 characters."),
    ({"redirect_uris": []}, "`redirect_uris` must contain at least one URI."),
    ({"redirect_uris": [f"https://a.example/{n}" for n in range(11)]},
        "`redirect_uris` may contain at most 10 URIs."),
    ({"grant_types": ["refresh_token"]}, "`grant_types` must include `authorization_code`."),
    ({"grant_types": ["authorization_code", "password"]}, "Unsupported grant type `password`."),
    ({"response_types": ["token"]}, "`response_types` may only contain `code`."),
    ({"token_endpoint_auth_method": "private_key_jwt"},
     "`token_endpoint_auth_method` must be `none`, `client_secret_basic` or `client_secret_post`."),
])
def test_invalid_request_for_each_field_rule(client: TestClient, fields: dict[str, Any],
    description: str) -> None:
    body = {"client_name": "Acme CLI", "redirect_uris": [CALLBACK], **fields}
    body = {key: value for key, value in body.items() if value is not None}
    response = client.post("/oauth/register", json=body, headers=NO_KEY)
    assert oauth_error(response, 400, "invalid_request") == description


def test_invalid_scope_for_an_unsupported_scope(client: TestClient) -> None:
    assert oauth_error(post(client, scope="emails:send admin"), 400, "invalid_scope") == \
        "Unsupported scope `admin`."


def test_a_non_json_body_is_invalid_request(client: TestClient) -> None:
    response = client.post("/oauth/register", data={"client_name": "x"}, headers=NO_KEY)
    assert oauth_error(response, 400, "invalid_request") == "Unsupported content type; send application/json."


def test_the_21st_registration_in_an_hour_is_too_many_requests(client: TestClient) -> None:
    for _ in range(20):
        assert post(client).status_code == 201
    refused = post(client)
    assert oauth_error(refused, 429, "too_many_requests") == \
        "No more than 20 client registrations per hour from one address."
    assert refused.headers["retry-after"] == "3600"
    assert client.post("/_emulator/clock/advance", json={"hours": 1}).status_code == 200
    assert post(client).status_code == 201


def test_the_registration_limit_can_be_turned_off(client: TestClient) -> None:
    assert client.post("/_emulator/oauth",
        json={"registration_limit": None}).json()["registration_limit"] is None
    for _ in range(25):
        assert post(client).status_code == 201
