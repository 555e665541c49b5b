"""Property (issue 25): arbitrary text stored in any field that reaches a header, a file name, the request
log or the UI never makes a later view fail. Each example stores text through the API, inbound mail
(JSON and raw RFC 5322) and the control plane, answered with anything but a 5xx, and then every view
answers 200 (tests/views_helpers.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.views_helpers import assert_every_view_answers

ANY_TEXT = st.text(max_size=40)  # any code point, surrogates and controls included
LATIN1 = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
                 max_size=40)  # what an HTTP client can put in a request header
CONTENT = base64.b64encode(b"bytes").decode()
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _json(value: Any) -> bytes:
    # Lone surrogates are kept as JSON escapes (`\ud800`): the emulator must refuse them, not crash.
    return json.dumps(value).encode()


def _post(client: TestClient, path: str, body: Any, agent: str = "test") -> None:
    headers = {"content-type": b"application/json", "user-agent": agent.encode("latin-1")}
    response = client.post(path, content=_json(body), headers=headers)
    assert response.status_code < 500, (path, response.status_code, response.text[:300])


@st.composite
def stored_text(draw: st.DrawFn) -> dict[str, str]:
    return {name: draw(ANY_TEXT) for name in ("name", "subject", "header_name", "header_value", "filename",
                                               "content_type", "content_id", "tag", "html", "text")}


def _api_sends(client: TestClient, text: dict[str, str], agent: str) -> None:
    attachment = {"filename": text["filename"], "content": CONTENT, "content_type": text["content_type"]}
    inline = {"filename": text["filename"] or "x", "content": CONTENT, "content_id": text["content_id"]}
    full = {"from": f"{text['name']} <hello@mail.acme.dev>", "to": [f"{text['name']} <lin@example.org>"],
            "subject": text["subject"], "html": text["html"] or "<p>x</p>", "text": text["text"],
            "headers": {text["header_name"]: text["header_value"]},
            "tags": [{"name": text["tag"], "value": text["tag"]}], "attachments": [attachment, inline]}
    _post(client, "/emails", full, agent)
    # Each field alone as well, so one bad field does not hide what the others would have stored.
    base = {"from": "hello@mail.acme.dev", "to": ["lin@example.org"], "subject": "s", "html": "<p>x</p>"}
    for field in ("subject", "headers", "attachments", "from", "tags"):
        _post(client, "/emails", {**base, field: full[field]})
    _post(client, "/emails", {**base, "attachments": [attachment]})
    _post(client, "/emails", {**base, "attachments": [inline]})
    _post(client, "/api-keys", {"name": text["name"]})
    hook = f"http://127.0.0.1:9/{text['subject']}"
    _post(client, "/webhooks", {"endpoint": hook, "events": ["email.sent"]})
    _post(client, "/contacts", {"email": "ada@example.org", "first_name": text["name"]})
    _post(client, "/emails", {text["name"]: text["subject"]})  # any key and value reach the request log


def _inbound(client: TestClient, text: dict[str, str]) -> None:
    _post(client, "/_emulator/inbound", {
        "from": "jane@customer.io", "to": "help@in.acme.dev", "subject": text["subject"],
        "html": text["html"], "text": text["text"], "headers": {text["header_name"]: text["header_value"]},
        "attachments": [{"filename": text["filename"], "content": CONTENT,
                         "content_type": text["content_type"], "content_id": text["content_id"]}]})
    raw = (f"From: {text['name']} <jane@customer.io>\r\nTo: help@in.acme.dev\r\n"
           f"Subject: {text['subject']}\r\n{text['header_name']}: {text['header_value']}\r\n"
           "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
           f"--b\r\nContent-Type: text/plain\r\n\r\n{text['text']}\r\n--b\r\n"
           f"Content-Type: {text['content_type']}\r\nContent-Disposition: attachment;"
           f" filename=\"{text['filename']}\"\r\n\r\n{text['html']}\r\n--b--\r\n")
    response = client.post("/_emulator/inbound", content=raw.encode("utf-8", "surrogatepass"),
                           headers={"content-type": "message/rfc822"})
    assert response.status_code < 500, response.text[:300]


@PROPERTY
@given(text=stored_text(), agent=LATIN1)
def test_stored_text_never_breaks_a_view(client: TestClient, text: dict[str, str], agent: str) -> None:
    assert client.post("/_emulator/reset").status_code == 200
    client.post("/domains", json={"name": "in.acme.dev",
                                  "capabilities": {"sending": "disabled", "receiving": "enabled"}})
    _api_sends(client, text, agent)
    _inbound(client, text)
    assert_every_view_answers(client)
