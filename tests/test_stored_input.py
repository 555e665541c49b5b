"""Inputs that used to be accepted and then break a later view (issue 25, items 1–8): each is answered
as the real service would, and afterwards every view still answers 200."""

from __future__ import annotations

import asyncio
import base64
import json
import smtplib
import time
from email.message import EmailMessage
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.app import control_plane_routes
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, api_client, make_settings
from tests.emails_helpers import email
from tests.oauth_helpers import authorize_params, register
from tests.views_helpers import assert_every_view_answers

NAME = "Übersicht ✓ 2026.bin"
GENEROUS = 2.0  # CPU seconds: the defects took 4–60 s on 50–100 KB; these inputs now take under 0.5 s


@pytest.fixture
def inbound(client: TestClient) -> TestClient:
    created = client.post("/domains", json={"name": "in.acme.dev",
                                            "capabilities": {"sending": "disabled", "receiving": "enabled"}})
    assert created.status_code == 201
    return client


def _filename_of(disposition: str) -> str:
    star = disposition.split("filename*=UTF-8''", 1)[1]
    return unquote(star.split(";")[0])


# ---- 1. attachment names outside Latin-1 -------------------------------------------------------

def test_an_attachment_named_outside_latin1_downloads_everywhere(client: TestClient) -> None:
    content = base64.b64encode(b"report").decode()
    sent = client.post("/emails", json=email(attachments=[{"filename": NAME, "content": content}]))
    email_id = sent.json()["id"]
    [attachment] = client.get(f"/emails/{email_id}/attachments").json()["data"]
    assert attachment["filename"] == NAME
    download = client.get(attachment["download_url"])
    assert (download.status_code, download.content) == (200, b"report")
    assert _filename_of(download.headers["content-disposition"]) == NAME
    ui = client.get(f"/_emulator/ui/messages/{email_id}/attachments/{attachment['id']}")
    assert _filename_of(ui.headers["content-disposition"]) == NAME
    assert_every_view_answers(client)


@pytest.fixture(scope="module")
def smtp_server() -> Any:
    with EmulatorServer(make_settings(port=0, smtp=True, smtp_port=0, smtps_port=0)) as running:
        yield running


def test_an_attachment_named_outside_latin1_over_smtp_downloads(smtp_server: EmulatorServer) -> None:
    smtp_server.reset()
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "hello@mail.acme.dev", "lin@example.org", "Files"
    message.set_content("see attached")
    message.add_attachment(b"report", maintype="application", subtype="octet-stream", filename=NAME)
    with smtplib.SMTP("127.0.0.1", smtp_server.smtp_port, timeout=30) as smtp:
        smtp.starttls()
        smtp.login("resend", "re_test_123")
        smtp.send_message(message)
    with httpx.Client(base_url=smtp_server.url, headers=AUTH, timeout=30) as api:
        [sent] = api.get("/emails").json()["data"]
        [attachment] = api.get(f"/emails/{sent['id']}/attachments").json()["data"]
        assert attachment["filename"] == NAME
        download = api.get(attachment["download_url"])
        assert download.status_code == 200 and _filename_of(download.headers["content-disposition"]) == NAME
        page = api.get(f"/_emulator/ui/messages/{sent['id']}/attachments/{attachment['id']}")
        assert page.status_code == 200 and _filename_of(page.headers["content-disposition"]) == NAME


# ---- 2. a body that starts with a BOM ----------------------------------------------------------

def test_a_body_with_a_byte_order_mark_leaves_the_request_log_readable(client: TestClient) -> None:
    body = b"\xef\xbb\xbf" + httpx.Request("POST", "/", json=email()).content
    accepted = client.post("/emails", content=body, headers={"content-type": "application/json"})
    assert accepted.status_code == 200
    refused = client.post("/emails", content=b"\xef\xbb\xbf{}", headers={"content-type": "application/json"})
    assert refused.status_code == 422
    [log_refused, log_sent] = client.get("/logs").json()["data"]
    assert client.get(f"/logs/{log_sent['id']}").json()["request_body"] == email()
    assert client.get(f"/logs/{log_refused['id']}").json()["request_body"] == {}
    page = client.get("/_emulator/ui/logs")
    assert page.status_code == 200 and "Your receipt" in page.text
    assert_every_view_answers(client)


