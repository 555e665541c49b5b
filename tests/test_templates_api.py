"""Templates over HTTP: versions and publication, id-or-alias paths, and every error of templates.md."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.resources.templates.fields import RESERVED_KEYS
from tests.conftest import AUTH, make_settings
from tests.openapi_oracle import check
from tests.templates_helpers import ORDER_HTML, T0, order_template

UNKNOWN = {"statusCode": 404, "message": "Template not found", "name": "not_found"}


def create(client: TestClient, **overrides: Any) -> str:
    response = client.post("/templates", json=order_template(**overrides))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def error_of(response: Any) -> tuple[int, str]:
    body = response.json()
    assert body["statusCode"] == response.status_code and set(body) == {"statusCode", "message", "name"}
    return response.status_code, body["name"]


def advance(client: TestClient, seconds: float) -> None:
    assert client.post("/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


# ---- state machine -----------------------------------------------------------------------------

def test_new_template_is_an_unpublished_draft(client: TestClient) -> None:
    got = client.get(f"/templates/{create(client)}").json()
    assert (got["status"], got["published_at"], got["has_unpublished_versions"]) == ("draft", None, True)
    assert (got["created_at"], got["updated_at"]) == (T0, T0)


def test_minimal_template_has_null_defaults(client: TestClient) -> None:
    response = client.post("/templates", json={"name": "bare", "html": "<p>hi</p>"})
    got = client.get(f"/templates/{response.json()['id']}").json()
    assert {key: got[key] for key in ("alias", "from", "subject", "reply_to", "text", "variables")} == {
        "alias": None, "from": None, "subject": None, "reply_to": None, "text": None, "variables": []}


def test_editing_a_draft_keeps_its_version(client: TestClient) -> None:
    template_id = create(client)
    before = client.get(f"/templates/{template_id}").json()
    advance(client, 5)
    assert client.patch(f"/templates/{template_id}", json={"html": "<b>new</b>"}).json() == {
        "id": template_id, "object": "template"}
    after = client.get(f"/templates/{template_id}").json()
    assert after["current_version_id"] == before["current_version_id"]
    assert (after["html"], after["updated_at"], after["status"]) == (
        "<b>new</b>", "2026-05-14 09:00:05+00", "draft")


def test_editing_a_published_template_starts_a_new_draft(client: TestClient) -> None:
    template_id = create(client)
    client.post(f"/templates/{template_id}/publish")
    published = client.get(f"/templates/{template_id}").json()
    assert published["has_unpublished_versions"] is False
    client.patch(f"/templates/{template_id}", json={"subject": "Changed"})
    draft = client.get(f"/templates/{template_id}").json()
    assert draft["current_version_id"] != published["current_version_id"]
    assert (draft["subject"], draft["status"], draft["has_unpublished_versions"]) == (
        "Changed", "published", True)
    advance(client, 30)
    client.post(f"/templates/{template_id}/publish")
    again = client.get(f"/templates/{template_id}").json()
    assert (again["has_unpublished_versions"], again["published_at"]) == (False, "2026-05-14 09:00:30+00")
    assert again["current_version_id"] == draft["current_version_id"]


def test_publishing_without_changes_is_idempotent(client: TestClient) -> None:
    template_id = create(client)
    client.post(f"/templates/{template_id}/publish")
    advance(client, 10)
    response = client.post(f"/templates/{template_id}/publish")
    assert (response.status_code, response.json()) == (200, {"id": template_id, "object": "template"})
    assert client.get(f"/templates/{template_id}").json()["published_at"] == T0


def test_renaming_does_not_create_a_draft(client: TestClient) -> None:
    template_id = create(client)
    client.post(f"/templates/{template_id}/publish")
    client.patch(f"/templates/{template_id}", json={"name": "renamed", "alias": "new-alias"})
    got = client.get("/templates/new-alias").json()
    assert (got["name"], got["has_unpublished_versions"]) == ("renamed", False)
    assert client.get("/templates/order-confirmation").status_code == 404


def test_variables_replace_the_list_and_keep_ids_of_unchanged_keys(client: TestClient) -> None:
    template_id = create(client)
    old = {item["key"]: item for item in client.get(f"/templates/{template_id}").json()["variables"]}
    advance(client, 1)
    client.patch(f"/templates/{template_id}", json={"variables": [
        {"key": "PRODUCT", "type": "string", "fallback_value": "item"},
        {"key": "PRICE", "type": "number", "fallback_value": 30},
        {"key": "SHIPPING", "type": "string"}]})
    new = {item["key"]: item for item in client.get(f"/templates/{template_id}").json()["variables"]}
    assert list(new) == ["PRODUCT", "PRICE", "SHIPPING"]
    assert new["PRODUCT"] == old["PRODUCT"]
    assert new["PRICE"]["id"] == old["PRICE"]["id"]
    assert (new["PRICE"]["created_at"], new["PRICE"]["updated_at"]) == (T0, "2026-05-14 09:00:01+00")
    assert new["SHIPPING"]["fallback_value"] is None
    client.patch(f"/templates/{template_id}", json={"variables": None})
    assert client.get(f"/templates/{template_id}").json()["variables"] == []


def test_reply_to_string_or_list_and_clearing_defaults(client: TestClient) -> None:
    template_id = create(client, reply_to=["a@acme.dev", "B <b@acme.dev>"])
    assert client.get(f"/templates/{template_id}").json()["reply_to"] == ["a@acme.dev", "B <b@acme.dev>"]
    client.patch(f"/templates/{template_id}", json={"reply_to": None, "from": None, "text": ""})
    got = client.get(f"/templates/{template_id}").json()
    assert (got["reply_to"], got["from"], got["text"]) == (None, None, "")


def test_duplicate_copies_latest_content_as_a_draft(client: TestClient) -> None:
    template_id = create(client)
    client.post(f"/templates/{template_id}/publish")
    client.patch(f"/templates/{template_id}", json={"html": "<p>draft</p>"})
    response = client.post("/templates/order-confirmation/duplicate")
    assert response.status_code == 200
    original = client.get(f"/templates/{template_id}").json()
    copy = client.get(f"/templates/{response.json()['id']}").json()
    assert (copy["name"], copy["alias"], copy["status"], copy["published_at"]) == (
        "order-confirmation (Copy)", None, "draft", None)
    assert (copy["html"], copy["has_unpublished_versions"]) == ("<p>draft</p>", True)
    assert [v["key"] for v in copy["variables"]] == ["PRODUCT", "PRICE"]
    assert not {v["id"] for v in copy["variables"]} & {v["id"] for v in original["variables"]}


def test_delete_removes_template_and_alias(client: TestClient) -> None:
    template_id = create(client)
    assert client.delete("/templates/order-confirmation").json() == {
        "object": "template", "id": template_id, "deleted": True}
    assert client.get(f"/templates/{template_id}").json() == UNKNOWN
    assert client.get("/templates").json() == {"object": "list", "data": [], "has_more": False}
    create(client)  # the alias is free again


def test_list_defaults_to_twenty(client: TestClient) -> None:
    for n in range(21):
        client.post("/templates", json={"name": f"t{n}", "html": "x"})
    page = client.get("/templates").json()
    assert len(page["data"]) == 20 and page["has_more"] is True
    assert list(page) == ["object", "data", "has_more"]
    assert page["data"][0]["name"] == "t20"


def test_same_seed_same_requests_same_bodies() -> None:
    def run() -> list[Any]:
        with TestClient(create_app(make_settings()), headers=AUTH) as client:
            template_id = create(client)
            client.post(f"/templates/{template_id}/duplicate")
            return [client.get(f"/templates/{template_id}").json(), client.get("/templates").json()]

    assert run() == run()


def test_emits_no_events(client: TestClient) -> None:
    template_id = create(client)
    client.patch(f"/templates/{template_id}", json={"name": "x"})
    client.post(f"/templates/{template_id}/publish")
    client.post(f"/templates/{template_id}/duplicate")
    client.delete(f"/templates/{template_id}")

    async def count() -> int:
        async with client.app.state.emu.transaction() as tx:  # type: ignore[attr-defined]
            row = await tx.one("SELECT COUNT(*) AS n FROM events")
        return int(row["n"])

    assert client.portal.call(count) == 0  # type: ignore[union-attr]


# ---- errors (templates.md §1 errors, §3, §5; 00-general.md §2.4, §4) ------------------------------

@pytest.mark.parametrize("missing", ["name", "html"])
def test_create_without_required_field(client: TestClient, missing: str) -> None:
    body = order_template()
    del body[missing]
    response = client.post("/templates", json=body)
    assert response.json() == {"statusCode": 422, "message": f"Missing `{missing}` field.",
                               "name": "missing_required_field"}


def test_fifty_variables_accepted_fifty_one_refused(client: TestClient) -> None:
    variables = [{"key": f"V{n}", "type": "string", "fallback_value": "x"} for n in range(51)]
    fifty = client.post("/templates", json={"name": "n", "html": "h", "variables": variables[:50]})
    assert fifty.status_code == 201
    response = client.post("/templates", json={"name": "n", "html": "h", "variables": variables})
    assert error_of(response) == (422, "validation_error")


@pytest.mark.parametrize("key", sorted(RESERVED_KEYS))
def test_reserved_variable_key(client: TestClient, key: str) -> None:
    response = client.post("/templates", json=order_template(variables=[{"key": key, "type": "string"}]))
    assert error_of(response) == (422, "validation_error")
    assert f"`{key}` is a reserved variable name" in response.json()["message"]


def test_reserved_keys_are_case_sensitive(client: TestClient) -> None:
    body = order_template(variables=[{"key": "email", "type": "string"}, {"key": "THIS", "type": "number"}])
    assert client.post("/templates", json=body).status_code == 201


@pytest.mark.parametrize("kind", ["boolean", "object", "list", "String", 1])
def test_variable_type_must_be_string_or_number(client: TestClient, kind: object) -> None:
    response = client.post("/templates", json=order_template(variables=[{"key": "A", "type": kind}]))
    assert error_of(response) == (422, "validation_error")


@pytest.mark.parametrize(("kind", "fallback"), [
    ("string", 5), ("number", "5"), ("number", True), ("string", ["a"]), ("string", "x" * 2001),
    ("number", 2**53), ("number", 1e300),
])
def test_fallback_must_match_type_and_limits(client: TestClient, kind: str, fallback: object) -> None:
    variables = [{"key": "A", "type": kind, "fallback_value": fallback}]
    response = client.post("/templates", json=order_template(variables=variables))
    assert error_of(response) == (422, "validation_error")


def test_duplicate_variable_key(client: TestClient) -> None:
    variables = [{"key": "A", "type": "string"}, {"key": "A", "type": "number"}]
    response = client.post("/templates", json=order_template(variables=variables))
    assert error_of(response) == (422, "validation_error")


@pytest.mark.parametrize("variable", [
    {"type": "string"}, {"key": "A"}, "A", {"key": "has-dash", "type": "string"},
    {"key": "K" * 51, "type": "string"}, {"key": "", "type": "string"},
])
def test_malformed_variable(client: TestClient, variable: object) -> None:
    status, name = error_of(client.post("/templates", json=order_template(variables=[variable])))
    assert status == 422 and name in {"validation_error", "missing_required_field"}


@pytest.mark.parametrize(("field", "value"), [
    ("name", 5), ("name", " "), ("html", ["<p>"]), ("alias", ""), ("alias", 3), ("from", "not an address"),
    ("from", "Acme <nope>"), ("subject", 1), ("reply_to", "bad"), ("reply_to", [1]), ("text", {}),
    ("variables", {"key": "A"}),
])
def test_malformed_field(client: TestClient, field: str, value: object) -> None:
    response = client.post("/templates", json=order_template(**{field: value}))
    assert error_of(response) == (422, "validation_error")


def test_alias_used_by_another_template(client: TestClient) -> None:
    create(client)
    assert error_of(client.post("/templates", json=order_template())) == (422, "validation_error")
    other = create(client, alias="other")
    assert error_of(client.patch(f"/templates/{other}", json={"alias": "order-confirmation"})) == (
        422, "validation_error")
    assert client.patch(f"/templates/{other}", json={"alias": "other"}).status_code == 200


@pytest.mark.parametrize(("method", "suffix"), [
    ("GET", ""), ("PATCH", ""), ("DELETE", ""), ("POST", "/publish"), ("POST", "/duplicate"),
])
@pytest.mark.parametrize("ref", ["no-such-alias", "00000000-0000-4000-8000-000000000000"])
def test_unknown_id_or_alias_is_not_found(client: TestClient, method: str, suffix: str, ref: str) -> None:
    response = client.request(method, f"/templates/{ref}{suffix}", json={})
    assert (response.status_code, response.json()) == (404, UNKNOWN)


@pytest.mark.parametrize("body", [
    {"name": None}, {"html": None}, {"variables": [{"key": "EMAIL", "type": "string"}]},
])
def test_update_validates_like_create(client: TestClient, body: dict[str, Any]) -> None:
    template_id = create(client)
    assert error_of(client.patch(f"/templates/{template_id}", json=body)) == (422, "validation_error")
    assert client.get(f"/templates/{template_id}").json()["html"] == ORDER_HTML


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=ten", "after=a&before=b", "after=nope"])
def test_list_pagination_errors(client: TestClient, query: str) -> None:
    assert error_of(client.get(f"/templates?{query}")) == (422, "validation_error")


def test_sending_access_key_is_restricted(client: TestClient) -> None:
    token = client.post("/api-keys", json={"name": "send", "permission": "sending_access"}).json()["token"]
    response = client.get("/templates", headers={"Authorization": f"Bearer {token}"})
    assert response.json() == {"statusCode": 401, "name": "restricted_api_key",
                               "message": "This API key is restricted to only send emails."}


def test_missing_api_key(client: TestClient) -> None:
    response = client.get("/templates", headers={"Authorization": ""})
    assert error_of(response) == (401, "missing_api_key")


# ---- the OpenAPI document as an oracle ---------------------------------------------------------

def test_fully_populated_responses_validate_against_openapi(client: TestClient) -> None:
    created = client.post("/templates", json=order_template(reply_to=["help@acme.dev"]))
    template_id = created.json()["id"]
    bodies = {
        "CreateTemplateResponseSuccess": created.json(),
        "UpdateTemplateResponseSuccess": client.patch(f"/templates/{template_id}", json={"name": "n"}).json(),
        "PublishTemplateResponseSuccess": client.post(f"/templates/{template_id}/publish").json(),
        "Template": client.get(f"/templates/{template_id}").json(),
        "ListTemplatesResponseSuccess": client.get("/templates").json(),
        "DuplicateTemplateResponseSuccess": client.post(f"/templates/{template_id}/duplicate").json(),
        "RemoveTemplateResponseSuccess": client.delete(f"/templates/{template_id}").json(),
    }
    for schema_name, body in bodies.items():
        check(schema_name, body)
