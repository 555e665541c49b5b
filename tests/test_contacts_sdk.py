"""Every method of the official Python SDK's Contacts (with its Segments, Topics and Imports sub-APIs),
Audiences, Segments, Topics and ContactProperties, sync and async, against a real uvicorn server; each
answer carries every field the SDK's types declare as required."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import resend
from resend.contact_properties._contact_properties import ContactProperties
from resend.contact_properties._contact_property import ContactProperty
from resend.contacts._contact import Contact
from resend.contacts._contacts import Contacts
from resend.contacts._topics import Topics as ContactTopics
from resend.contacts.imports._contact_import import ContactImport
from resend.contacts.imports._contact_imports import ContactImports
from resend.contacts.segments._contact_segments import ContactSegments
from resend.exceptions import ResendError
from resend.segments._segments import Segments
from resend.topics._topic import Topic
from resend.topics._topics import Topics

from emulator.testing import EmulatorServer
from tests.contacts_helpers import T0, T0_MS
from tests.sdk_types import keys_declared as declared
from tests.templates_helpers import plain, sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def advance(server: EmulatorServer, seconds: float) -> None:
    assert httpx.post(f"{server.url}/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200
    assert httpx.post(f"{server.url}/_emulator/flush").status_code == 200



def test_contacts_methods(emulator: EmulatorServer) -> None:
    property_id = declared(ContactProperties.CreateResponse, resend.ContactProperties.create(
        {"key": "plan", "type": "string", "fallback_value": "free"}))["id"]
    created = declared(Contacts.CreateContactResponse, resend.Contacts.create(
        {"email": "lin+sdk@example.org", "first_name": "Lin", "properties": {"plan": "pro"}}))
    contact_id = created["id"]
    assert created == {"object": "contact", "id": contact_id}
    by_email = declared(Contact, resend.Contacts.get(email="lin+sdk@example.org"))
    assert by_email == declared(Contact, resend.Contacts.get(id=contact_id)) == {
        "object": "contact", "id": contact_id, "email": "lin+sdk@example.org", "first_name": "Lin",
        "last_name": None, "created_at": T0, "unsubscribed": False,
        "properties": {"plan": {"value": "pro", "type": "string"}}}
    updated = resend.Contacts.update({"email": "lin+sdk@example.org", "unsubscribed": True})
    assert declared(Contacts.UpdateContactResponse, updated) == {"object": "contact", "id": contact_id}
    assert resend.Contacts.update({"id": contact_id, "last_name": "Wu"})["id"] == contact_id
    listed = declared(Contacts.ListResponse, resend.Contacts.list())
    assert [declared(Contact, item) for item in listed["data"]] == [
        {"id": contact_id, "created_at": T0, "email": "lin+sdk@example.org", "unsubscribed": True,
         "first_name": "Lin", "last_name": "Wu"}]
    assert resend.Contacts.list(params={"limit": 1})["has_more"] is False
    # The type also declares `id`; the recorded delete body has `contact` and no `id` [rec].
    removed = declared(Contacts.RemoveContactResponse, resend.Contacts.remove(email="lin+sdk@example.org"),
                       but=frozenset({"id"}))
    assert removed == {"object": "contact", "contact": contact_id, "deleted": True}
    assert resend.ContactProperties.get(property_id)["key"] == "plan"


def test_contacts_in_an_audience_and_a_segment(emulator: EmulatorServer) -> None:
    audience = resend.Audiences.create({"name": "Registered Users"})["id"]
    contact_id = resend.Contacts.create({"email": "a@example.org", "audience_id": audience})["id"]
    assert resend.Contacts.get(audience_id=audience, email="a@example.org")["id"] == contact_id
    assert resend.Contacts.update({"audience_id": audience, "id": contact_id, "first_name": "A"})["id"] == (
        contact_id)
    assert [c["id"] for c in resend.Contacts.list(audience_id=audience)["data"]] == [contact_id]
    assert [c["id"] for c in resend.Contacts.list(segment_id=audience)["data"]] == [contact_id]
    removed = resend.Contacts.remove(audience_id=audience, email="a@example.org")
    assert plain(removed) == {"object": "contact", "contact": "a@example.org", "deleted": True}


def test_contact_segments_sub_api(emulator: EmulatorServer) -> None:
    segment_id = resend.Segments.create({"name": "Beta"})["id"]
    contact_id = resend.Contacts.create({"email": "lin+beta@example.org"})["id"]
    added = declared(ContactSegments.AddContactSegmentResponse, resend.Contacts.Segments.add(
        {"segment_id": segment_id, "email": "lin+beta@example.org"}))
    assert added == {"object": "contact_segment", "id": segment_id, "contact_id": contact_id,
                     "segment_id": segment_id}
    listed = declared(ContactSegments.ListContactSegmentsResponse,
                      resend.Contacts.Segments.list({"email": "lin+beta@example.org"}))
    assert listed["data"] == [{"id": segment_id, "name": "Beta", "created_at": T0_MS}]
    assert resend.Contacts.Segments.list({"contact_id": contact_id}, {"limit": 1})["has_more"] is False
    removed = declared(ContactSegments.RemoveContactSegmentResponse, resend.Contacts.Segments.remove(
        {"segment_id": segment_id, "contact_id": contact_id}))
    assert removed["deleted"] is True


def test_contact_topics_sub_api(emulator: EmulatorServer) -> None:
    topic_id = resend.Topics.create({"name": "News", "default_subscription": "opt_in"})["id"]
    contact_id = resend.Contacts.create({"email": "lin@example.org"})["id"]
    listed = declared(ContactTopics.ListResponse, resend.Contacts.Topics.list(email="lin@example.org"))
    assert listed["data"] == [{"id": topic_id, "name": "News", "description": None, "subscription": "opt_in"}]
    updated = resend.Contacts.Topics.update(
        {"id": contact_id, "topics": [{"id": topic_id, "subscription": "opt_out"}]})
    assert declared(ContactTopics.UpdateResponse, updated)["id"] == contact_id
    assert resend.Contacts.Topics.list(contact_id=contact_id)["data"][0]["subscription"] == "opt_out"


def test_contact_imports_sub_api(emulator: EmulatorServer) -> None:
    created = declared(ContactImports.CreateContactImportResponse, resend.Contacts.Imports.create({
        "file": b"Email,Name\na@example.org,Ada\nnot-an-email,Bad\n",
        "column_map": {"email": "Email", "first_name": "Name"}, "on_conflict": "upsert"}))
    import_id = created["id"]
    assert declared(ContactImport, resend.Contacts.Imports.get(import_id))["status"] == "queued"
    advance(emulator, 1)
    got = declared(ContactImport, resend.Contacts.Imports.get(import_id))
    assert got == {"object": "contact_import", "id": import_id, "status": "completed", "created_at": T0_MS,
                   "completed_at": "2026-05-14 09:00:01.000+00",
                   "counts": {"total": 2, "created": 1, "updated": 0, "skipped": 0, "failed": 1}}
    listed = declared(ContactImports.ListContactImportsResponse,
                      resend.Contacts.Imports.list({"status": "completed"}))
    assert [item["id"] for item in listed["data"]] == [import_id]


def test_segments_and_audiences(emulator: EmulatorServer) -> None:
    created = declared(Segments.CreateSegmentResponse, resend.Segments.create({"name": "Beta"}))
    segment_id = created["id"]
    assert created == {"object": "segment", "id": segment_id, "name": "Beta"}
    assert plain(resend.Segments.get(segment_id)) == {
        "object": "segment", "id": segment_id, "name": "Beta", "created_at": T0}
    assert declared(Segments.UpdateSegmentResponse, resend.Segments.update(segment_id, {"name": "Gamma"}))
    assert [s["name"] for s in declared(Segments.ListResponse, resend.Segments.list())["data"]] == ["Gamma"]
    assert declared(Segments.RemoveSegmentResponse, resend.Segments.remove(segment_id))["deleted"] is True
    # The Python SDK's Audiences is an alias that calls the /segments paths.
    with pytest.warns(DeprecationWarning):
        audience = resend.Audiences.create({"name": "Registered Users"})
        assert plain(audience) == {"object": "segment", "id": audience["id"], "name": "Registered Users"}
        assert resend.Audiences.get(audience["id"])["created_at"] == T0
        assert [a["id"] for a in resend.Audiences.list()["data"]] == [audience["id"]]
        assert plain(resend.Audiences.remove(audience["id"])) == {
            "object": "segment", "id": audience["id"], "deleted": True}


def test_topics(emulator: EmulatorServer) -> None:
    created = declared(Topics.CreateTopicResponse, resend.Topics.create(
        {"name": "News", "default_subscription": "opt_out", "description": "Weekly"}))
    topic_id = created["id"]
    assert declared(Topic, resend.Topics.get(topic_id)) == {
        "object": "topic", "id": topic_id, "name": "News", "description": "Weekly",
        "default_subscription": "opt_out", "visibility": "private", "created_at": T0_MS}
    assert declared(Topics.UpdateTopicResponse, resend.Topics.update(topic_id, {"name": "Weekly"}))
    assert declared(Topics.ListResponse, resend.Topics.list({"limit": 5}))["data"][0]["name"] == "Weekly"
    assert declared(Topics.RemoveTopicResponse, resend.Topics.remove(topic_id))["deleted"] is True


def test_contact_properties(emulator: EmulatorServer) -> None:
    created = resend.ContactProperties.create({"key": "seats", "type": "number", "fallback_value": 1})
    property_id = created["id"]
    got = declared(ContactProperty, resend.ContactProperties.get(property_id))
    assert (got["key"], got["type"], got["fallback_value"]) == ("seats", "number", 1)
    updated = resend.ContactProperties.update({"id": property_id, "fallback_value": 2})
    assert declared(ContactProperties.UpdateResponse, updated) == {"object": "contact_property",
                                                                   "id": property_id}
    listed = declared(ContactProperties.ListResponse, resend.ContactProperties.list())
    assert [item["fallback_value"] for item in listed["data"]] == [2]
    removed = declared(ContactProperties.RemoveResponse, resend.ContactProperties.remove(property_id))
    assert removed == {"object": "contact_property", "deleted": True, "id": property_id}


def test_sdk_raises_the_recorded_errors(emulator: EmulatorServer) -> None:
    with pytest.raises(ResendError) as caught:
        resend.Contacts.get(email="nobody@example.org")
    assert (caught.value.code, caught.value.error_type, caught.value.message) == (
        404, "not_found", "Contact not found")
    with pytest.raises(ResendError) as caught:
        resend.Contacts.create({"email": ""})
    assert caught.value.error_type in ("missing_required_field", "validation_error")


def test_async_methods(emulator: EmulatorServer) -> None:
    async def scenario() -> None:
        segment_id = (await resend.Segments.create_async({"name": "Beta"}))["id"]
        topic = await resend.Topics.create_async({"name": "News", "default_subscription": "opt_in"})
        topic_id = topic["id"]
        await resend.ContactProperties.create_async({"key": "plan", "type": "string"})
        contact_id = (await resend.Contacts.create_async({
            "email": "a@example.org", "segments": [{"id": segment_id}],
            "topics": [{"id": topic_id, "subscription": "opt_out"}], "properties": {"plan": "pro"}}))["id"]
        await resend.Contacts.update_async({"id": contact_id, "first_name": "A"})
        assert (await resend.Contacts.get_async(email="a@example.org"))["first_name"] == "A"
        members = await resend.Contacts.list_async(segment_id=segment_id)
        assert [c["id"] for c in members["data"]] == [contact_id]
        topics = await resend.Contacts.Topics.list_async(contact_id=contact_id)
        assert topics["data"][0]["subscription"] == "opt_out"
        segments = await resend.Contacts.Segments.list_async({"contact_id": contact_id})
        assert [s["id"] for s in segments["data"]] == [segment_id]
        assert (await resend.Topics.get_async(topic_id))["name"] == "News"
        assert [s["id"] for s in (await resend.Segments.list_async())["data"]] == [segment_id]
        assert (await resend.ContactProperties.list_async())["data"][0]["key"] == "plan"
        removed = await resend.Contacts.remove_async(id=contact_id)
        assert plain(removed) == {"object": "contact", "contact": contact_id, "deleted": True}

    asyncio.run(scenario())


def test_every_other_async_method_and_declared_fields(emulator: EmulatorServer) -> None:
    """The async twins `test_async_methods` leaves out, and the Segment/Audience types of the sync ones."""
    from resend.audiences._audience import Audience
    from resend.audiences._audiences import Audiences
    from resend.segments._segment import Segment

    with pytest.warns(DeprecationWarning):
        audience = declared(Audiences.CreateAudienceResponse, resend.Audiences.create({"name": "Old"}))
        declared(Audience, resend.Audiences.get(audience["id"]))
        declared(Audiences.ListResponse, resend.Audiences.list())
        declared(Audiences.RemoveAudienceResponse, resend.Audiences.remove(audience["id"]))

    async def scenario() -> None:
        segment_id = (await resend.Segments.create_async({"name": "Beta"}))["id"]
        got = declared(Segment, await resend.Segments.get_async(segment_id))
        assert got == {"object": "segment", "id": segment_id, "name": "Beta", "created_at": T0}
        renamed = await resend.Segments.update_async(segment_id, {"name": "Gamma"})
        assert declared(Segments.UpdateSegmentResponse, renamed)["id"] == segment_id
        topic = await resend.Topics.create_async({"name": "News", "default_subscription": "opt_in"})
        topic_id = topic["id"]
        assert (await resend.Topics.update_async(topic_id, {"description": "Weekly"}))["id"] == topic_id
        listed = await resend.Topics.list_async({"limit": 1})
        assert [t["description"] for t in listed["data"]] == ["Weekly"]
        contact_id = (await resend.Contacts.create_async({"email": "lin+a@example.org"}))["id"]
        added = await resend.Contacts.Segments.add_async(
            {"segment_id": segment_id, "email": "lin+a@example.org"})
        assert (added["contact_id"], added["segment_id"]) == (contact_id, segment_id)
        removed = await resend.Contacts.Segments.remove_async(
            {"segment_id": segment_id, "contact_id": contact_id})
        assert removed["deleted"] is True
        chosen = await resend.Contacts.Topics.update_async(
            {"email": "lin+a@example.org", "topics": [{"id": topic_id, "subscription": "opt_out"}]})
        assert chosen["id"] == contact_id
        subscriptions = await resend.Contacts.Topics.list_async(email="lin+a@example.org")
        assert [s["subscription"] for s in subscriptions["data"]] == ["opt_out"]
        imported = await resend.Contacts.Imports.create_async({"file": b"email\nb@example.org\n"})
        assert (await resend.Contacts.Imports.get_async(imported["id"]))["status"] == "queued"
        assert [i["id"] for i in (await resend.Contacts.Imports.list_async())["data"]] == [imported["id"]]
        property_id = (await resend.ContactProperties.create_async({"key": "plan", "type": "string"}))["id"]
        assert (await resend.ContactProperties.get_async(property_id))["key"] == "plan"
        updated = await resend.ContactProperties.update_async({"id": property_id, "fallback_value": "free"})
        assert plain(updated) == {"object": "contact_property", "id": property_id}
        assert (await resend.ContactProperties.remove_async(property_id))["deleted"] is True
        assert (await resend.Topics.remove_async(topic_id))["deleted"] is True
        assert (await resend.Segments.remove_async(segment_id))["deleted"] is True
        with pytest.warns(DeprecationWarning):
            old = await resend.Audiences.create_async({"name": "Old"})
            assert (await resend.Audiences.get_async(old["id"]))["name"] == "Old"
            assert [a["id"] for a in (await resend.Audiences.list_async())["data"]] == [old["id"]]
            assert (await resend.Audiences.remove_async(old["id"]))["deleted"] is True

    asyncio.run(scenario())


def test_list_items_carry_what_the_sdk_item_types_declare(emulator: EmulatorServer) -> None:
    from resend.contacts._contact_topic import ContactTopic
    from resend.contacts.segments._contact_segment import ContactSegment
    from resend.segments._segment import Segment

    segment_id = resend.Segments.create({"name": "Beta"})["id"]
    resend.Topics.create({"name": "News", "default_subscription": "opt_in"})
    resend.ContactProperties.create({"key": "plan", "type": "string"})
    resend.Contacts.create({"email": "lin@example.org", "segments": [{"id": segment_id}]})
    resend.Contacts.Imports.create({"file": b"email\na@example.org\n"})
    lists = [
        (Segment, resend.Segments.list(), frozenset()),
        (Topic, resend.Topics.list(), frozenset()),
        (ContactTopic, resend.Contacts.Topics.list(email="lin@example.org"), frozenset()),
        (ContactSegment, resend.Contacts.Segments.list({"email": "lin@example.org"}), frozenset()),
        (ContactImport, resend.Contacts.Imports.list(), frozenset()),
        # The SDK reuses the single-object type; list items have no `object` (contacts.md §8, OpenAPI).
        (ContactProperty, resend.ContactProperties.list(), frozenset({"object"})),
    ]
    for item_type, listed, but in lists:
        assert len(listed["data"]) == 1, item_type.__name__
        declared(item_type, listed["data"][0], but=but)
