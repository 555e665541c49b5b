"""Inboxes: create, list, get by id or address, update, delete, counts (reference/inboxes.md §3.1–3.4)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings
from tests.inboxes_helpers import ADDRESS, DOMAIN, conversation, create_inbox, error, receiving_domain

NOW = "2026-05-14T09:00:00.000Z"


@pytest.fixture
def inbox(client: TestClient) -> dict[str, Any]:
    receiving_domain(client)
    return create_inbox(client, name="Customer Support", from_name="Ada from Support")


def test_create_answers_201_with_the_full_inbox(client: TestClient) -> None:
    domain_id = receiving_domain(client)
    created = client.post("/inboxes", json={"email_address": " Help@Support.Acme.dev ",
                                            "from_name": "Ada from Support"})
    assert created.status_code == 201
    body = created.json()
    assert body == {"object": "inbox", "id": body["id"], "name": ADDRESS, "email_address": ADDRESS,
                    "domain_id": domain_id, "receiving_address": None, "from_name": "Ada from Support",
                    "unread": 0, "drafts": 0, "last_received": None, "created_at": NOW, "updated_at": NOW}


def test_get_by_id_and_by_address_case_insensitive(client: TestClient, inbox: dict[str, Any]) -> None:
    by_id = client.get(f"/inboxes/{inbox['id']}").json()
    by_address = client.get("/inboxes/HELP%40support.acme.dev").json()
    assert by_id == by_address == inbox


def test_list_is_newest_first_with_list_item_fields(client: TestClient, inbox: dict[str, Any]) -> None:
    second = create_inbox(client, "sales@" + DOMAIN)
    listed = client.get("/inboxes").json()
    assert listed["object"] == "list" and listed["has_more"] is False
    assert [item["id"] for item in listed["data"]] == [second["id"], inbox["id"]]
    assert listed["data"][1] == {"id": inbox["id"], "name": "Customer Support", "email_address": ADDRESS,
                                 "from_name": "Ada from Support", "unread": 0, "last_received": None,
                                 "created_at": NOW, "updated_at": NOW}
    page = client.get("/inboxes", params={"limit": 1}).json()
    assert page["has_more"] is True and page["data"][0]["id"] == second["id"]
    older = client.get("/inboxes", params={"limit": 1, "after": second["id"]}).json()
    assert older["has_more"] is False and older["data"][0]["id"] == inbox["id"]


def test_update_answers_object_and_id_and_changes_names(client: TestClient, inbox: dict[str, Any]) -> None:
    reply = client.patch(f"/inboxes/{inbox['id']}", json={"name": "Help desk", "from_name": ""})
    assert reply.status_code == 200
    assert reply.json() == {"object": "inbox", "id": inbox["id"]}
    after = client.get(f"/inboxes/{inbox['id']}").json()
    assert (after["name"], after["from_name"]) == ("Help desk", None)


def test_delete_removes_the_inbox_and_its_threads(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    reply = client.delete(f"/inboxes/{ADDRESS}")
    assert reply.json() == {"object": "inbox", "id": inbox["id"], "deleted": True}
    assert error(client.get(f"/inboxes/{inbox['id']}")) == (404, "not_found")
    assert client.get(f"/inboxes/{inbox['id']}").json()["message"] == "Inbox not found."
    assert error(client.delete(f"/inboxes/{inbox['id']}")) == (404, "not_found")


def test_unread_counts_threads_and_drafts_counts_unsent(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 2)
    thread_id = client.get(f"/inboxes/{inbox['id']}/threads").json()["data"][0]["id"]
    client.post(f"/inboxes/{inbox['id']}/drafts", json={"subject": "Hello"})
    counts = client.get(f"/inboxes/{inbox['id']}").json()
    assert (counts["unread"], counts["drafts"], counts["last_received"]) == (1, 1, NOW)
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"read": True})
    assert client.get(f"/inboxes/{inbox['id']}").json()["unread"] == 0
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": "archive", "read": False})
    # Unread counts the Inbox folder only.
    assert client.get(f"/inboxes/{inbox['id']}").json()["unread"] == 0


def test_forwarding_inbox_gets_a_receiving_address_that_receives(client: TestClient) -> None:
    client.post("/domains", json={"name": "plain.acme.dev"})
    created = client.post("/inboxes", json={"email_address": "team@plain.acme.dev", "forwarding": True})
    assert created.status_code == 201, created.text
    receiving = created.json()["receiving_address"]
    managed = client.get("/_emulator/inbound/address").json()["domain"]
    assert receiving == f"team.plain@{managed}"
    injected = client.post("/_emulator/inbound", json={"from": "ada@example.org", "to": receiving,
                                                       "subject": "Hi", "text": "Hello"})
    assert injected.status_code == 200
    threads = client.get(f"/inboxes/{created.json()['id']}/threads").json()["data"]
    assert [t["subject"] for t in threads] == ["Hi"]


@pytest.mark.parametrize(("body", "status", "name"), [
    ({}, 422, "missing_required_field"),
    ({"email_address": "not-an-address"}, 422, "validation_error"),
    ({"email_address": ".dot@support.acme.dev"}, 422, "validation_error"),
    ({"email_address": "help@unknown.dev"}, 422, "validation_error"),
    ({"email_address": "help@support.acme.dev", "from_name": "Ada <ada@x.dev>"}, 422, "validation_error"),
    ({"email_address": "help@support.acme.dev", "name": "x" * 65}, 422, "validation_error"),
])
def test_create_errors(client: TestClient, body: dict[str, Any], status: int, name: str) -> None:
    receiving_domain(client)
    assert error(client.post("/inboxes", json=body)) == (status, name)
    assert client.get("/inboxes").json()["data"] == []


def test_domain_without_receiving_needs_forwarding(client: TestClient) -> None:
    client.post("/domains", json={"name": "plain.acme.dev"})
    reply = client.post("/inboxes", json={"email_address": "team@plain.acme.dev"})
    assert error(reply) == (422, "validation_error")


def test_duplicate_address_is_a_409(client: TestClient, inbox: dict[str, Any]) -> None:
    assert error(client.post("/inboxes", json={"email_address": ADDRESS})) == (409, "conflict")


def test_update_needs_a_field_and_unknown_inbox_is_404(client: TestClient, inbox: dict[str, Any]) -> None:
    assert error(client.patch(f"/inboxes/{inbox['id']}", json={})) == (422, "validation_error")
    missing = client.get("/inboxes/7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34")
    assert error(missing) == (404, "not_found") and missing.json()["message"] == "Inbox not found."
    assert error(client.get("/inboxes/not-a-uuid")) == (422, "invalid_parameter")


def test_list_pagination_errors(client: TestClient, inbox: dict[str, Any]) -> None:
    assert error(client.get("/inboxes", params={"limit": 101})) == (422, "validation_error")
    both = client.get("/inboxes", params={"after": inbox["id"], "before": inbox["id"]})
    assert error(both) == (422, "validation_error")
    unknown = client.get("/inboxes", params={"after": "7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34"})
    assert error(unknown) == (404, "not_found")


def test_strict_domains_require_a_verified_domain() -> None:
    with api_client(make_settings(strict_domains=True)) as strict:
        receiving_domain(strict)
        reply = strict.post("/inboxes", json={"email_address": ADDRESS})
        assert error(reply) == (422, "validation_error")
        assert "not verified" in reply.json()["message"]


def test_another_account_sees_none_of_the_inbox() -> None:
    with api_client(make_settings(isolate_keys=True)) as owner:
        receiving_domain(owner)
        inbox = create_inbox(owner)
        conversation(owner, 1)
        other = {"Authorization": "Bearer re_someone_else"}
        assert owner.get("/inboxes", headers=other).json()["data"] == []
        assert error(owner.get(f"/inboxes/{inbox['id']}", headers=other)) == (404, "not_found")
        assert error(owner.get(f"/inboxes/{ADDRESS}/threads", headers=other)) == (404, "not_found")
        assert len(owner.get(f"/inboxes/{inbox['id']}/threads").json()["data"]) == 1


def test_same_requests_on_a_fresh_emulator_give_the_same_ids() -> None:
    def run() -> list[Any]:
        with api_client(make_settings()) as fresh:
            receiving_domain(fresh)
            inbox = create_inbox(fresh)
            conversation(fresh, 2)
            return [fresh.get(f"/inboxes/{inbox['id']}/threads/{thread['id']}").json()
                    for thread in fresh.get(f"/inboxes/{inbox['id']}/threads").json()["data"]]
    assert run() == run()


def test_a_snapshot_restores_inboxes_and_threads(client: TestClient, inbox: dict[str, Any],
                                                 tmp_path: Any) -> None:
    conversation(client, 2)
    before = client.get(f"/inboxes/{inbox['id']}/threads").json()
    path = str(tmp_path / "state.db")
    assert client.post("/_emulator/snapshot/save", json={"path": path}).status_code == 200
    client.delete(f"/inboxes/{inbox['id']}")
    assert client.post("/_emulator/snapshot/restore", json={"path": path}).status_code == 200
    assert client.get(f"/inboxes/{inbox['id']}/threads").json() == before
