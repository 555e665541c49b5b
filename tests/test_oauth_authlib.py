"""A third-party OAuth client, authlib's `OAuth2Session` (from PyPI, nothing of ours in its path), completes
authorization code + PKCE, calls the API, refreshes, calls again and revokes, against a live server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from emulator.testing import EmulatorServer
from tests.oauth_helpers import CALLBACK, consent, register


@pytest.fixture
def server(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with httpx.Client(base_url=live_server.url) as http:
        consent(http, "approve")
    yield live_server


def session_for(server: EmulatorServer, method: str) -> OAuth2Session:
    with httpx.Client(base_url=server.url) as http:
        client = register(http, method)
    return OAuth2Session(client.client_id, client.secret, scope="emails:send full_access",
                         redirect_uri=CALLBACK, code_challenge_method="S256",
                         token_endpoint_auth_method=method, revocation_endpoint_auth_method=method)


@pytest.mark.parametrize("method", ["none", "client_secret_basic", "client_secret_post"])
def test_authlib_completes_code_pkce_and_refresh(server: EmulatorServer, method: str) -> None:
    session = session_for(server, method)
    verifier = generate_token(64)
    url, state = session.create_authorization_url(f"{server.url}/oauth/authorize", code_verifier=verifier)
    callback = requests.get(url, allow_redirects=False, timeout=10).headers["location"]
    assert f"state={state}" in callback
    token = session.fetch_token(f"{server.url}/oauth/token", authorization_response=callback,
                                code_verifier=verifier)
    assert (token["token_type"], token["expires_in"]) == ("Bearer", 900)
    assert session.get(f"{server.url}/domains", timeout=10).json()["object"] == "list"

    first_refresh = token["refresh_token"]
    renewed = session.refresh_token(f"{server.url}/oauth/token")
    assert renewed["refresh_token"] != first_refresh and renewed["access_token"] != token["access_token"]
    assert session.get(f"{server.url}/domains", timeout=10).status_code == 200

    revoked = session.revoke_token(f"{server.url}/oauth/revoke", renewed["refresh_token"],
                                   token_type_hint="refresh_token")
    assert revoked.status_code == 200
    assert session.get(f"{server.url}/domains", timeout=10).status_code == 403


def test_authlib_sees_the_oauth_error_of_a_wrong_verifier(server: EmulatorServer) -> None:
    session = session_for(server, "none")
    authorize_url = f"{server.url}/oauth/authorize"
    url, _ = session.create_authorization_url(authorize_url, code_verifier=generate_token(64))
    callback = requests.get(url, allow_redirects=False, timeout=10).headers["location"]
    with pytest.raises(OAuthError) as refused:
        session.fetch_token(f"{server.url}/oauth/token", authorization_response=callback,
                            code_verifier=generate_token(64))
    assert refused.value.error == "invalid_grant"
