"""Hostile input gets a fast 4xx and leaves nothing unreadable behind (issue 11): linear-time parsing of
addresses and HTML scans, CR/LF/NUL refused in every field that becomes a header."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.emails_helpers import email

# Seconds of this process's CPU time (all threads, the in-process server's included): the defects burnt
# 8–35 s. CPU time, not wall time, so a loaded machine (other processes' time) does not count.
GENEROUS = 2.0


def test_a_100_kb_from_of_spaces_is_refused_at_once(client: TestClient) -> None:
    for hostile in (" " * 100_000, "a" + " " * 100_000 + "<x@y.dev", "Name" + " " * 100_000 + "<nope>"):
        started = time.process_time()
        response = client.post("/emails", json=email(**{"from": hostile}))
        assert time.process_time() - started < GENEROUS
        assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_a_long_run_of_spaces_in_img_src_does_not_stall_the_message_page(client: TestClient) -> None:
    sent = client.post("/emails", json=email(html="<img src=" + " " * 32_000 + "x>"))
    started = time.process_time()
    page = client.get(f"/_emulator/ui/messages/{sent.json()['id']}")
    assert time.process_time() - started < GENEROUS
    assert page.status_code == 200


ATTACHMENT = {"content": base64.b64encode(b"hi").decode()}


@pytest.mark.parametrize(
    "fields",
    [
        {"subject": "Hello\r\nBcc: everyone@example.org"},
        {"subject": "Hello\nthere"},
        {"subject": "Nul\x00byte"},
        {"from": "Acme\r\nBcc: x@y.dev <hello@mail.acme.dev>"},
        {"from": "Acme\x00 <hello@mail.acme.dev>"},
        {"to": ["Lin\n <lin@example.org>"]},
        {"attachments": [{**ATTACHMENT, "filename": "a\r\nb.txt"}]},
        {"attachments": [{**ATTACHMENT, "filename": "nul\x00.txt"}]},
        {"headers": {"X-Ref": "a\x00b"}},
    ],
)
def test_line_breaks_and_nul_in_header_fields_are_422_and_store_nothing(
    client: TestClient, fields: dict[str, Any]
) -> None:
    response = client.post("/emails", json=email(**fields))
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")
    assert client.get("/_emulator/outbox").json()["data"] == []


def test_a_broadcast_subject_never_carries_a_contacts_line_break(client: TestClient) -> None:
    segment_id = client.post("/segments", json={"name": "All"}).json()["id"]
    contact_id = client.post(
        "/contacts", json={"email": "lin@example.org", "first_name": "Lin\r\nBcc: x"}
    ).json()["id"]
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    client.post(
        "/broadcasts",
        json={
            "segment_id": segment_id,
            "from": "a@acme.dev",
            "subject": "Hi {{{FIRST_NAME}}}",
            "text": "t",
            "send": True,
        },
    )
    client.post("/_emulator/flush")
    [sent] = client.get("/_emulator/outbox").json()["data"]
    assert sent["subject"] == "Hi Lin Bcc: x"
    assert client.get(f"/_emulator/outbox/{sent['id']}.eml").status_code == 200
    assert client.get(f"/_emulator/ui/messages/{sent['id']}").status_code == 200