# ---- 3. inbound JSON with a Message-ID header ---------------------------------------------------

def test_inbound_json_may_set_its_own_message_id(inbound: TestClient) -> None:
    reply = inbound.post("/_emulator/inbound", json={
        "from": "jane@customer.io", "to": "help@in.acme.dev", "subject": "Hi", "text": "hello",
        "headers": {"Message-ID": "<chosen@customer.io>", "Date": "Thu, 14 May 2026 09:00:00 +0000"}})
    assert reply.status_code == 200, reply.text
    [received] = inbound.get("/emails/receiving").json()["data"]
    assert received["message_id"] == "<chosen@customer.io>"
    raw = inbound.get(inbound.get(f"/emails/receiving/{received['id']}").json()["raw"]["download_url"])
    assert raw.content.count(b"Message-ID:") == 1
    assert_every_view_answers(inbound)


@pytest.mark.parametrize(("body", "field"), [
    ({"headers": {"Bad Name": "x"}}, "headers"),
    ({"headers": {"X-Ok": "a\r\nBcc: x@y.dev"}}, "headers"),
    ({"attachments": [{"content": "aGk=", "filename": "a\r\nb"}]}, "attachments"),
    ({"attachments": [{"content": "aGk=", "content_type": "multipart/mixed"}]}, "attachments"),
    ({"attachment": []}, "attachment"),
])
def test_inbound_json_that_cannot_make_a_message_is_422(inbound: TestClient, body: dict[str, Any],
                                                       field: str) -> None:
    reply = inbound.post("/_emulator/inbound", json={"from": "jane@customer.io", "to": "help@in.acme.dev",
                                                     **body})
    assert (reply.status_code, reply.json()["name"]) == (422, "validation_error")
    assert f"`{field}`" in reply.json()["message"]
    assert inbound.get("/emails/receiving").json()["data"] == []


# ---- 4. the OAuth consent form without `account` ------------------------------------------------

def _consent_page(client: TestClient) -> str:
    oauth_client = register(client)
    response = client.get("/oauth/authorize", params=authorize_params(oauth_client), follow_redirects=False)
    return str(response.headers["location"])


# What the consent page's form sends from a browser (csrf.py: a UI POST needs proof of the UI's page).
CONSENT_FORM = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}


def test_consent_without_an_account_approves_for_the_preselected_one(client: TestClient) -> None:
    location = _consent_page(client)
    answer = client.post(location, data={"decision": "approve"}, headers=CONSENT_FORM,
                         follow_redirects=False)
    assert answer.status_code == 303 and "?code=" in answer.headers["location"]
    assert_every_view_answers(client)


def test_consent_for_an_unknown_account_is_a_422_page(client: TestClient) -> None:
    location = _consent_page(client)
    answer = client.post(location, data={"decision": "approve", "account": "nobody"},
                         headers=CONSENT_FORM, follow_redirects=False)
    assert answer.status_code == 422 and "does not exist" in answer.text
    # Not consumed: the person can still choose an existing account.
    again = client.post(location, data={"decision": "approve", "account": "default"},
                        headers=CONSENT_FORM, follow_redirects=False)
    assert again.status_code == 303
    assert_every_view_answers(client)


# ---- 5. QA checks on hostile HTML -----------------------------------------------------------------

@pytest.mark.parametrize("html", ["<!--" * 25_000, "<a " * 33_000, "<style>" + "a" * 100_000,
                                  "<p style='" + "a:b;" * 25_000 + "'>", "<style>" + "/*" * 50_000])
def test_qa_checks_of_hostile_html_answer_at_once(client: TestClient, html: str) -> None:
    email_id = client.post("/emails", json=email(html=html)).json()["id"]
    started = time.process_time()  # CPU time, the server's threads included: wall time varies with load
    report = client.get(f"/_emulator/outbox/{email_id}/qa")
    page = client.get(f"/_emulator/ui/messages/{email_id}")
    assert time.process_time() - started < GENEROUS
    assert report.status_code == 200 and report.json()["object"] == "qa_report"
    assert page.status_code == 200
    assert_every_view_answers(client)


