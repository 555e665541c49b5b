"""Responses shaped like the API reference's examples (issue 25's table), read through the official Python
SDK where it has the method and plain httpx where it does not, against a real server with a frozen clock."""

from __future__ import annotations

import base64
from email.message import EmailMessage

import httpx
import pytest
import resend

from emulator.testing import EmulatorServer
from tests.conftest import KEY
from tests.emails_helpers import PNG, email
from tests.templates_helpers import plain


@pytest.fixture
def sdk(server: EmulatorServer, api: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> httpx.Client:
    """The SDK pointed at the module's server (reset by `api`), and `api` for what the SDK lacks."""
    monkeypatch.setattr(resend, "api_url", server.url)
    monkeypatch.setattr(resend, "api_key", KEY)
    return api


@pytest.mark.parametrize("expires_in",
                         ["2 hours", "1 day", "10m", "1h 30m", "48h", "1.5 hours", "90 minutes"])
def test_share_accepts_the_durations_the_docs_show(sdk: httpx.Client, expires_in: str) -> None:
    sent = resend.Emails.send(email())  # type: ignore[arg-type]
    shared = resend.Emails.share(sent["id"], {"expires_in": expires_in})
    assert list(plain(shared)) == ["object", "id", "url"]
    assert (shared["object"], shared["id"]) == ("email", sent["id"])
    assert sdk.get(shared["url"]).status_code == 200


@pytest.mark.parametrize("expires_in",
                         ["49 hours", "3 days", "0m", "1e9h", "9" * 40 + "h", "soon", "2", 7200])
def test_share_refuses_durations_past_48_hours_or_without_a_unit(sdk: httpx.Client,
                                                                 expires_in: object) -> None:
    sent = resend.Emails.send(email())  # type: ignore[arg-type]
    response = sdk.post(f"/emails/{sent['id']}/share", json={"expires_in": expires_in})
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")
    assert "`expires_in`" in response.json()["message"]


def test_segment_metrics_have_the_documented_shape(sdk: httpx.Client) -> None:
    segment_id = sdk.post("/segments", json={"name": "Registered Users"}).json()["id"]
    sdk.post("/contacts", json={"email": "ada@example.org", "segments": [{"id": segment_id}]})
    body = sdk.get("/segments/metrics?dimensions=segment&metrics=all_contacts").json()
    assert body == {"object": "metrics", "metrics": ["all_contacts"], "dimensions": ["segment"],
                    "totals": {"all_contacts": 1},
                    "data": [{"id": segment_id, "name": "Registered Users", "all_contacts": 1}]}


def test_domain_tracking_subdomain_is_null_until_set(sdk: httpx.Client) -> None:
    created = resend.Domains.create({"name": "example.com"})
    assert "tracking_subdomain" in created and created["tracking_subdomain"] is None
    got = resend.Domains.get(created["id"])
    assert list(plain(got)) == ["object", "id", "name", "status", "created_at", "region", "open_tracking",
                                "click_tracking", "capabilities", "tracking_subdomain", "records"]
    assert got["tracking_subdomain"] is None
    resend.Domains.update({"id": created["id"], "tracking_subdomain": "links"})  # type: ignore[typeddict-unknown-key]
    assert resend.Domains.get(created["id"])["tracking_subdomain"] == "links"


def test_contact_property_timestamps_use_the_contact_form(sdk: httpx.Client) -> None:
    sdk.post("/_emulator/clock/advance", json={"seconds": 0.110779})
    created = resend.ContactProperties.create({"key": "company", "type": "string"})
    expected = {"object": "contact_property", "id": created["id"], "key": "company", "type": "string",
                "fallback_value": None, "created_at": "2026-05-14 09:00:00.110779+00"}
    assert plain(resend.ContactProperties.get(created["id"])) == expected
    [listed] = resend.ContactProperties.list()["data"]
    assert listed["created_at"] == expected["created_at"]


def test_topic_list_items_carry_no_object(sdk: httpx.Client) -> None:
    created = resend.Topics.create({"name": "Weekly Newsletter", "default_subscription": "opt_in"})
    [item] = resend.Topics.list()["data"]
    assert plain(item) == {"id": created["id"], "name": "Weekly Newsletter", "description": None,
                           "default_subscription": "opt_in", "visibility": "private",
                           "created_at": "2026-05-14 09:00:00.000+00"}
    assert resend.Topics.get(created["id"])["object"] == "topic"


def test_webhook_list_items_hand_out_no_secret(sdk: httpx.Client) -> None:
    created = resend.Webhooks.create({"endpoint": "http://127.0.0.1:9/hooks", "events": ["email.sent"]})
    [item] = resend.Webhooks.list()["data"]
    assert plain(item) == {"id": created["id"], "created_at": "2026-05-14 09:00:00.000+00",
                           "status": "enabled", "endpoint": "http://127.0.0.1:9/hooks",
                           "events": ["email.sent"]}
    assert resend.Webhooks.get(created["id"])["signing_secret"] == created["signing_secret"]


def test_received_list_items_have_no_received_for(sdk: httpx.Client) -> None:
    sdk.post("/domains", json={"name": "in.acme.dev", "capabilities": {"sending": "disabled",
                                                                       "receiving": "enabled"}})
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "jane@customer.io", "help@in.acme.dev", "Hi"
    message["Message-ID"] = "<1@customer.io>"
    message.set_content("hello")
    injected = sdk.post("/_emulator/inbound", content=message.as_bytes(),
                        headers={"content-type": "message/rfc822"})
    email_id = injected.json()["data"][0]["id"]
    [item] = resend.Emails.Receiving.list()["data"]
    assert plain(item) == {"id": email_id, "to": ["help@in.acme.dev"], "from": "jane@customer.io",
                           "created_at": "2026-05-14T09:00:00.000Z", "subject": "Hi", "bcc": [], "cc": [],
                           "reply_to": [], "message_id": "<1@customer.io>", "attachments": []}
    assert resend.Emails.Receiving.get(email_id)["received_for"] == ["help@in.acme.dev"]


def test_retrieved_webhook_event_data_is_the_documented_email_data(sdk: httpx.Client) -> None:
    hook = resend.Webhooks.create({"endpoint": "http://127.0.0.1:9/hooks", "events": ["email.sent"]})
    sent = resend.Emails.send(email(tags=[{"name": "category", "value": "receipt"}]))  # type: ignore[arg-type]
    [event] = resend.Webhooks.list_events(hook["id"])["data"]
    detail = resend.Webhooks.get_event(hook["id"], event["id"])
    assert detail["payload"] == {
        "type": "email.sent", "created_at": "2026-05-14T09:00:00.000Z",
        "data": {"email_id": sent["id"], "created_at": "2026-05-14T09:00:00.000Z",
                 "from": "Acme <hello@mail.acme.dev>", "to": ["delivered@resend.dev"],
                 "subject": "Your receipt", "tags": {"category": "receipt"}}}


def test_sent_attachments_carry_a_null_content_id_unless_inline(sdk: httpx.Client) -> None:
    content = base64.b64encode(PNG).decode()
    sent = resend.Emails.send(email(attachments=[  # type: ignore[arg-type]
        {"filename": "a.png", "content": content},
        {"filename": "b.png", "content": content, "content_id": "logo"}]))
    listed = resend.Emails.Attachments.list(sent["id"])["data"]
    by_name = {item["filename"]: item for item in listed}
    assert list(by_name["a.png"]) == ["id", "filename", "size", "content_type", "content_disposition",
                                      "content_id", "download_url", "expires_at"]
    assert (by_name["a.png"]["content_id"], by_name["b.png"]["content_id"]) == (None, "logo")
    one = resend.Emails.Attachments.get(email_id=sent["id"], attachment_id=by_name["a.png"]["id"])
    assert one["object"] == "attachment" and one["content_id"] is None
