"""Robustness: every routed operation and every control-plane route, fed random paths, queries and JSON
bodies (hostile ones too), answers with a Resend-shaped error or a success — never a 500 (hypothesis)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route
from starlette.testclient import TestClient

from emulator.api.ops import Op
from emulator.app import all_ops, control_plane_routes, create_app
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


# Hostile input (issue 11): line breaks and NULs in every string, lone surrogates, numbers past any
# date or float, nesting past any sane depth, and bodies in UTF-16/32. Each must get a 4xx, never a 500.
LONE = "\ue000"  # a private-use stand-in, swapped for `\ud800` in the JSON text (Python cannot encode it)
INJECTIONS = ["\r\n", "\n", "\r", "\x00", "\r\nBcc: victim@example.org", LONE, "\u2028", "\ufeff"]
hostile_text = st.builds(lambda head, bad, tail: head + bad + tail, st.text(max_size=8),
                         st.sampled_from(INJECTIONS), st.text(max_size=8))
huge_numbers = st.sampled_from([10 ** 30, -(10 ** 30), 2 ** 63, 2 ** 64, 1e308, -1e308, 5e-324, 1e300])
hostile_scalars = scalars | hostile_text | huge_numbers | st.just("in 99999999999999999999 days")
CONTROL_FIELDS = ["at", "days", "seconds", "minutes", "hours", "ms", "scenario", "name", "raw", "recipients",
                  "authentication", "api_key", "method", "path", "error", "times", "status", "outcome",
                  "link", "email", "endpoint", "retry_scale", "verified", "key", "token", "domains", "emails",
                  "api_keys", "templates", "webhooks", "contacts", "topics", "segments", "demo", *FIELD_NAMES]
hostile_values = st.recursive(hostile_scalars, lambda inner: st.lists(inner, max_size=3) |
                              st.dictionaries(st.sampled_from(CONTROL_FIELDS) | hostile_text, inner,
                                              max_size=4), max_leaves=10)
# Streams and long polls answer only when something happens or their timeout passes: nothing to fuzz.
LONG_POLLS = ("/events", "/wait", "/live")
# Snapshot routes write and read files named by the body: they are covered by test_safety_snapshots.
CONTROL_ROUTES = [(method, route.path) for route in control_plane_routes(create_app(make_settings()))
                  if isinstance(route, Route) and route.path.startswith("/_emulator/")
                  and "/snapshot/" not in route.path and not route.path.endswith(LONG_POLLS)
                  for method in sorted(route.methods or ()) if method != "HEAD"]


def _hostile_text(body: Any, depth: int, encoding: str) -> bytes:
    text = json.dumps(body).replace("\\ue000", "\\ud800")  # ensure_ascii: every LONE is escaped
    return ("[" * depth + text + "]" * depth).encode(encoding)


def _hostile_request(client: TestClient, method: str, path: str, fields: list[str],
                     data: st.DataObject) -> None:
    body = data.draw(st.dictionaries(st.sampled_from(fields), hostile_values, max_size=6) | hostile_values)
    depth = data.draw(st.sampled_from([0, 0, 0, 0, 150, 10_000]))
    encoding = data.draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32"]))
    content = _hostile_text(body, depth, encoding)
    query = {key: value.replace(LONE, "") for key, value in data.draw(queries).items()}
    response = client.request(method, path, params=query, content=content,
                              headers={"content-type": "application/json"})
    assert response.status_code < 500, (method, path, body, depth, encoding, response.text)


@pytest.mark.parametrize("op", all_ops(), ids=lambda op: f"{op.method} {op.path}")
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_input_never_fails_with_a_server_error(fuzz_client: TestClient, op: Op,
                                                       data: st.DataObject) -> None:
    path = _path(op, lambda: data.draw(segments))
    _hostile_request(fuzz_client, op.method, path, _request_fields(op) or FIELD_NAMES, data)


@pytest.fixture(scope="module")
def control_client() -> Iterator[TestClient]:
    with api_client(make_settings()) as client:
        yield client


@pytest.mark.parametrize(("method", "path"), CONTROL_ROUTES, ids=lambda value: str(value))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_control_plane_never_fails_with_a_server_error(control_client: TestClient, method: str, path: str,
                                                           data: st.DataObject) -> None:
    concrete = "/".join(quote(data.draw(segments), safe="") if part.startswith("{") else part
                        for part in path.split("/"))
    _hostile_request(control_client, method, concrete, CONTROL_FIELDS, data)
