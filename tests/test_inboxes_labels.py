"""Labels (seed §2.10) and agent settings (seed §2.11) of an inbox (reference/inboxes.md §3.11–3.12)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.inboxes_helpers import conversation, create_inbox, error, only_thread, receiving_domain

NOW = "2026-05-14T09:00:00.000Z"
UNKNOWN = "7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34"


@pytest.fixture
def inbox(client: TestClient) -> dict[str, Any]:
    receiving_domain(client)
    return create_inbox(client)


def labels_path(inbox: dict[str, Any]) -> str:
    return f"/inboxes/{inbox['id']}/labels"


def test_create_list_update_labels(client: TestClient, inbox: dict[str, Any]) -> None:
    urgent = client.post(labels_path(inbox), json={"name": "Urgent", "color": "crimson"})
    assert urgent.status_code == 201
    assert urgent.json() == {"object": "inbox_label", "id": urgent.json()["id"], "name": "Urgent",
                             "color": "crimson", "created_at": NOW}
    plain = client.post(labels_path(inbox), json={"name": "Later"}).json()
    assert plain["color"] == "mauve"
    listed = client.get(labels_path(inbox)).json()
    assert listed == {"object": "list", "data": [urgent.json(), plain]}
    updated = client.patch(f"{labels_path(inbox)}/{plain['id']}", json={"name": "Someday", "color": "teal"})
    assert updated.json() == {"object": "inbox_label", "id": plain["id"]}
    assert client.get(labels_path(inbox)).json()["data"][1]["name"] == "Someday"


def test_deleting_a_label_answers_the_seed_result_and_leaves_threads(client: TestClient,
                                                                      inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    label = client.post(labels_path(inbox), json={"name": "Urgent", "color": "crimson"}).json()
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"label_id": label["id"]})
    assert only_thread(client, inbox["id"])["labels"] == [{"id": label["id"], "name": "Urgent",
                                                           "color": "crimson"}]
    deleted = client.delete(f"{labels_path(inbox)}/{label['id']}")
    assert deleted.json() == {"object": "inbox_label", "id": label["id"], "deleted": True}
    assert only_thread(client, inbox["id"])["labels"] == []
    assert client.get(labels_path(inbox)).json()["data"] == []
    assert error(client.delete(f"{labels_path(inbox)}/{label['id']}")) == (404, "not_found")


@pytest.mark.parametrize(("body", "status", "name"), [
    ({}, 422, "missing_required_field"),
    ({"name": ""}, 422, "validation_error"),
    ({"name": "x", "color": "red"}, 422, "validation_error"),
])
def test_label_create_errors(client: TestClient, inbox: dict[str, Any], body: dict[str, Any], status: int,
                             name: str) -> None:
    assert error(client.post(labels_path(inbox), json=body)) == (status, name)


def test_label_update_errors(client: TestClient, inbox: dict[str, Any]) -> None:
    label = client.post(labels_path(inbox), json={"name": "Urgent"}).json()
    assert error(client.patch(f"{labels_path(inbox)}/{label['id']}", json={})) == (422, "validation_error")
    bad = client.patch(f"{labels_path(inbox)}/{label['id']}", json={"color": "pink"})
    assert error(bad) == (422, "validation_error")
    missing = client.patch(f"{labels_path(inbox)}/{UNKNOWN}", json={"name": "x"})
    assert missing.json()["message"] == f'Label "{UNKNOWN}" not found.'


def test_an_inbox_without_agent_has_empty_settings(client: TestClient, inbox: dict[str, Any]) -> None:
    settings = client.get(f"/inboxes/{inbox['id']}/agent").json()
    # Seed §2.11 keys and values; `actions` is the SDK preview's name for the same list.
    assert settings == {"object": "inbox_agent", "instructions": None, "tone": None, "enabled_actions": [],
                        "actions": []}


def test_agent_update_replaces_actions_and_null_clears(client: TestClient, inbox: dict[str, Any]) -> None:
    path = f"/inboxes/{inbox['id']}/agent"
    first = client.patch(path, json={"instructions": "Be kind.", "tone": "concise_professional",
                                     "enabled_actions": ["draft_reply", "archive_thread"]})
    assert first.status_code == 200
    agent_id = first.json()["id"]
    assert first.json() == {"object": "inbox_agent", "id": agent_id}
    assert client.get(path).json() == {"object": "inbox_agent", "instructions": "Be kind.",
                                       "tone": "concise_professional",
                                       "enabled_actions": ["draft_reply", "archive_thread"],
                                       "actions": ["draft_reply", "archive"]}
    second = client.patch(path, json={"tone": None, "actions": ["move_to_trash"]}).json()
    assert second == {"object": "inbox_agent", "id": agent_id}
    assert client.get(path).json()["enabled_actions"] == ["delete_thread"]
    assert client.get(path).json()["instructions"] == "Be kind."
    client.patch(path, json={"enabled_actions": []})
    assert client.get(path).json()["enabled_actions"] == []


@pytest.mark.parametrize("body", [
    {},
    {"instructions": ""},
    {"instructions": "x" * 4001},
    {"tone": ""},
    {"tone": "x" * 65},
    {"enabled_actions": ["send_money"]},
    {"enabled_actions": "draft_reply"},
])
def test_agent_update_errors_change_nothing(client: TestClient, inbox: dict[str, Any],
                                           body: dict[str, Any]) -> None:
    path = f"/inboxes/{inbox['id']}/agent"
    assert error(client.patch(path, json=body)) == (422, "validation_error")
    assert client.get(path).json()["enabled_actions"] == []
