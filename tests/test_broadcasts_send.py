"""Sending broadcasts: who gets one, personalisation, unsubscribe headers, scheduling, cancel, recipients and
clicked links (reference/broadcasts.md §2.5–§3)."""

from __future__ import annotations

import re
from email import message_from_string
from email.policy import default
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.core.events import emit
from tests.contacts_helpers import advance, contact, created, prop, segment, topic
from tests.emails_helpers import Recorder

HTML = ("<p>Hi {{{FIRST_NAME|friend}}}, your plan is {{{contact.plan|basic}}}.</p>"
        '<a href="https://acme.dev/pricing">Pricing</a>'
        ' <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>')


def broadcast(client: TestClient, segment_id: str, **fields: Any) -> str:
    body = {"segment_id": segment_id, "from": "Acme <news@acme.dev>",
            "subject": "News for {{{FIRST_NAME|you}}}",
            "html": HTML, "name": "March", **fields}
    return created(client.post("/broadcasts", json=body))


def outbox(client: TestClient) -> list[dict[str, Any]]:
    return list(client.get("/_emulator/outbox").json()["data"])


def flush(client: TestClient) -> None:
    assert client.post("/_emulator/flush").status_code == 200


def five_contacts(client: TestClient) -> tuple[str, str, dict[str, str]]:
    """A segment of five: Ada (pro), Bob (no plan), Cy unsubscribed, Di out of the topic, Ed suppressed."""
    prop(client, "plan", fallback_value="free")
    segment_id, topic_id = segment(client, "Everyone"), topic(client, "Product news")
    ids = {
        "ada": contact(client, "ada@example.org", first_name="Ada", properties={"plan": "pro"}),
        "bob": contact(client, "bob@example.org"),
        "cy": contact(client, "cy@example.org", first_name="Cy", unsubscribed=True),
        "di": contact(client, "di@example.org", first_name="Di",
                      topics=[{"id": topic_id, "subscription": "opt_out"}]),
        "ed": contact(client, "ed@example.org", first_name="Ed"),
    }
    for contact_id in ids.values():
        assert client.post(f"/contacts/{contact_id}/segments/{segment_id}").status_code == 200
    assert client.post("/suppressions", json={"email": "ed@example.org"}).status_code == 201
    return segment_id, topic_id, ids


def test_broadcast_to_five_sends_exactly_two_personalised_emails(client: TestClient) -> None:
    segment_id, topic_id, ids = five_contacts(client)
    broadcast_id = broadcast(client, segment_id, topic_id=topic_id)
    assert client.post(f"/broadcasts/{broadcast_id}/send").json() == {"id": broadcast_id}
    assert client.get(f"/broadcasts/{broadcast_id}").json()["status"] in ("queued", "sent")
    flush(client)
    emails = outbox(client)
    assert sorted(email["to"] for email in emails) == [["ada@example.org"], ["bob@example.org"]]
    assert {email["broadcast_id"] for email in emails} == {broadcast_id}
    sent = {email["to"][0]: email for email in emails}
    ada = client.get(f"/emails/{sent['ada@example.org']['id']}").json()
    assert ada["subject"] == "News for Ada"
    assert ada["html"].startswith("<p>Hi Ada, your plan is pro.</p>")
    bob = client.get(f"/emails/{sent['bob@example.org']['id']}").json()
    # No first name: the inline fallback; no plan: the inline fallback wins over the property's own.
    assert (bob["subject"], bob["html"][:37]) == ("News for you", "<p>Hi friend, your plan is basic.</p>")
    assert "{{{" not in bob["html"] and "/_emulator/unsubscribe/" in bob["html"]
    state = client.get(f"/broadcasts/{broadcast_id}").json()
    assert (state["status"], state["sent_at"]) == ("sent", "2026-05-14 09:00:00.000+00")
    assert client.get(f"/broadcasts/{broadcast_id}/recipients?type=delivered").json()["data"] == []
    advance(client, 5)
    delivered = client.get(f"/broadcasts/{broadcast_id}/recipients?type=delivered").json()
    assert delivered == {"object": "list", "has_more": False, "data": [
        {"id": "b2Zmc2V0OjA", "contact_id": ids["ada"], "email": "ada@example.org"},
        {"id": "b2Zmc2V0OjE", "contact_id": ids["bob"], "email": "bob@example.org"}]}
    assert [client.get(f"/emails/{email['id']}").json()["last_event"] for email in emails] == [
        "delivered", "delivered"]
    suppressed = client.get(f"/broadcasts/{broadcast_id}/recipients?type=suppressed").json()["data"]
    assert suppressed == [{"id": "b2Zmc2V0OjA", "contact_id": ids["ed"], "email": "ed@example.org"}]


