"""API keys: reference/api-keys.md."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.conftest import AUTH
from tests.openapi_oracle import check


def test_create_returns_id_object_and_token(client: TestClient) -> None:
    response = client.post("/api-keys", json={"name": "Production"})
    assert response.status_code == 201
    body = response.json()
    assert list(body) == ["id", "object", "token"]
    assert body["object"] == "api_key"
    assert body["token"].startswith("re_")


def test_create_accepts_empty_name(client: TestClient) -> None:
    assert client.post("/api-keys", json={"name": ""}).status_code == 201


def test_create_without_name_is_missing_required_field(client: TestClient) -> None:
    response = client.post("/api-keys", json={})
    assert response.status_code == 422
    assert response.json() == {"statusCode": 422, "message": "Missing `name` field.",
                                "name": "missing_required_field"}


def test_create_rejects_a_bad_permission(client: TestClient) -> None:
    bad = client.post("/api-keys", json={"name": "k", "permission": "admin"})
    assert (bad.status_code, bad.json()["name"]) == (422, "validation_error")


def test_create_with_unknown_domain_is_not_found(client: TestClient) -> None:
    response = client.post("/api-keys", json={"name": "k", "permission": "sending_access",
                                              "domain_id": "00000000-0000-4000-8000-000000000000"})
    assert response.status_code == 404


def test_list_hides_tokens_and_permissions(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "CI"}).json()
    listed = client.get("/api-keys").json()
    assert listed["object"] == "list" and listed["has_more"] is False
    first = listed["data"][0]
    assert first == {"id": created["id"], "name": "CI", "created_at": "2026-05-14 09:00:00+00",
                     "last_used_at": None}


def test_new_key_authenticates_and_records_last_use(client: TestClient) -> None:
    token = client.post("/api-keys", json={"name": "new"}).json()["token"]
    assert client.get("/domains", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    client.post("/_emulator/clock/advance", json={"seconds": 1.5})
    keys = {k["name"]: k for k in client.get("/api-keys").json()["data"]}
    assert keys["new"]["last_used_at"] == "2026-05-14 09:00:00+00"


def test_update_renames(client: TestClient) -> None:
    key_id = client.post("/api-keys", json={"name": "old"}).json()["id"]
    response = client.patch(f"/api-keys/{key_id}", json={"name": "renamed", "id": key_id})
    assert response.json() == {"object": "api_key", "id": key_id}
    names = [k["name"] for k in client.get("/api-keys").json()["data"]]
    assert "renamed" in names and "old" not in names


def test_update_and_delete_unknown_key_are_not_found(client: TestClient) -> None:
    missing = "77a60b3f-9567-48fd-a43b-172a2924414c"
    expected = {"statusCode": 404, "message": "API key not found", "name": "not_found"}
    assert client.patch(f"/api-keys/{missing}", json={"name": "x"}).json() == expected
    assert client.delete(f"/api-keys/{missing}").json() == expected


def test_deleted_key_stops_authenticating(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "temp"}).json()
    response = client.delete(f"/api-keys/{created['id']}")
    assert response.json() == {"object": "api_key", "id": created["id"], "deleted": True}
    denied = client.get("/domains", headers={"Authorization": f"Bearer {created['token']}"})
    assert denied.status_code == 403
    assert denied.json()["name"] == "restricted_api_key"
    assert created["id"] not in [k["id"] for k in client.get("/api-keys", headers=AUTH).json()["data"]]


def test_responses_validate_against_openapi(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "ci"}).json()
    check("CreateApiKeyResponse", created)
    check("ListApiKeysResponse", client.get("/api-keys").json())
    check("UpdateApiKeyResponse", client.patch(f"/api-keys/{created['id']}", json={"name": "x"}).json())
    check("DeleteApiKeyResponse", client.delete(f"/api-keys/{created['id']}").json())
