"""Robustness: every routed operation, fed random paths, queries and JSON bodies, answers with a
Resend-shaped error or a success — never a 500, never a traceback (hypothesis)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from emulator.api.ops import Op
from emulator.app import all_ops
from tests.conftest import api_client, make_settings
from tests.openapi_oracle import SPEC, _document

FIELD_NAMES = ["from", "to", "cc", "bcc", "reply_to", "subject", "html", "text", "headers", "attachments",
               "tags", "scheduled_at", "template", "variables", "name", "alias", "region", "capabilities",
               "endpoint", "events", "status", "permission", "domain_id", "limit", "id", "content",
               "filename", "path", "content_id", "value", "expires_in", "tracking_subdomain", "tls"]
scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | \
    st.text(max_size=40)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) |
                           st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), inner,
                                           max_size=5), max_leaves=12)
bodies = st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=8) | json_values
# Ids of real resources (filled by the fixture), so paths also reach past the "not found" check.
KNOWN_IDS: list[str] = []
known_ids = st.integers(0, 1000).map(lambda index: KNOWN_IDS[index % len(KNOWN_IDS)] if KNOWN_IDS else "")
segments = known_ids | st.sampled_from(["00000000-0000-4000-8000-000000000000", "not-a-uuid", "", "%00",
                                        "a" * 300]) | st.text(max_size=12)
queries = st.dictionaries(st.sampled_from(["limit", "after", "before", "status", "x"]),
                          st.text(max_size=10), max_size=3)


def _request_fields(op: Op) -> list[str]:
    """Field names of the operation's request schema, so bodies reach past the first check."""
    if not SPEC.exists():
        return []
    operation = _document()["paths"].get(op.path, {}).get(op.method.lower(), {})
    text = json.dumps(operation.get("requestBody", {}))
    refs = [part.split('"')[0] for part in text.split("#/components/schemas/")[1:]]
    schemas = _document()["components"]["schemas"]
    return [name for ref in refs for name in schemas.get(ref, {}).get("properties", {})]


@pytest.fixture(scope="module")
def fuzz_client() -> Iterator[TestClient]:
    with api_client(make_settings()) as client:
        KNOWN_IDS[:] = [
            client.post("/domains", json={"name": "fuzz.acme.dev"}).json()["id"],
            client.post("/templates", json={"name": "t", "alias": "order-confirmation",
                                            "html": "<p>{{{NAME}}}</p>"}).json()["id"],
            "order-confirmation",
            client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/hook",
                                           "events": ["email.sent"]}).json()["id"],
            client.post("/emails", json={
                "from": "a@fuzz.acme.dev", "to": ["delivered@resend.dev"], "subject": "s", "text": "t",
                "scheduled_at": "in 1 hour"}).json()["id"],
        ]
        yield client


def _path(op: Op, draw_segment: Any) -> str:
    parts = [quote(draw_segment(), safe="") if part.startswith("{") else part for part in op.path.split("/")]
    return "/".join(parts)


@pytest.mark.parametrize("op", all_ops(), ids=lambda op: f"{op.method} {op.path}")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_operation_never_fails_with_a_server_error(fuzz_client: TestClient, op: Op,
                                                   data: st.DataObject) -> None:
    fields = _request_fields(op) or FIELD_NAMES
    body = data.draw(st.dictionaries(st.sampled_from(fields), json_values, max_size=6) | bodies)
    path = _path(op, lambda: data.draw(segments))
    response = fuzz_client.request(op.method, path, params=data.draw(queries),
                                   content=json.dumps(body), headers={"content-type": "application/json"})
    assert response.status_code < 500, (op.operation_id, path, body, response.text)
