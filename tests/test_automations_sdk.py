"""Every method of the official Python SDK's Logs, Events, Automations (with Runs) and Usage, sync and
async, against a real uvicorn server; each answer carries every field the SDK's types declare, nested
types included (`tests/sdk_types.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import resend
from resend.automations._automation import Automation, AutomationListItem, AutomationRun
from resend.automations._automations import Automations
from resend.events._event import Event, EventListItem
from resend.events._events import Events
from resend.logs._log import Log
from resend.logs._logs import Logs
from resend.usage._usage import Usage

from emulator.testing import EmulatorServer
from tests.conftest import KEY
from tests.sdk_types import declared
from tests.templates_helpers import plain, sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def flush(server: EmulatorServer) -> None:
    assert httpx.post(f"{server.url}/_emulator/flush").status_code == 200


STEPS: list[Any] = [
    {"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
    {"key": "tag", "type": "contact_update", "config": {"first_name": {"var": "event.name"}}},
]
CONNECTIONS: list[Any] = [{"from": "start", "to": "tag", "type": "default"}]


def test_events_automations_runs(emulator: EmulatorServer) -> None:
    event_id = declared(
        Events.CreateResponse, resend.Events.create({"name": "user.created", "schema": {"name": "string"}})
    )["id"]
    assert declared(Event, resend.Events.get("user.created"))["schema"] == {"name": "string"}
    declared(
        Events.UpdateResponse, resend.Events.update({"identifier": event_id, "schema": {"name": "string"}})
    )
    listed_events = declared(Events.ListResponse, resend.Events.list())
    assert [declared(EventListItem, item)["id"] for item in listed_events["data"]] == [event_id]
    automation_id = declared(
        Automations.CreateResponse,
        resend.Automations.create(
            {"name": "Tag", "status": "enabled", "steps": STEPS, "connections": CONNECTIONS}
        ),
    )["id"]
    assert plain(declared(Automation, resend.Automations.get(automation_id)))["steps"] == STEPS
    declared(
        Automations.UpdateResponse,
        resend.Automations.update({"automation_id": automation_id, "name": "Tag new users"}),
    )
    listed = declared(Automations.ListResponse, resend.Automations.list({"status": "enabled"}))
    assert [declared(AutomationListItem, item)["name"] for item in listed["data"]] == ["Tag new users"]
    resend.Contacts.create({"email": "ada@example.org"})
    sent = declared(
        Events.SendResponse,
        resend.Events.send({"event": "user.created", "email": "ada@example.org", "payload": {"name": "Ada"}}),
    )
    assert plain(sent) == {"object": "event", "event": "user.created"}
    flush(emulator)
    runs = declared(Automations.Runs.ListResponse, resend.Automations.Runs.list(automation_id))
    run = declared(AutomationRun, resend.Automations.Runs.get(automation_id, runs["data"][0]["id"]))
    assert (run["status"], [step["key"] for step in run["steps"]]) == ("completed", ["start", "tag"])
    assert resend.Contacts.get(email="ada@example.org")["first_name"] == "Ada"
    copy = declared(Automations.DuplicateResponse, resend.Automations.duplicate(automation_id))
    stopped = declared(Automations.StopResponse, resend.Automations.stop(automation_id))
    assert (stopped["id"], stopped["status"]) == (automation_id, "disabled")
    assert declared(Automations.DeleteResponse, resend.Automations.remove(copy["id"]))["deleted"] is True
    assert declared(Events.DeleteResponse, resend.Events.remove(event_id))["deleted"] is True


def test_logs_and_usage(emulator: EmulatorServer) -> None:
    token = resend.ApiKeys.create({"name": "ci"})["token"]
    resend.Domains.create({"name": "acme.dev"})
    resend.Emails.send({"from": "hi@acme.dev", "to": "lin@example.org", "subject": "Hi", "html": "<p>Hi</p>"})
    logs = declared(Logs.ListResponse, resend.Logs.list({"limit": 3}))
    newest = [declared(Log, item) for item in logs["data"]]
    assert [(log["method"], log["endpoint"], log["response_status"]) for log in newest] == [
        ("POST", "/emails", 200), ("POST", "/domains", 201), ("POST", "/api-keys", 201)]
    assert {log["user_agent"] for log in newest} == {f"resend-python:{resend.__version__}"}
    one = declared(Logs.GetResponse, resend.Logs.get(newest[0]["id"]))
    assert one["request_body"]["subject"] == "Hi"
    stored = repr([plain(resend.Logs.get(log["id"])) for log in newest])
    assert KEY not in stored and token not in stored and "[redacted]" in stored
    usage = declared(Usage.GetResponse, resend.Usage.get())
    assert (usage["emails"]["daily"]["sent"], usage["domains"]["used"]) == (1, 1)


def test_every_async_method(emulator: EmulatorServer) -> None:
    async def events() -> None:
        made = declared(Events.CreateResponse, await resend.Events.create_async({"name": "signed_up"}))
        declared(Event, await resend.Events.get_async(made["id"]))
        update = {"identifier": "signed_up", "schema": {"plan": "string"}}
        declared(Events.UpdateResponse, await resend.Events.update_async(update))  # type: ignore[arg-type]
        listed = declared(Events.ListResponse, await resend.Events.list_async())
        assert [item["name"] for item in listed["data"]] == ["signed_up"]
        event = {"event": "user.created", "email": "ada@example.org"}
        declared(Events.SendResponse, await resend.Events.send_async(event))  # type: ignore[arg-type]
        declared(Events.DeleteResponse, await resend.Events.remove_async("signed_up"))

    async def automations() -> None:
        body = {"name": "A", "status": "enabled", "steps": STEPS, "connections": CONNECTIONS}
        made = declared(Automations.CreateResponse, await resend.Automations.create_async(body))  # type: ignore[arg-type]
        automation_id = made["id"]
        assert declared(Automation, await resend.Automations.get_async(automation_id))["status"] == "enabled"
        rename = {"automation_id": automation_id, "name": "B"}
        declared(Automations.UpdateResponse, await resend.Automations.update_async(rename))  # type: ignore[arg-type]
        declared(Automations.ListResponse, await resend.Automations.list_async())
        await events()
        flush(emulator)
        runs = await resend.Automations.Runs.list_async(automation_id)
        declared(Automations.Runs.ListResponse, runs)
        run = await resend.Automations.Runs.get_async(automation_id, runs["data"][0]["id"])
        assert declared(AutomationRun, run)["status"] == "completed"
        copy = await resend.Automations.duplicate_async(automation_id)
        declared(Automations.DuplicateResponse, copy)
        declared(Automations.StopResponse, await resend.Automations.stop_async(automation_id))
        declared(Automations.DeleteResponse, await resend.Automations.remove_async(copy["id"]))

    async def logs_and_usage() -> None:
        declared(Usage.GetResponse, await resend.Usage.get_async())
        listed = declared(Logs.ListResponse, await resend.Logs.list_async())
        assert listed["data"][0]["endpoint"] == "/usage"
        declared(Logs.GetResponse, await resend.Logs.get_async(listed["data"][0]["id"]))

    asyncio.run(automations())
    asyncio.run(logs_and_usage())