def test_the_server_answers_while_a_qa_report_runs(server: EmulatorServer, api: httpx.Client) -> None:
    html = "<p style='" + "color:red;" * 100_000 + "'>x</p>"  # 1 MB of real work for the checks
    email_id = api.post("/emails", json=email(html=html, text="x")).json()["id"]
    assert api.get(f"/_emulator/outbox/{email_id}.eml").status_code == 200  # rendered once, up front

    async def race() -> dict[str, float]:
        finished: dict[str, float] = {}
        async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=60) as client:
            async def get(name: str, path: str) -> None:
                assert (await client.get(path)).status_code == 200
                finished[name] = time.perf_counter()

            report = asyncio.create_task(get("report", f"/_emulator/outbox/{email_id}/qa"))
            await asyncio.sleep(0.05)  # the report's request is under way
            await get("health", "/_emulator/health")
            await report
        return finished

    finished = asyncio.run(race())
    # Run on the event loop, the report would hold the health check until it was done.
    assert finished["health"] < finished["report"]


# ---- 6. control-plane bodies ----------------------------------------------------------------------

ID = "00000000-0000-4000-8000-000000000000"
# (route, body, the field the 422 must name): one bad body for every control route that reads JSON.
CONTROL_BODIES = [
    ("/_emulator/faults", {"path": "/emails", "error": "rate_limit_exceeded", "count": -1}, "count"),
    ("/_emulator/faults", {"path": "/emails", "error": "rate_limit_exceeded", "times": []}, "times"),
    ("/_emulator/faults", {"path": "/emails", "delay_ms": 1.5}, "delay_ms"),
    ("/_emulator/webhooks/faults", {"action": "status", "times": 2}, "times"),
    ("/_emulator/webhooks/faults", {"action": "status", "count": "2"}, "count"),
    ("/_emulator/webhooks/faults/random", {"failure_rate": "0.5"}, "failure_rate"),
    ("/_emulator/webhooks/config", {"retry_scale": True}, "retry_scale"),
    ("/_emulator/webhooks/config", {"timeout": 5}, "timeout"),
    ("/_emulator/clock/advance", {"seconds": [5]}, "seconds"),
    ("/_emulator/clock/advance", {"second": 5}, "second"),
    ("/_emulator/clock/set", {"at": 5}, "at"),
    ("/_emulator/clock/freeze", {"time": "2026-05-14T09:00:00Z"}, "time"),
    ("/_emulator/outcomes", {"to": "a@b.dev", "outcome": "bounced", "minute": 3}, "minute"),
    ("/_emulator/emails/{email_id}/click", {"link": "x", "ip": "1"}, "ip"),
    ("/_emulator/emails/{email_id}/open", {"when": "now"}, "when"),
    ("/_emulator/oauth", {"consent": "approve", "accounts": "default"}, "accounts"),
    ("/_emulator/oauth", {"registration_limit": "20"}, "registration_limit"),
    ("/_emulator/snapshot/save", {"file": "/tmp/x.db"}, "file"),
    ("/_emulator/snapshot/restore", {"path": 5}, "path"),
    ("/_emulator/scenario", {"name": "basic", "extra": 1}, "extra"),
    ("/_emulator/scenario", {"scenario": []}, "scenario"),
    ("/_emulator/domains/{domain_id}/verification", {"status": "failed"}, "status"),
    ("/_emulator/inbound", {"from": "a@b.dev", "to": "x@in.acme.dev", "count": 1}, "count"),
    ("/_emulator/inbound", {"from": "a@b.dev", "to": 5}, "to"),
    ("/_emulator/outbox/{email_id}/labels", {"label": 5}, "label"),
    *[(route, {"read": True}, "read") for route in (
        "/_emulator/outbox/read", "/_emulator/outbox/unread", "/_emulator/received/read",
        "/_emulator/received/unread", "/_emulator/outbox/{email_id}/read",
        "/_emulator/outbox/{email_id}/unread", "/_emulator/received/{email_id}/read",
        "/_emulator/received/{email_id}/unread")],
]
# Control routes that read no JSON: no body at all, or the unsubscribe page's form. (The UI's own routes,
# under /_emulator/ui/, take HTML forms.)
NOT_JSON = {"/_emulator/reset", "/_emulator/flush", "/_emulator/clock/unfreeze", "/_emulator/webhooks/flush",
            "/_emulator/unsubscribe/{token}"}


