"""The unsubscribe link of broadcast emails over plain HTTP: the page, the one-click POST a mail provider
makes from `List-Unsubscribe` (RFC 8058), the topic-or-everything choice, the events it emits, bad links."""

from __future__ import annotations

import re
from email import message_from_string
from email.policy import default

from starlette.testclient import TestClient

from tests.contacts_helpers import contact, segment, topic
from tests.emails_helpers import Recorder
from tests.test_broadcasts_send import broadcast, flush, outbox


def unsubscribe_url(client: TestClient, email_id: str) -> str:
    """The path of the `List-Unsubscribe` header of one outbox email."""
    message = message_from_string(client.get(f"/_emulator/outbox/{email_id}.eml").text, policy=default)
    found = re.fullmatch(r"<http://127\.0\.0\.1:2580(/_emulator/unsubscribe/[0-9a-f-]{36})>",
                         str(message["List-Unsubscribe"]).strip())
    assert found is not None, message["List-Unsubscribe"]
    return found.group(1)


def sent_to_one(client: TestClient, **fields: str) -> tuple[str, str]:
    """A broadcast to a one-contact segment; returns (contact id, unsubscribe path of its email)."""
    segment_id = segment(client, "All")
    contact_id = contact(client, "lin@example.org", first_name="Lin")
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    broadcast(client, segment_id, send=True, **fields)
    flush(client)
    [email] = outbox(client)
    return contact_id, unsubscribe_url(client, email["id"])


def test_one_click_post_without_a_topic_unsubscribes_from_everything(client: TestClient) -> None:
    recorder = Recorder(client)
    contact_id, path = sent_to_one(client)
    response = client.post(path, content="List-Unsubscribe=One-Click",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 200
    assert "lin@example.org will no longer receive these emails." in response.text
    assert client.get(f"/contacts/{contact_id}").json()["unsubscribed"] is True
    [updated] = recorder.of_type("contact.updated")
    assert (updated["id"], updated["email"], updated["unsubscribed"]) == (contact_id, "lin@example.org", True)


def test_one_click_post_with_a_topic_opts_out_of_that_topic_only(client: TestClient) -> None:
    recorder = Recorder(client)
    news = topic(client, "News")
    contact_id, path = sent_to_one(client, topic_id=news)
    assert client.post(path, content="List-Unsubscribe=One-Click").status_code == 200
    assert client.get(f"/contacts/{contact_id}").json()["unsubscribed"] is False
    assert client.get(f"/contacts/{contact_id}/topics").json()["data"] == [
        {"id": news, "name": "News", "description": None, "subscription": "opt_out"}]
    assert recorder.of_type("contact.topics.updated") == [
        {"email": "lin@example.org", "topics": [{"id": news, "subscription": "opt_out"}]}]


def test_the_page_offers_the_topic_and_everything_and_counts_the_recipient(client: TestClient) -> None:
    news = topic(client, "News")
    contact_id, path = sent_to_one(client, topic_id=news)
    page = client.get(path)
    assert page.status_code == 200
    assert 'id="unsubscribe-topic"' in page.text and "Unsubscribe from News" in page.text
    assert 'id="unsubscribe-all"' in page.text and "lin@example.org" in page.text
    assert client.post(path, data={"scope": "all"}).status_code == 200
    assert client.get(f"/contacts/{contact_id}").json()["unsubscribed"] is True
    broadcast_id = outbox(client)[0]["broadcast_id"]
    listed = client.get(f"/broadcasts/{broadcast_id}/recipients?type=unsubscribed").json()
    assert listed["data"] == [{"id": "b2Zmc2V0OjA", "contact_id": contact_id, "email": "lin@example.org"}]


def test_an_unknown_link_is_a_404_page_and_changes_nothing(client: TestClient) -> None:
    contact_id, path = sent_to_one(client)
    ghost = path[:-36] + "00000000-0000-4000-8000-000000000000"
    for method in ("GET", "POST"):
        response = client.request(method, ghost)
        assert response.status_code == 404
        assert "This unsubscribe link is unknown or has expired." in response.text
    assert client.get(f"/contacts/{contact_id}").json()["unsubscribed"] is False


def test_the_link_of_a_deleted_contact_is_refused(client: TestClient) -> None:
    contact_id, path = sent_to_one(client)
    client.delete(f"/contacts/{contact_id}")
    response = client.post(path, content="List-Unsubscribe=One-Click")
    assert response.status_code == 404
    assert "Contact not found" in response.text
