"""Every method of the official Python SDK's `Templates` (sync and async) against a real uvicorn server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import resend
from resend.exceptions import ResendError

from emulator.testing import EmulatorServer
from tests.templates_helpers import (
    ORDER_HTML,
    ORDER_TEXT,
    T0,
    order_template,
    plain,
    sdk_against,
)


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def advance(server: EmulatorServer, seconds: float) -> None:
    assert httpx.post(f"{server.url}/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


def test_create_get_publish_whole_bodies(emulator: EmulatorServer) -> None:
    created = resend.Templates.create(order_template())  # type: ignore[arg-type]
    template_id = created["id"]
    assert plain(created) == {"id": template_id, "object": "template"}

    advance(emulator, 72.31)
    assert plain(resend.Templates.publish("order-confirmation")) == {"id": template_id, "object": "template"}
    got = plain(resend.Templates.get(template_id))
    published = "2026-05-14 09:01:12.31+00"
    variable_ids = [item["id"] for item in got["variables"]]
    assert got == {
        "object": "template", "id": template_id, "current_version_id": got["current_version_id"],
        "alias": "order-confirmation", "name": "order-confirmation",
        "created_at": T0, "updated_at": published, "status": "published", "published_at": published,
        "from": "Acme Store <store@mail.acme.dev>", "subject": "Thanks for your order!", "reply_to": None,
        "html": ORDER_HTML, "text": ORDER_TEXT,
        "variables": [
            {"id": variable_ids[0], "key": "PRODUCT", "type": "string", "fallback_value": "item",
             "created_at": T0, "updated_at": T0},
            {"id": variable_ids[1], "key": "PRICE", "type": "number", "fallback_value": 25,
             "created_at": T0, "updated_at": T0},
        ],
        "has_unpublished_versions": False,
    }
    assert len({template_id, got["current_version_id"], *variable_ids}) == 4


def test_update_then_get_by_alias_shows_the_draft(emulator: EmulatorServer) -> None:
    template_id = resend.Templates.create(order_template())["id"]  # type: ignore[arg-type]
    resend.Templates.publish(template_id)
    version = resend.Templates.get(template_id)["current_version_id"]
    advance(emulator, 60)
    updated = resend.Templates.update({"id": "order-confirmation", "subject": "Order {{{PRODUCT}}}",
                                       "reply_to": "help@acme.dev"})
    assert plain(updated) == {"id": template_id, "object": "template"}
    got = resend.Templates.get("order-confirmation")
    assert (got["subject"], got["reply_to"], got["updated_at"]) == (
        "Order {{{PRODUCT}}}", ["help@acme.dev"], "2026-05-14 09:01:00+00")
    assert (got["status"], got["published_at"], got["has_unpublished_versions"]) == ("published", T0, True)
    assert got["current_version_id"] != version


def test_list_is_paginated_newest_first(emulator: EmulatorServer) -> None:
    ids = [resend.Templates.create({"name": f"t{n}", "html": "<p>hi</p>"})["id"] for n in range(3)]
    page = plain(resend.Templates.list({"limit": 2}))
    assert page == {"object": "list", "has_more": True, "data": [
        {"id": ids[2], "name": "t2", "status": "draft", "published_at": None, "created_at": T0,
         "updated_at": T0, "alias": None},
        {"id": ids[1], "name": "t1", "status": "draft", "published_at": None, "created_at": T0,
         "updated_at": T0, "alias": None},
    ]}
    rest = resend.Templates.list({"limit": 2, "after": ids[1]})
    assert [item["id"] for item in rest["data"]] == [ids[0]] and rest["has_more"] is False
    back = resend.Templates.list({"before": ids[0]})
    assert [item["id"] for item in back["data"]] == [ids[2], ids[1]]
    assert [item["id"] for item in resend.Templates.list()["data"]] == ids[::-1]


def test_duplicate_and_remove(emulator: EmulatorServer) -> None:
    template_id = resend.Templates.create(order_template())["id"]  # type: ignore[arg-type]
    copy = resend.Templates.duplicate("order-confirmation")
    assert plain(copy) == {"id": copy["id"], "object": "template"} and copy["id"] != template_id
    got = resend.Templates.get(copy["id"])
    assert (got["name"], got["alias"], got["status"], got["html"]) == (
        "order-confirmation (Copy)", None, "draft", ORDER_HTML)
    removed = resend.Templates.remove("order-confirmation")
    assert plain(removed) == {"object": "template", "id": template_id, "deleted": True}
    with pytest.raises(ResendError) as caught:
        resend.Templates.get(template_id)
    assert (caught.value.code, caught.value.error_type) == (404, "not_found")


def test_sdk_reports_validation_errors(emulator: EmulatorServer) -> None:
    with pytest.raises(ResendError) as caught:
        resend.Templates.create({"name": "x", "html": "<p/>",  # type: ignore[typeddict-item]
                                 "variables": [{"key": "EMAIL", "type": "string"}]})
    assert (caught.value.code, caught.value.error_type) == (422, "validation_error")


def test_async_methods(emulator: EmulatorServer) -> None:
    async def scenario() -> None:
        created = await resend.Templates.create_async(order_template())  # type: ignore[arg-type]
        template_id = created["id"]
        await resend.Templates.update_async({"id": template_id, "name": "renamed"})
        await resend.Templates.publish_async(template_id)
        got = await resend.Templates.get_async("order-confirmation")
        assert (got["name"], got["status"]) == ("renamed", "published")
        copy = await resend.Templates.duplicate_async(template_id)
        listed = await resend.Templates.list_async({"limit": 1})
        assert [item["id"] for item in listed["data"]] == [copy["id"]] and listed["has_more"] is True
        removed = await resend.Templates.remove_async(copy["id"])
        assert plain(removed) == {"object": "template", "id": copy["id"], "deleted": True}

    asyncio.run(scenario())
