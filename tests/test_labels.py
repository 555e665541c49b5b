"""Labels on sent mail (control/labels.py, web/labels.py): added and removed through the control plane and
the UI's csrf-guarded forms, shown in the list and the message view, searchable as `label:`, and gone
with their email (a delete, retention, a reset)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from emulator.control import retention
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings

UI = "/_emulator/ui"
SAME_SITE = {"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0)) as server:
        yield server


@pytest.fixture
def api(emulator: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url, headers=AUTH, timeout=30) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def send(api: httpx.Client, subject: str) -> str:
    response = api.post("/emails", json={"from": "qa@acme.dev", "to": ["ada@lovelace.dev"],
                                         "subject": subject, "text": "Hi"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def found(api: httpx.Client, query: str) -> list[str]:
    response = api.get("/_emulator/outbox", params={"q": query})
    assert response.status_code == 200, response.text
    return [email["subject"] for email in response.json()["data"]]


def labels(api: httpx.Client, email_id: str) -> list[str]:
    return list(api.get(f"/_emulator/outbox/{email_id}/labels").json()["data"])


def test_labels_are_added_removed_and_searched(api: httpx.Client) -> None:
    first, second = send(api, "First"), send(api, "Second")
    added = api.post(f"/_emulator/outbox/{first}/labels",
                     json={"labels": ["Checked", "needs review", "checked"]})
    assert added.json() == {"object": "list", "data": ["Checked", "needs review"]}
    assert api.post(f"/_emulator/outbox/{second}/labels", json={"label": "CHECKED"}).status_code == 200
    assert found(api, "label:checked") == ["Second", "First"]
    assert found(api, 'label:"needs review"') == ["First"]
    assert found(api, "-label:checked") == []
    assert found(api, "label:checked -label:\"needs review\"") == ["Second"]
    assert found(api, "label:nothing OR subject:second") == ["Second"]
    removed = api.delete(f"/_emulator/outbox/{first}/labels/checked")
    assert removed.json()["data"] == ["needs review"]
    assert found(api, "label:checked") == ["Second"]


@pytest.mark.parametrize(("body", "said"), [
    ({"labels": [""]}, "at least one character"),
    ({"labels": ["x" * 41]}, "at most 40 characters"),
    ({"label": 'say "hi"'}, "quote mark"),
    ({"labels": ["a\u202eb"]}, "control character"),
    ({"labels": [5]}, "must be a string"),
    ({}, "Give the labels to add"),
    ({"tags": ["x"]}, "Unknown field `tags`"),
])
def test_wrong_labels_are_refused_with_a_sentence(api: httpx.Client, body: dict[str, object],
                                                  said: str) -> None:
    response = api.post(f"/_emulator/outbox/{send(api, 'A')}/labels", json=body)
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")
    assert said in response.json()["message"]


def test_an_email_holds_at_most_20_labels(api: httpx.Client) -> None:
    email_id = send(api, "A")
    twenty = {"labels": [f"l{n}" for n in range(20)]}
    assert api.post(f"/_emulator/outbox/{email_id}/labels", json=twenty).is_success
    response = api.post(f"/_emulator/outbox/{email_id}/labels", json={"label": "one more"})
    assert response.status_code == 422 and "at most 20 labels" in response.json()["message"]


def test_label_search_errors_read_like_the_others(api: httpx.Client) -> None:
    response = api.get("/_emulator/outbox", params={"q": "label:"})
    assert response.json()["message"] == "`label:` needs a value, as in `label:checked`."
    wrong = api.get("/_emulator/outbox", params={"q": "labels:x"}).json()["message"]
    assert "`label:`" in wrong and wrong.startswith("Unknown operator `labels:`")


def test_labels_go_with_their_email(api: httpx.Client, emulator: EmulatorServer) -> None:
    email_id = send(api, "Doomed")
    api.post(f"/_emulator/outbox/{email_id}/labels", json={"label": "bug-1"})
    with httpx.Client(base_url=emulator.url) as browser:
        page = browser.get(f"{UI}/messages/{email_id}")
        token = page.text.split('name="csrf" value="')[1].split('"')[0]
        deleted = browser.post(f"{UI}/messages/{email_id}/delete", content=f"csrf={token}",
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert deleted.status_code == 303
    assert api.get(f"/_emulator/outbox/{email_id}/labels").status_code == 404
    assert count_labels(emulator) == 0  # no row left behind for the deleted email


def count_labels(emulator: EmulatorServer) -> int:
    async def count() -> int:
        async with emulator.emu.transaction() as tx:
            row = await tx.one("SELECT count(*) AS n FROM email_labels")
        return int(row["n"]) if row else 0

    return emulator.call(count())


def test_retention_and_reset_take_the_labels_too() -> None:
    with EmulatorServer(make_settings(port=0, max_emails=1)) as server, \
            httpx.Client(base_url=server.url, headers=AUTH) as api:
        old = send(api, "Old")
        api.post(f"/_emulator/outbox/{old}/labels", json={"label": "gone"})
        new = send(api, "New")
        assert server.call(retention.prune(server.emu)) == 1
        assert found(api, "label:gone") == [] and count_labels(server) == 0
        api.post(f"/_emulator/outbox/{new}/labels", json={"label": "reset"})
        assert api.post("/_emulator/reset").status_code == 200
        assert count_labels(server) == 0


def test_the_ui_adds_and_removes_labels_and_the_list_shows_them(api: httpx.Client,
                                                                 emulator: EmulatorServer) -> None:
    email_id = send(api, "Labelled")
    with httpx.Client(base_url=emulator.url) as browser:
        page = browser.get(f"{UI}/messages/{email_id}")
        token = page.text.split('name="csrf" value="')[1].split('"')[0]
        refused = browser.post(f"{UI}/messages/{email_id}/labels", content="label=sneaky",
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert refused.status_code == 403
        added = browser.post(f"{UI}/messages/{email_id}/labels", content=f"csrf={token}&label=QA+passed",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert (added.status_code, added.headers["location"]) == (303, f"{UI}/messages/{email_id}")
        assert labels(api, email_id) == ["QA passed"]
        assert '<span class="label"><bdi>QA passed</bdi></span>' in browser.get(f"{UI}/").text
        shown = browser.get(f"{UI}/messages/{email_id}").text
        assert 'aria-label="Remove label QA passed"' in shown
        assert browser.get(f"{UI}/", params={"q": "label:\"qa passed\""}).text.count('class="row') == 1
        removed = browser.post(f"{UI}/messages/{email_id}/labels/remove", content="label=qa+passed",
                               headers=SAME_SITE)
        assert removed.status_code == 303 and labels(api, email_id) == []
