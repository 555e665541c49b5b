"""The auth matrix (reference 00-general.md §2.4, api-keys.md permission summary)."""

from __future__ import annotations

from starlette.testclient import TestClient


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sending_key(client: TestClient, domain_id: str | None = None) -> str:
    body: dict[str, str] = {"name": "sender", "permission": "sending_access"}
    if domain_id:
        body["domain_id"] = domain_id
    return client.post("/api-keys", json=body).json()["token"]  # type: ignore[no-any-return]


def test_missing_header_is_401_missing_api_key(client: TestClient) -> None:
    response = client.get("/domains", headers={"Authorization": ""})
    assert response.status_code == 401
    assert response.json() == {"statusCode": 401, "message": "Missing API key in the authorization header.",
                               "name": "missing_api_key"}


def test_non_bearer_scheme_is_missing_api_key(client: TestClient) -> None:
    response = client.get("/domains", headers={"Authorization": "Basic cmVzZW5kOng="})
    assert response.json()["name"] == "missing_api_key"


def test_unknown_key_is_403_invalid_api_key(client: TestClient) -> None:
    response = client.get("/domains", headers=bearer("re_unknown_key"))
    assert (response.status_code, response.json()["name"]) == (403, "invalid_api_key")


def test_sending_key_on_full_access_route_is_401_restricted(client: TestClient) -> None:
    token = sending_key(client)
    for method, path in [("GET", "/domains"), ("GET", "/api-keys"), ("POST", "/domains")]:
        response = client.request(method, path, headers=bearer(token), json={})
        assert response.status_code == 401
        assert response.json() == {"statusCode": 401, "name": "restricted_api_key",
                                    "message": "This API key is restricted to only send emails."}


def test_domain_restricted_key_is_sending_only(client: TestClient) -> None:
    domain_id = client.post("/domains", json={"name": "acme.dev"}).json()["id"]
    token = sending_key(client, domain_id)
    response = client.get(f"/domains/{domain_id}", headers=bearer(token))
    assert (response.status_code, response.json()["name"]) == (401, "restricted_api_key")


def test_deleted_key_is_403_not_active(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "gone"}).json()
    client.delete(f"/api-keys/{created['id']}")
    response = client.get("/api-keys", headers=bearer(created["token"]))
    assert response.status_code == 403
    assert response.json()["message"] == "API key is not active"


def test_control_plane_needs_no_key(client: TestClient) -> None:
    assert client.get("/_emulator/health", headers={"Authorization": ""}).status_code == 200
