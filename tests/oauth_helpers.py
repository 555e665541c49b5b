"""Shared steps of the OAuth tests: register a client, PKCE pairs, authorize without a browser, redeem."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

CALLBACK = "http://127.0.0.1/callback"
VERIFIER = "dBjftJeZ4CVP-mJ92K9qpvLy0kgBdWhxYAWZYz5KVnT9zuLpe7lX0Aj8_x-.~"
NO_KEY = {"Authorization": ""}


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Client:
    client_id: str
    secret: str | None
    method: str
    redirect_uri: str = CALLBACK


def register(http: httpx.Client, method: str = "none", **fields: Any) -> Client:
    body = {"client_name": "Acme CLI", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": method,
            **fields}
    response = http.post("/oauth/register", json=body, headers=NO_KEY)
    assert response.status_code == 201, response.text
    data = response.json()
    return Client(data["client_id"], data.get("client_secret"), method, data["redirect_uris"][0])


def consent(http: httpx.Client, mode: str = "approve", account: str = "default") -> None:
    response = http.post("/_emulator/oauth", json={"consent": mode, "account": account})
    assert response.status_code == 200, response.text


def authorize_params(client: Client, verifier: str = VERIFIER, **extra: str) -> dict[str, str]:
    return {"client_id": client.client_id, "redirect_uri": client.redirect_uri, "response_type": "code",
            "code_challenge": s256(verifier), "code_challenge_method": "S256", "state": "st4te", **extra}


def callback_params(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    query = parse_qs(urlsplit(response.headers["location"]).query)
    return {name: values[0] for name, values in query.items()}


def code_for(http: httpx.Client, client: Client, verifier: str = VERIFIER, **extra: str) -> str:
    """Authorize with consent set to `approve` and return the code from the callback."""
    response = http.get("/oauth/authorize", params=authorize_params(client, verifier, **extra),
                        headers=NO_KEY, follow_redirects=False)
    params = callback_params(response)
    assert params["state"] == "st4te"
    return params["code"]


def authenticated(client: Client, body: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The body and headers carrying `client`'s credentials by its registered mechanism."""
    if client.method == "client_secret_basic":
        token = base64.b64encode(f"{client.client_id}:{client.secret}".encode()).decode()
        return body, {"Authorization": f"Basic {token}"}
    body = {"client_id": client.client_id, **body}
    if client.method == "client_secret_post":
        body["client_secret"] = client.secret or ""
    return body, NO_KEY


def token_request(http: httpx.Client, client: Client, **fields: str) -> httpx.Response:
    body, headers = authenticated(client, fields)
    return http.post("/oauth/token", data=body, headers=headers)


def redeem(http: httpx.Client, client: Client, code: str, verifier: str = VERIFIER) -> httpx.Response:
    return token_request(http, client, grant_type="authorization_code", code=code,
                         redirect_uri=client.redirect_uri, code_verifier=verifier)


def refresh(http: httpx.Client, client: Client, refresh_token: str, **extra: str) -> httpx.Response:
    return token_request(http, client, grant_type="refresh_token", refresh_token=refresh_token, **extra)


def tokens(http: httpx.Client, client: Client) -> dict[str, Any]:
    """A full authorization: approve, redeem, and the token response."""
    response = redeem(http, client, code_for(http, client))
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def oauth_error(response: httpx.Response, status: int, error: str) -> str:
    """Assert the OAuth error shape, status and code; return the description."""
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error", "error_description"], body
    assert body["error"] == error, body
    assert isinstance(body["error_description"], str) and body["error_description"]
    return str(body["error_description"])
