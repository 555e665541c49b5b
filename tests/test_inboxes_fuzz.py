"""No inbox operation answers a server error, whatever the body and query: bodies built from the inbox
field names with values of every JSON type, paths through real inbox, thread, email, draft and label ids."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from emulator.api.ops import Op
from emulator.resources.inboxes import OPS
from tests.conftest import api_client, make_settings
from tests.inboxes_helpers import ADDRESS, conversation, receiving_domain

FIELDS = ["email_address", "name", "from_name", "forwarding", "read", "folder", "label_id", "labels", "to",
          "cc", "bcc", "subject", "html", "text", "thread_id", "reply_to_email_id", "attachments", "headers",
          "reply_all", "color", "instructions", "tone", "enabled_actions", "actions"]
QUERY = ["limit", "after", "before", "folder", "folders", "label", "labels", "read", "query", "from", "to",
         "has_attachment", "start_date", "end_date"]
scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | \
    st.text(max_size=30) | st.sampled_from(["9999-12-31", "0001-01-01", "2026-05-14T09:00:00Z", "inbox",
                                            "sent", "crimson", "ada@example.org", "draft_reply"])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) |
                      st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
IDS: dict[str, str] = {}


@pytest.fixture(scope="module")
def fuzz_client() -> Iterator[TestClient]:
    with api_client(make_settings()) as client:
        receiving_domain(client)
        inbox = client.post("/inboxes", json={"email_address": ADDRESS}).json()
        email_id = conversation(client, 1)[0]
        thread = client.get(f"/inboxes/{inbox['id']}/threads").json()["data"][0]
        draft = client.post(f"/inboxes/{inbox['id']}/drafts", json={"subject": "s"}).json()
        label = client.post(f"/inboxes/{inbox['id']}/labels", json={"name": "L"}).json()
        IDS.update(inbox_id=inbox["id"], thread_id=thread["id"], email_id=email_id, draft_id=draft["id"],
                   label_id=label["id"])
        yield client


def _path(op: Op, swap: str | None) -> str:
    path = op.path
    for name, value in IDS.items():
        path = path.replace("{" + name + "}", swap if swap is not None and name == "inbox_id" else value)
    return path


@pytest.mark.parametrize("op", OPS, ids=lambda op: f"{op.method} {op.path}")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_inbox_operation_never_fails_with_a_server_error(fuzz_client: TestClient, op: Op,
                                                         data: st.DataObject) -> None:
    body = data.draw(st.dictionaries(st.sampled_from(FIELDS), values, max_size=6))
    query = data.draw(st.dictionaries(st.sampled_from(QUERY), scalars.map(str), max_size=6))
    if op.method == "DELETE" and "/threads/" not in op.path:
        return  # deleting the shared inbox, draft or label would end the other examples' paths
    path = _path(op, data.draw(st.none() | st.sampled_from(["x@y", "not-a-uuid", "%40"])))
    response = fuzz_client.request(op.method, path, params=query, content=json.dumps(body),
                                   headers={"content-type": "application/json"})
    assert response.status_code < 500, (op.operation_id, path, body, query, response.text)
