"""Every method of the official Python SDK's Logs, Events, Automations (with Runs) and Usage, sync and
async, against a real uvicorn server; each answer carries every field the SDK's types declare."""

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
from resend.usage._usage import Usage

from emulator.testing import EmulatorServer
from tests.templates_helpers import plain, sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def declared(sdk_type: Any, body: Any) -> Any:
    missing = set(getattr(sdk_type, "__required_keys__", ())) - {"http_headers"} - set(body)
    assert not missing, (sdk_type.__name__, missing)
    return plain(body)


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
    declared(Event, resend.Events.get("user.created"))
    declared(
        Events.UpdateResponse, resend.Events.update({"identifier": event_id, "schema": {"name": "string"}})
    )
    assert [declared(EventListItem, item)["id"] for item in resend.Events.list()["data"]] == [event_id]
    automation_id = declared(
        Automations.CreateResponse,
        resend.Automations.create(
            {"name": "Tag", "status": "enabled", "steps": STEPS, "connections": CONNECTIONS}
        ),
    )["id"]
    declared(Automation, resend.Automations.get(automation_id))
    declared(
        Automations.UpdateResponse,
        resend.Automations.update({"automation_id": automation_id, "name": "Tag new users"}),
    )
    listed = declared(Automations.ListResponse, resend.Automations.list())
    assert [declared(AutomationListItem, item)["name"] for item in listed["data"]] == ["Tag new users"]
    resend.Contacts.create({"email": "ada@example.org"})
    sent = declared(
        Events.SendResponse,
        resend.Events.send({"event": "user.created", "email": "ada@example.org", "payload": {"name": "Ada"}}),
    )
    assert sent == {"object": "event", "event": "user.created"}
    flush(emulator)
    runs = declared(Automations.Runs.ListResponse, resend.Automations.Runs.list(automation_id))
    run = declared(AutomationRun, resend.Automations.Runs.get(automation_id, runs["data"][0]["id"]))
    assert (run["status"], [step["key"] for step in run["steps"]]) == ("completed", ["start", "tag"])
    assert resend.Contacts.get(email="ada@example.org")["first_name"] == "Ada"
    copy = declared(Automations.DuplicateResponse, resend.Automations.duplicate(automation_id))
    declared(Automations.StopResponse, resend.Automations.stop(automation_id))
    assert declared(Automations.DeleteResponse, resend.Automations.remove(copy["id"]))["deleted"] is True
    assert declared(Events.DeleteResponse, resend.Events.remove(event_id))["deleted"] is True


def test_logs_and_usage(emulator: EmulatorServer) -> None:
    resend.Domains.create({"name": "acme.dev"})
    resend.Emails.send({"from": "hi@acme.dev", "to": "lin@example.org", "subject": "Hi", "html": "<p>Hi</p>"})
    logs = resend.Logs.list()
    newest = [declared(Log, item) for item in logs["data"]][:2]
    assert [(log["method"], log["endpoint"]) for log in newest] == [("POST", "/emails"), ("POST", "/domains")]
    assert newest[0]["user_agent"].startswith("resend-python")
    one = resend.Logs.get(newest[0]["id"])
    assert one["request_body"]["subject"] == "Hi" and "re_" not in repr(one)
    usage = declared(Usage.GetResponse, resend.Usage.get())
    assert (usage["emails"]["daily"]["sent"], usage["domains"]["used"]) == (1, 1)


def test_async_methods(emulator: EmulatorServer) -> None:
    async def scenario() -> None:
        created = await resend.Automations.create_async(
            {"name": "A", "steps": STEPS, "connections": CONNECTIONS}
        )
        assert (await resend.Automations.get_async(created["id"]))["status"] == "disabled"
        await resend.Events.create_async({"name": "signed_up"})
        assert len((await resend.Events.list_async())["data"]) == 1
        assert (await resend.Usage.get_async())["object"] == "usage"
        assert (await resend.Logs.list_async())["object"] == "list"

    asyncio.run(scenario())
