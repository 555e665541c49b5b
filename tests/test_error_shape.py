"""The error catalogue and the wire shape of every error path (reference 00-general.md §3).

Every response the `client` fixture sees is also checked by `conftest.assert_error_shape`.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from emulator.core import errors
from tests.conftest import assert_error_shape

DOCUMENTED = [
    (400, "invalid_idempotency_key", "Idempotency keys, if present, must have between 1 and 256 characters."),
    (401, "missing_api_key", "Missing API key in the authorization header."),
    (401, "restricted_api_key", "This API key is restricted to only send emails."),
    (403, "invalid_permission", "Access token is missing required scopes."),
    (403, "restricted_api_key", "API key is not active"),
    (403, "suspended_api_key", "This API key is suspended"),
    (404, "not_found", "The requested endpoint does not exist."),
    (405, "method_not_allowed", "Method is not allowed for the requested path."),
    (409, "concurrent_idempotent_requests",
     "There is another request in progress with the same idempotency key."),
    (409, "resource_locked", "Another request is already updating this resource."),
    (422, "invalid_attachment", "Attachment must have either a `content` or `path`."),
    (422, "missing_required_field", "The request body is missing one or more required fields."),
    (422, "missing_required_parameter", "The request is missing one or more required parameters."),
    (429, "daily_quota_exceeded", "You have exceeded your daily email sending quota."),
    (429, "monthly_quota_exceeded", "You have exceeded your monthly email sending quota."),
    (500, "application_error", "An unexpected error occurred."),
    (503, "service_unavailable", "API is temporarily unavailable"),
]


@pytest.mark.parametrize(("status", "name", "message"), DOCUMENTED)
def test_catalogue_holds_every_documented_error(status: int, name: str, message: str) -> None:
    assert any((k.status, k.name, k.message) == (status, name, message) for k in errors.CATALOGUE.values())


def test_error_body_key_order() -> None:
    body = errors.ApiError(errors.NOT_FOUND, "API key not found").body()
    assert list(body) == ["statusCode", "message", "name"]


ERROR_PATHS: list[tuple[str, str, dict[str, object] | None, dict[str, str], int, str]] = [
    ("GET", "/nope", None, {}, 404, "not_found"),
    ("PUT", "/domains", None, {}, 405, "method_not_allowed"),
    ("GET", "/domains", None, {"Authorization": ""}, 401, "missing_api_key"),
    ("GET", "/domains", None, {"Authorization": "Bearer re_nope"}, 403, "invalid_api_key"),
    ("GET", "/domains?limit=0", None, {}, 422, "validation_error"),
    ("GET", "/domains?after=a&before=b", None, {}, 422, "validation_error"),
    ("GET", "/domains?after=unknown", None, {}, 422, "validation_error"),
    ("GET", "/domains/unknown", None, {}, 404, "not_found"),
    ("POST", "/domains", {}, {}, 422, "missing_required_field"),
    ("POST", "/domains", {"name": "a.dev", "region": "x"}, {}, 422, "invalid_region"),
    ("POST", "/api-keys", {"name": 5}, {}, 422, "validation_error"),
    ("PATCH", "/api-keys/unknown", {"name": "x"}, {}, 404, "not_found"),
    ("POST", "/_emulator/clock/set", {"at": "never"}, {}, 422, "validation_error"),
]


@pytest.mark.parametrize(("method", "path", "body", "headers", "status", "name"), ERROR_PATHS)
def test_every_error_path_has_the_wire_shape(client: TestClient, method: str, path: str,
                                             body: dict[str, object] | None, headers: dict[str, str],
                                             status: int, name: str) -> None:
    response = client.request(method, path, json=body, headers=headers)
    assert (response.status_code, response.json()["name"]) == (status, name)
    assert_error_shape(response)


def test_malformed_body_has_the_wire_shape(client: TestClient) -> None:
    response = client.post("/api-keys", content=b"{", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert_error_shape(response)