def test_property_fallback_and_headers(client: TestClient) -> None:
    prop(client, "plan", fallback_value="free")
    segment_id = segment(client, "All")
    contact_id = contact(client, "lin@example.org")
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, html="<p>{{{plan}}}</p>", text="Plan: {{{contact.plan}}}",
                             send=True)
    flush(client)
    [email] = outbox(client)
    body = client.get(f"/emails/{email['id']}").json()
    assert (body["html"], body["text"]) == ("<p>free</p>", "Plan: free")
    message = message_from_string(client.get(f"/_emulator/outbox/{email['id']}.eml").text, policy=default)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert re.fullmatch(r"<http://127\.0\.0\.1:2580/_emulator/unsubscribe/[0-9a-f-]{36}>",
                        str(message["List-Unsubscribe"]).strip())
    assert client.get(f"/broadcasts/{broadcast_id}").json()["status"] == "sent"


def test_webhook_events_carry_the_broadcast_id(client: TestClient) -> None:
    recorder = Recorder(client)
    segment_id = segment(client, "All")
    client.post(f"/contacts/{contact(client, 'lin@example.org')}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, send=True)
    flush(client)
    assert [event["broadcast_id"] for event in recorder.of_type("email.sent")] == [broadcast_id]
    assert client.get("/emails").json()["data"][0]["id"] == outbox(client)[0]["id"]


def test_scheduled_broadcast_waits_for_the_clock(client: TestClient) -> None:
    segment_id = segment(client, "All")
    client.post(f"/contacts/{contact(client, 'lin@example.org')}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id)
    client.post(f"/broadcasts/{broadcast_id}/send", json={"scheduled_at": "in 1 hour"})
    state = client.get(f"/broadcasts/{broadcast_id}").json()
    assert (state["status"], state["scheduled_at"]) == ("scheduled", "2026-05-14 10:00:00.000+00")
    advance(client, 3599)
    assert outbox(client) == []
    advance(client, 1)
    assert len(outbox(client)) == 1
    assert client.get(f"/broadcasts/{broadcast_id}").json()["status"] == "sent"


def test_cancelled_broadcast_never_sends(client: TestClient) -> None:
    segment_id = segment(client, "All")
    client.post(f"/contacts/{contact(client, 'lin@example.org')}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, send=True, scheduled_at="2026-05-14T12:00:00Z")
    cancelled = client.post(f"/broadcasts/{broadcast_id}/cancel").json()
    assert cancelled == {"object": "broadcast", "id": broadcast_id}
    state = client.get(f"/broadcasts/{broadcast_id}").json()
    assert (state["status"], state["scheduled_at"]) == ("draft", None)
    advance(client, 86400)
    assert outbox(client) == []


def test_recipients_and_clicked_links_follow_the_events(client: TestClient) -> None:
    """Clicks arrive as `email.clicked` events (the tracking endpoints emit them; here we emit directly)."""
    segment_id = segment(client, "All")
    for name in ("ada", "bob"):
        client.post(f"/contacts/{contact(client, f'{name}@example.org')}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, send=True)
    flush(client)
    emails = {email["to"][0]: email["id"] for email in outbox(client)}
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def click(email_id: str, link: str) -> None:
        async with emu.transaction("default") as tx:
            data = {"email_id": email_id, "click": {"link": link}}
            await emit(tx, "email.clicked", data, subject_id=email_id)

    for email_id, link in [(emails["ada@example.org"], "https://acme.dev/pricing"),
                           (emails["ada@example.org"], "https://acme.dev/pricing"),
                           (emails["bob@example.org"], "https://acme.dev/pricing"),
                           (emails["bob@example.org"], "https://acme.dev/blog")]:
        client.portal.call(click, email_id, link)  # type: ignore[attr-defined]
    links = client.get(f"/broadcasts/{broadcast_id}/clicked-links").json()
    assert links == {"object": "list", "has_more": False, "data": [
        {"id": "b2Zmc2V0OjA", "url": "https://acme.dev/pricing", "clicks": 3, "unique_clicks": 2},
        {"id": "b2Zmc2V0OjE", "url": "https://acme.dev/blog", "clicks": 1, "unique_clicks": 1}]}
    clicked = client.get(f"/broadcasts/{broadcast_id}/recipients?type=clicked&email=ada@example.org").json()
    assert clicked["data"][0]["count"] == 2
    assert clicked["data"][0]["clicked_links"] == [{"url": "https://acme.dev/pricing", "clicks": 2}]
    first = client.get(f"/broadcasts/{broadcast_id}/recipients?type=sent&limit=1").json()
    assert (first["data"][0]["email"], first["has_more"]) == ("ada@example.org", True)
    after = first["data"][0]["id"]
    rest = client.get(f"/broadcasts/{broadcast_id}/recipients?type=sent&limit=1&after={after}").json()
    assert ([item["email"] for item in rest["data"]], rest["has_more"]) == (["bob@example.org"], False)


def test_duplicate_makes_a_new_draft(client: TestClient) -> None:
    segment_id = segment(client, "All")
    original = broadcast(client, segment_id, send=True)
    flush(client)
    copy = client.post(f"/broadcasts/{original}/duplicate")
    assert copy.status_code == 200  # seed: duplicate answers 200, as for templates (00-general §9)
    assert copy.json() == {"object": "broadcast", "id": copy.json()["id"]}
    copy_id = copy.json()["id"]
    body = client.get(f"/broadcasts/{copy_id}").json()
    assert (body["status"], body["html"], body["sent_at"]) == ("draft", HTML, None)
    listed = client.get("/broadcasts").json()
    assert [item["id"] for item in listed["data"]] == [copy_id, original]


@pytest.mark.parametrize(("name", "copied"), [
    ("March newsletter", "March newsletter (copy)"),
    ("N" * 68, "N" * 68 + " ("),  # cut to 70 characters, as the docs say
    (None, None),
])
def test_a_duplicate_is_named_after_its_source(client: TestClient, name: str | None,
                                              copied: str | None) -> None:
    body = {"segment_id": segment(client, "All"), "from": "hi@acme.dev", "subject": "S", "html": HTML}
    original = created(client.post("/broadcasts", json=body if name is None else {**body, "name": name}))
    copy = client.post(f"/broadcasts/{original}/duplicate").json()["id"]
    assert client.get(f"/broadcasts/{copy}").json()["name"] == copied
    assert client.get(f"/broadcasts/{original}").json()["name"] == name


def test_a_topic_that_defaults_to_opt_out_reaches_only_those_who_opted_in(client: TestClient) -> None:
    segment_id, quiet = segment(client, "All"), topic(client, "Deals", "opt_out")
    chose = contact(client, "in@example.org", topics=[{"id": quiet, "subscription": "opt_in"}])
    silent = contact(client, "silent@example.org")
    for contact_id in (chose, silent):
        client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    broadcast(client, segment_id, topic_id=quiet, send=True)
    flush(client)
    assert [email["to"] for email in outbox(client)] == [["in@example.org"]]


def test_without_a_topic_every_subscribed_contact_gets_one_whatever_their_topic_choices(
        client: TestClient) -> None:
    segment_id, news = segment(client, "All"), topic(client, "News")
    for address in ("out@example.org", "in@example.org"):
        contact_id = contact(client, address, topics=[{"id": news, "subscription": "opt_out"}])
        client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    gone = contact(client, "gone@example.org", unsubscribed=True)
    client.post(f"/contacts/{gone}/segments/{segment_id}")
    broadcast(client, segment_id, send=True)
    flush(client)
    assert sorted(email["to"][0] for email in outbox(client)) == ["in@example.org", "out@example.org"]


def test_recipients_filter_by_email_ignores_case(client: TestClient) -> None:
    segment_id = segment(client, "All")
    contact_id = contact(client, "Ada@Example.org")
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, send=True)
    flush(client)
    for given in ("Ada@Example.org", "ada%40example.org", "ADA@EXAMPLE.ORG"):
        listed = client.get(f"/broadcasts/{broadcast_id}/recipients?type=sent&email={given}").json()
        assert listed["data"] == [{"id": "b2Zmc2V0OjA", "contact_id": contact_id, "email": "Ada@Example.org"}]


def test_every_documented_contact_variable_is_filled_and_names_are_escaped_in_html(
        client: TestClient) -> None:
    prop(client, "plan", fallback_value="free")
    prop(client, "seats", "number", fallback_value=1)
    segment_id = segment(client, "All")
    contact_id = contact(client, "lin@example.org", first_name="<b>Lin</b>", last_name="Wu",
                         properties={"seats": 3})
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    template = ("{{{FIRST_NAME}}} {{{LAST_NAME}}} {{{EMAIL}}} {{{contact.first_name|x}}}"
                " {{{contact.last_name}}} {{{contact.email}}} {{{contact.plan}}} {{{seats}}}"
                " {{{contact.company|none}}}")
    broadcast(client, segment_id, html=f"<p>{template}</p>", text=template, send=True)
    flush(client)
    [email] = outbox(client)
    body = client.get(f"/emails/{email['id']}").json()
    assert body["text"] == "<b>Lin</b> Wu lin@example.org <b>Lin</b> Wu lin@example.org free 3 none"
    assert body["html"] == ("<p>&lt;b&gt;Lin&lt;/b&gt; Wu lin@example.org &lt;b&gt;Lin&lt;/b&gt; Wu"
                            " lin@example.org free 3 none</p>")


def test_a_cancelled_then_rescheduled_broadcast_sends_once_at_the_new_time(client: TestClient) -> None:
    """The first schedule's job still falls due at its old time; it must not send the broadcast early."""
    segment_id = segment(client, "All")
    client.post(f"/contacts/{contact(client, 'lin@example.org')}/segments/{segment_id}")
    broadcast_id = broadcast(client, segment_id, send=True, scheduled_at="in 1 hour")
    client.post(f"/broadcasts/{broadcast_id}/cancel")
    assert client.post(f"/broadcasts/{broadcast_id}/send", json={"scheduled_at": "in 2 hours"}).json() == {
        "id": broadcast_id}
    advance(client, 3601)
    assert (client.get(f"/broadcasts/{broadcast_id}").json()["status"], outbox(client)) == ("scheduled", [])
    advance(client, 3599)
    state = client.get(f"/broadcasts/{broadcast_id}").json()
    assert (state["status"], state["sent_at"]) == ("sent", "2026-05-14 11:00:00.000+00")
    assert len(outbox(client)) == 1


def test_bounces_and_complaints_show_in_recipients_and_suppress_the_next_broadcast(
        client: TestClient) -> None:
    segment_id = segment(client, "All")
    ids = {}
    for address in ("bounced@resend.dev", "complained@resend.dev", "delivered@resend.dev"):
        ids[address] = contact(client, address)
        client.post(f"/contacts/{ids[address]}/segments/{segment_id}")
    first = broadcast(client, segment_id, send=True)
    flush(client)
    advance(client, 10)

    def recipients(broadcast_id: str, query: str) -> list[dict[str, Any]]:
        return list(client.get(f"/broadcasts/{broadcast_id}/recipients?{query}").json()["data"])

    assert recipients(first, "type=bounced") == [{
        "id": "b2Zmc2V0OjA", "contact_id": ids["bounced@resend.dev"], "email": "bounced@resend.dev",
        "bounce_type": "permanent"}]
    assert len(recipients(first, "type=bounced&bounce_type=permanent")) == 1
    assert recipients(first, "type=bounced&bounce_type=transient") == []
    assert [item["email"] for item in recipients(first, "type=complained")] == ["complained@resend.dev"]
    assert [item["email"] for item in recipients(first, "type=delivered")] == [
        "complained@resend.dev", "delivered@resend.dev"]
    second = broadcast(client, segment_id, send=True)
    flush(client)
    assert sorted(item["email"] for item in recipients(second, "type=suppressed")) == [
        "bounced@resend.dev", "complained@resend.dev"]
    assert [item["email"] for item in recipients(second, "type=sent")] == ["delivered@resend.dev"]
