"""Access tokens as API credentials (00-general §2.3): scopes, signature, `exp` on the emulator clock,
revocation; the token verified independently with pyjwt and the JWKS; discovery metadata."""

from __future__ import annotations

import jwt
import pytest
from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings
from tests.oauth_helpers import NO_KEY, bearer, consent, register, tokens

SEND = {"from": "Acme <onboarding@resend.dev>", "to": ["delivered@resend.dev"], "subject": "Hi",
        "html": "<p>x</p>"}
NO_SCOPE = {"statusCode": 403, "message": "Access token is missing required scopes.",
            "name": "invalid_permission"}
INVALID = {"statusCode": 403, "message": "API key is invalid", "name": "invalid_api_key"}


@pytest.fixture
def http(client: TestClient) -> TestClient:
    consent(client, "approve")
    return client


def access_token(http: TestClient, scope: str | None = None) -> str:
    client = register(http, **({"scope": scope} if scope else {}))
    return str(tokens(http, client)["access_token"])


def test_the_token_verifies_with_the_jwks_key_in_pyjwt(http: TestClient) -> None:
    token = access_token(http)
    jwk_set = jwt.PyJWKSet.from_dict(http.get("/.well-known/jwks.json").json())
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "kid": "oauth_key", "typ": "at+jwt"}
    key = jwk_set[header["kid"]]
    # The emulator's clock is frozen in May 2026: check `exp` against it, not against this machine's.
    claims = jwt.decode(token, key, algorithms=["ES256"], audience="http://testserver",
                        options={"verify_exp": False})
    assert claims["exp"] - claims["iat"] == 900
    assert claims["iat"] == 1778749200  # 2026-05-14T09:00:00Z, the frozen clock
    assert (claims["iss"], claims["sub"], claims["scope"]) == \
        ("http://testserver", "default", "emails:send full_access")
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"), key, algorithms=["ES256"],
                   options={"verify_exp": False, "verify_aud": False})


def test_same_seed_same_key_and_same_token(http: TestClient) -> None:
    first = access_token(http)
    jwks = http.get("/.well-known/jwks.json").json()
    assert http.post("/_emulator/reset").status_code == 200
    consent(http, "approve")
    assert access_token(http) == first
    with api_client(make_settings(seed=7)) as other:
        assert other.get("/.well-known/jwks.json").json() != jwks


def test_full_access_token_calls_any_route(http: TestClient) -> None:
    token = access_token(http, "full_access")
    assert http.get("/api-keys", headers=bearer(token)).status_code == 200
    assert http.post("/emails", headers=bearer(token), json=SEND).status_code == 200


def test_send_only_token_sends_but_is_403_invalid_permission_elsewhere(http: TestClient) -> None:
    token = access_token(http, "emails:send")
    assert http.post("/emails", headers=bearer(token), json=SEND).status_code == 200
    for method, path in [("GET", "/domains"), ("GET", "/oauth/grants"), ("POST", "/api-keys")]:
        response = http.request(method, path, headers=bearer(token), json={"name": "x"})
        assert (response.status_code, response.json()) == (403, NO_SCOPE)


def test_the_token_expires_900_seconds_after_issue_on_the_emulator_clock(http: TestClient) -> None:
    token = access_token(http)
    assert http.post("/_emulator/clock/advance", json={"seconds": 899}).status_code == 200
    assert http.get("/domains", headers=bearer(token)).status_code == 200
    assert http.post("/_emulator/clock/advance", json={"seconds": 1}).status_code == 200
    response = http.get("/domains", headers=bearer(token))
    assert (response.status_code, response.json()) == (403, INVALID)
    assert response.headers["www-authenticate"] == \
        'Bearer error="invalid_token", error_description="The access token has expired."'


def test_a_revoked_grant_stops_its_access_tokens_at_once(http: TestClient) -> None:
    token = access_token(http)
    grant_id = http.get("/oauth/grants").json()["data"][0]["id"]
    assert http.delete(f"/oauth/grants/{grant_id}").status_code == 200
    response = http.get("/domains", headers=bearer(token))
    assert (response.status_code, response.json()) == (403, INVALID)


def test_a_tampered_or_foreign_token_is_invalid_api_key(http: TestClient) -> None:
    token = access_token(http)
    head, payload, signature = token.split(".")
    forged = jwt.encode({"sub": "default", "grant_id": "x", "exp": 4102444800, "scope": "full_access"},
                        "a-forger-s-secret-of-32-bytes-ok", algorithm="HS256")
    for bad in (f"{head}.{payload}.{signature[::-1]}", forged, "a.b.c"):
        response = http.get("/domains", headers=bearer(bad))
        assert (response.status_code, response.json()) == (403, INVALID)


def test_grant_last_use_follows_api_calls(http: TestClient) -> None:
    token = access_token(http)
    http.post("/_emulator/clock/advance", json={"seconds": 30})
    assert http.get("/domains", headers=bearer(token)).status_code == 200
    page = http.get("/_emulator/ui/oauth")
    assert page.status_code == 200 and "2026-05-14 09:00:30" in page.text


def test_discovery_metadata(client: TestClient) -> None:
    body = client.get("/.well-known/oauth-authorization-server", headers=NO_KEY).json()
    base = "http://testserver"
    assert body == {
        "issuer": base, "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token", "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke", "jwks_uri": f"{base}/.well-known/jwks.json",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "scopes_supported": ["emails:send", "full_access"],
    }