def _json_text(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


@pytest.mark.parametrize(("route", "body", "field"), CONTROL_BODIES)
def test_control_plane_bodies_name_an_unknown_or_ill_typed_field(client: TestClient, route: str,
                                                                 body: dict[str, Any], field: str) -> None:
    before = client.get("/_emulator/faults").json(), client.get("/_emulator/webhooks/faults").json()
    path = route.replace("{email_id}", ID).replace("{domain_id}", ID)
    reply = client.post(path, content=_json_text(body), headers={"content-type": "application/json"})
    assert (reply.status_code, reply.json()["name"]) == (422, "validation_error"), reply.text
    assert f"`{field}`" in reply.json()["message"]
    assert (client.get("/_emulator/faults").json(), client.get("/_emulator/webhooks/faults").json()) == before
    assert_every_view_answers(client)


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity"])
def test_control_plane_bodies_refuse_what_is_not_json(client: TestClient, number: bytes) -> None:
    reply = client.post("/_emulator/faults", content=b'{"path": "/emails", "error": "rate_limit_exceeded",'
                        b' "times": ' + number + b"}", headers={"content-type": "application/json"})
    assert (reply.status_code, reply.json()["name"]) == (400, "validation_error")
    assert client.get("/_emulator/faults").json()["data"] == []


def test_every_control_route_that_reads_json_is_covered_above(client: TestClient) -> None:
    # The web UI's routes load lazily (app.py's LazyRoutes, no `path`): they take forms, not JSON.
    routes = [(getattr(route, "path", ""), set(getattr(route, "methods", None) or ()))
              for route in control_plane_routes(client.app)]  # type: ignore[arg-type]
    written = {path for path, methods in routes if path.startswith("/_emulator/")
               and not path.startswith("/_emulator/ui/") and {"POST", "PUT", "PATCH"} & methods}
    assert written - NOT_JSON == {route for route, _, _ in CONTROL_BODIES}


# ---- 7. API key names past 50 characters ---------------------------------------------------------

def test_an_api_key_name_past_50_characters_is_accepted_and_listed_unchanged(client: TestClient) -> None:
    name = "k" * 51
    created = client.post("/api-keys", json={"name": name})
    assert created.status_code == 201
    listed = client.get("/api-keys").json()["data"]
    assert [key["name"] for key in listed if key["id"] == created.json()["id"]] == [name]
    assert client.patch(f"/api-keys/{created.json()['id']}", json={"name": name * 2}).status_code == 200
    assert_every_view_answers(client)


# ---- 8. --isolate-keys and another account's inbox address -----------------------------------------

def test_an_address_another_account_uses_answers_as_a_foreign_domain() -> None:
    with api_client(make_settings(isolate_keys=True)) as owner:
        receiving = {"name": "acme.dev", "capabilities": {"sending": "enabled", "receiving": "enabled"}}
        other = {"Authorization": "Bearer re_someone_else"}
        assert owner.post("/domains", json=receiving).status_code == 201
        assert owner.post("/domains", json=receiving, headers=other).status_code == 201
        assert owner.post("/inboxes", json={"email_address": "support@acme.dev"}).status_code == 201
        reply = owner.post("/inboxes", json={"email_address": "support@acme.dev"}, headers=other)
        assert reply.json() == {"statusCode": 422, "name": "validation_error", "message": "The domain"
                                " `acme.dev` was not found on your account. Add it at resend.com/domains."}
        again = owner.post("/inboxes", json={"email_address": "support@acme.dev"})
        assert (again.status_code, again.json()["name"]) == (409, "conflict")
        assert "another inbox" in again.json()["message"]
        assert_every_view_answers(owner)
