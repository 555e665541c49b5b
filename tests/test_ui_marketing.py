"""The marketing pages of the UI (issue 27): contacts (search, filters, keyset pages), imports and
broadcasts with their progress, and a server that keeps answering while a broadcast goes out."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.core import tx as tx_module
from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.contacts_helpers import advance, contact, segment, topic

UI = "/_emulator/ui"


def imported(client: TestClient | httpx.Client, rows: int, **form: Any) -> str:
    csv_text = "email,first_name,last_name\n" + "".join(f"p{n}@example.com,Pat{n},Lee\n" for n in range(rows))
    data = {key: json.dumps(value) for key, value in form.items()}
    response = client.post("/contacts/imports", files={"file": ("c.csv", csv_text.encode())}, data=data)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def emails_on(html: str) -> list[str]:
    return re.findall(r'<td class="mono"[^>]*>([^<]+@example\.com)</td>', html)


def progress(html: str) -> tuple[int, int]:
    found = re.search(r'<progress value="(\d+)" max="(\d+)">', html)
    assert found, html
    return int(found[1]), int(found[2])


def test_contacts_are_found_by_email_or_name_segment_topic_and_unsubscribed(client: TestClient) -> None:
    news, vips = topic(client, "News", default="opt_out"), segment(client, "VIPs")
    contact(client, "ada@example.com", first_name="Ada", topics=[{"id": news, "subscription": "opt_in"}])
    contact(client, "bob@example.com", last_name="Ada-Smith", unsubscribed=True)
    cy = contact(client, "cy@example.com", first_name="Cy")
    assert client.post(f"/contacts/{cy}/segments/{vips}").status_code == 200
    page = client.get(f"{UI}/contacts")
    assert page.status_code == 200 and 'aria-current="page">Contacts' in page.text
    assert emails_on(page.text) == ["cy@example.com", "bob@example.com", "ada@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"q": "ADA"}).text) == [
        "bob@example.com", "ada@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"q": "cy@"}).text) == ["cy@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"segment": vips}).text) == ["cy@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"topic": news}).text) == ["ada@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"unsubscribed": "yes"}).text) == ["bob@example.com"]
    assert emails_on(client.get(f"{UI}/contacts", params={"q": "50%_"}).text) == []


def test_contact_pages_walk_every_contact_once_with_the_filters_kept(client: TestClient) -> None:
    imported(client, 130)
    advance(client, 2)
    seen, url = [], f"{UI}/contacts?q=Pat"
    for _ in range(5):
        page = client.get(url).text
        seen += emails_on(page)
        found = re.search(r'<a href="([^"]+)" rel="next">', page)
        if not found:
            break
        url = found[1].replace("&amp;", "&")
        assert "q=Pat" in url
    assert seen == [f"p{n}@example.com" for n in reversed(range(130))]


def test_a_running_import_shows_its_progress_until_it_completes(client: TestClient) -> None:
    imported(client, 1200)
    advance(client, 1)
    page = client.get(f"{UI}/imports").text
    assert 'data-running="true"' in page and progress(page) == (500, 1200)
    assert "500 of 1,200" in page
    advance(client, 2)
    page = client.get(f"{UI}/imports").text
    assert 'data-running="false"' in page and progress(page) == (1200, 1200)


def test_broadcast_pages_show_status_audience_and_each_recipients_delivery(client: TestClient) -> None:
    everyone = segment(client, "Everyone")
    imported(client, 60, segments=[{"id": everyone}])
    advance(client, 2)
    created = client.post("/broadcasts", json={"segment_id": everyone, "from": "news@acme.dev",
                                               "name": "June", "subject": "Hi", "html": "<p>Hi</p>",
                                               "send": True})
    broadcast_id = created.json()["id"]
    advance(client, 5)  # sent, then delivered two seconds later
    listing = client.get(f"{UI}/broadcasts").text
    assert "June" in listing and ">sent<" in listing and "60" in listing
    page = client.get(f"{UI}/broadcasts/{broadcast_id}").text
    assert progress(page) == (60, 60)
    assert re.search(r">delivered</span> 60<", page)
    recipients = re.findall(r'>(p\d+@example\.com)</a>', page)
    assert recipients == [f"p{n}@example.com" for n in range(50)]
    following = re.search(r'<a href="([^"]+)" rel="next">', page)
    assert following is not None
    assert re.findall(r'>(p\d+@example\.com)</a>', client.get(following[1]).text) == [
        f"p{n}@example.com" for n in range(50, 60)]
    assert client.get(f"{UI}/broadcasts/nope").status_code == 404


def test_requests_are_answered_while_a_broadcast_goes_out(live_server: EmulatorServer,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of one slice (200 members) rather than ~0.3 s of work: 3 000 members then make several,
    # however fast the machine, and the page is answered between them.
    monkeypatch.setattr(tx_module, "LONG_SECONDS", 0.0)
    with httpx.Client(base_url=live_server.url, headers=AUTH, timeout=60) as api:
        assert api.post("/_emulator/reset").status_code == 200
        everyone = api.post("/segments", json={"name": "Everyone"}).json()["id"]
        imported(api, 3000, segments=[{"id": everyone}])
        assert api.post("/_emulator/clock/advance", json={"seconds": 8}).status_code == 200
        broadcast_id = api.post("/broadcasts", json={
            "segment_id": everyone, "from": "news@acme.dev", "subject": "Hi", "html": "<p>Hi</p>",
            "send": True}).json()["id"]
        seen = []
        for _ in range(10_000):  # each answer comes between two chunks of the fan-out
            page = api.get(f"{UI}/broadcasts/{broadcast_id}").text
            if 'data-running="false"' in page and ">sent<" in page:
                break
            if "<progress" in page:
                seen.append(progress(page)[0])
        assert any(0 < walked < 3000 for walked in seen), seen
        assert progress(page) == (3000, 3000)
        assert api.get(f"/broadcasts/{broadcast_id}").json()["status"] == "sent"
