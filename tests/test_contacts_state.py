"""The contacts tables in the emulator's whole-state operations: reset, snapshots, the `basic` scenario."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from tests.contacts_helpers import contact, prop, segment, topic

LISTS = ["/contacts", "/segments", "/audiences", "/topics", "/contact-properties", "/contacts/imports"]


def build(client: TestClient) -> str:
    prop(client, "plan")
    beta, news = segment(client, "Beta"), topic(client, "News")
    contact_id = contact(client, "lin@example.org", properties={"plan": "pro"}, segments=[{"id": beta}],
                         topics=[{"id": news, "subscription": "opt_out"}])
    files = {"file": ("c.csv", b"email\na@example.org\n", "text/csv")}
    assert client.post("/contacts/imports", files=files).status_code == 201
    return contact_id


def views(client: TestClient, contact_id: str) -> dict[str, bytes]:
    paths = [*LISTS, f"/contacts/{contact_id}", f"/contacts/{contact_id}/segments",
             f"/contacts/{contact_id}/topics"]
    return {path: client.get(path).content for path in paths}


def test_snapshot_restore_brings_every_contacts_table_back(client: TestClient, tmp_path: Path) -> None:
    contact_id = build(client)
    before = views(client, contact_id)
    assert client.post("/_emulator/snapshot/save", json={"path": str(tmp_path / "s.db")}).status_code == 200
    client.delete(f"/contacts/{contact_id}")
    client.delete(f"/segments/{client.get('/segments').json()['data'][0]['id']}")
    client.post("/topics", json={"name": "Other", "default_subscription": "opt_in"})
    assert views(client, contact_id) != before
    restored = client.post("/_emulator/snapshot/restore", json={"path": str(tmp_path / "s.db")})
    assert restored.status_code == 200
    assert views(client, contact_id) == before


def test_reset_empties_every_contacts_table(client: TestClient) -> None:
    build(client)
    assert client.post("/_emulator/reset").status_code == 200
    for path in LISTS:
        assert client.get(path).json()["data"] == [], path


def test_the_basic_scenario_seeds_a_small_audience(client: TestClient) -> None:
    made = client.post("/_emulator/scenario", json={"name": "basic"})
    assert made.status_code == 201, made.text
    loaded = made.json()["loaded"]
    assert [item["email"] for item in loaded["contacts"]] == [
        "ada@example.com", "grace@example.com", "alan@example.com"]
    newsletter = loaded["segments"][0]["id"]
    members = client.get(f"/segments/{newsletter}/contacts").json()["data"]
    assert {(m["email"], m["unsubscribed"]) for m in members} == {
        ("ada@example.com", False), ("grace@example.com", False), ("alan@example.com", True)}
    assert client.get("/contacts/ada%40example.com").json()["properties"] == {
        "plan": {"value": "Pro", "type": "string"}}
    grace = client.get("/contacts/grace%40example.com/topics").json()["data"]
    assert [(t["name"], t["subscription"]) for t in grace] == [("Product updates", "opt_out")]


def test_a_scenario_naming_an_unknown_segment_loads_nothing(client: TestClient) -> None:
    response = client.post("/_emulator/scenario", json={"scenario": {
        "topics": [{"name": "News", "default_subscription": "opt_in"}],
        "contacts": [{"email": "a@example.org", "segments": ["Ghosts"]}]}})
    assert (response.status_code, response.json()["message"]) == (404, "Segment not found")
    assert client.get("/topics").json()["data"] == []


def test_every_contacts_broadcasts_and_suppressions_list_is_scoped_to_the_key() -> None:
    """With isolation by key, one key's segments, topics, properties, imports, broadcasts and suppressions
    are invisible to another, which may reuse the same names, keys and addresses."""
    from emulator.app import create_app
    from tests.conftest import make_settings

    with TestClient(create_app(make_settings(isolate_keys=True))) as raw:
        one, two = {"Authorization": "Bearer re_tenant_one"}, {"Authorization": "Bearer re_tenant_two"}

        def make(headers: dict[str, str]) -> dict[str, str]:
            def made(path: str, **body: object) -> str:
                response = raw.post(path, json=body, headers=headers)
                assert response.status_code == 201, response.text
                return str(response.json()["id"])
            segment_id = made("/segments", name="Beta")
            return {
                "segments": segment_id, "topics": made("/topics", name="News", default_subscription="opt_in"),
                "contact-properties": made("/contact-properties", key="plan", type="string"),
                "suppressions": made("/suppressions", email="ada@example.org"),
                "broadcasts": made("/broadcasts", segment_id=segment_id, **{"from": "a@acme.dev"},
                                   subject="S", html="<p>x</p>"),
                "contacts/imports": made("/contacts/imports", file="email\nb@example.org\n"),
            }

        mine = make(one)
        for path, resource_id in mine.items():
            assert raw.get(f"/{path}", headers=two).json()["data"] == [], path
            assert raw.get(f"/{path}/{resource_id}", headers=two).status_code == 404, path
        theirs = make(two)
        assert set(theirs.values()).isdisjoint(mine.values())
        for path, resource_id in mine.items():
            assert [item["id"] for item in raw.get(f"/{path}", headers=one).json()["data"]] == [resource_id]
