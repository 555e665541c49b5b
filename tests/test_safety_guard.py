"""Local-only by construction (issue 11): a page on another local origin, in a real Chromium, cannot
drive the control plane, and a request naming a foreign Host (DNS rebinding) gets nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import sync_playwright

from emulator.testing import EmulatorServer
from tests.emails_helpers import email
from tests.ui_helpers import CHROMIUM, CHROMIUM_ARGS, OtherOrigin, running_server

PLANTED_KEY = "re_planted_by_a_web_page"


def _bodies(snapshot: Path, inbox: str = "anyone@example.org") -> dict[str, dict[str, Any]]:
    """What each attack asks for: bodies that would really act if the emulator took them."""
    return {
        "/_emulator/reset": {},
        "/_emulator/ui/reset": {},
        # Inbound mail the emulator would hand to the developer's app as a validly signed webhook.
        "/_emulator/inbound": {"from": "ceo@example.org", "to": [inbox], "subject": "Wire the money",
                               "text": "now"},
        "/_emulator/scenario": {"scenario": {"api_keys": [{"name": "evil", "token": PLANTED_KEY}]}},
        "/_emulator/clock/advance": {"days": 3},
        "/_emulator/snapshot/save": {"path": str(snapshot)},
    }


def _attack_page(base: str, snapshot: Path, inbox: str) -> str:
    """fetch(no-cors) with text/plain JSON, and form posts (text/plain and url-encoded) into iframes."""
    bodies = _bodies(snapshot, inbox)
    forms = []
    for index, (path, body) in enumerate(bodies.items()):
        # The text/plain form trick: `name=value` where name + "=" + value is the JSON document.
        text = json.dumps(body)
        name, value = (text[:-1] + ',"x":"', '"}') if body else ("{}", "")
        for kind, enctype in (("plain", "text/plain"), ("url", "application/x-www-form-urlencoded")):
            frame = f"f{kind}{index}"
            forms.append(
                f'<iframe name="{frame}"></iframe>'
                f'<form id="form-{frame}" method="POST" action="{base}{path}" enctype="{enctype}" '
                f'target="{frame}"><input name=\'{name}\' value=\'{value}\'></form>')
    script = f"""
    const bodies = {json.dumps(bodies)};
    window.results = [];
    (async () => {{
      for (const [path, body] of Object.entries(bodies)) {{
        for (const type of ["text/plain", "application/x-www-form-urlencoded", null]) {{
          const headers = type ? {{"content-type": type}} : {{}};
          try {{
            const init = {{method: "POST", mode: "no-cors", headers, body: JSON.stringify(body)}};
            await fetch("{base}" + path, init);
            window.results.push("sent " + path);
          }} catch (error) {{ window.results.push("failed " + path + " " + error); }}
        }}
      }}
      const frames = [...document.querySelectorAll("iframe")];
      const loaded = frames.map((frame) => new Promise((done) => frame.addEventListener("load", done)));
      document.querySelectorAll("form").forEach((form) => form.submit());
      await Promise.all(loaded);
      window.results.push("forms done");
    }})();
    """
    return f"<!doctype html><html><body>{''.join(forms)}<script>{script}</script></body></html>"


def _state(api: httpx.Client, snapshot: Path) -> dict[str, Any]:
    return {
        "emails": [row["id"] for row in api.get("/emails").json()["data"]],
        "received": api.get("/emails/receiving").json()["data"],
        "keys": sorted(row["name"] for row in api.get("/api-keys").json()["data"]),
        "clock": api.get("/_emulator/clock").json(),
        "snapshot": snapshot.read_bytes() if snapshot.exists() else None,
        "planted_key_works": api.get("/domains", headers={"Authorization": f"Bearer {PLANTED_KEY}"})
        .status_code == 200,
    }


@pytest.mark.browser
@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
def test_a_page_on_another_local_origin_cannot_drive_the_control_plane(
        api: httpx.Client, server: EmulatorServer, tmp_path: Path, existing: bool) -> None:
    snapshot = tmp_path / "stolen.db"
    if existing:
        snapshot.write_bytes(b"my thesis, not a snapshot")
    assert api.post("/emails", json=email()).status_code == 200
    before = _state(api, snapshot)
    inbox = "anyone@" + api.get("/_emulator/inbound/address").json()["domain"]
    site = OtherOrigin(_attack_page(server.url, snapshot, inbox))
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(site.url)
            page.wait_for_function("window.results && window.results.includes('forms done')", timeout=20_000)
            results = page.evaluate("window.results")
            browser.close()
    finally:
        site.close()
    # Every request reached the emulator (no-cors fetches resolve with an opaque response) ...
    assert results.count("sent /_emulator/reset") == 3 and len(results) == 3 * 6 + 1, results
    # ... and none of them changed anything.
    assert _state(api, snapshot) == before
    assert before["emails"] and not before["planted_key_works"]


def test_the_same_bodies_from_a_json_client_do_act(api: httpx.Client, tmp_path: Path) -> None:
    """The control: what the page sent is what works from a test suite (so the refusals above count)."""
    snapshot = tmp_path / "state.db"
    bodies = _bodies(snapshot, "anyone@" + api.get("/_emulator/inbound/address").json()["domain"])
    clock = api.get("/_emulator/clock").json()["now"]
    for path in ("/_emulator/scenario", "/_emulator/clock/advance", "/_emulator/snapshot/save",
                 "/_emulator/inbound"):
        assert api.post(path, json=bodies[path]).status_code in (200, 201), path
    assert len(api.get("/emails/receiving").json()["data"]) == 1
    assert api.get("/domains", headers={"Authorization": f"Bearer {PLANTED_KEY}"}).status_code == 200
    assert api.get("/_emulator/clock").json()["now"] != clock
    assert snapshot.exists()


@pytest.mark.parametrize("path", ["/emails", "/_emulator/outbox", "/_emulator/ui/", "/_emulator/health"])
def test_a_foreign_host_is_refused_before_any_route(api: httpx.Client, path: str) -> None:
    assert api.post("/emails", json=email()).status_code == 200
    response = api.get(path, headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400, "name": "invalid_host",
        "message": "This emulator answers only to local host names, not `evil.example` (add it with"
                   " --allowed-host)."}
    assert "access-control-allow-origin" not in response.headers
    refused = api.post("/_emulator/reset", headers={"Host": "evil.example:2580"})
    assert refused.status_code == 400
    assert len(api.get("/emails").json()["data"]) == 1


def test_no_cors_header_is_ever_sent(api: httpx.Client, server: EmulatorServer) -> None:
    evil = {"Origin": "http://127.0.0.1:9", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"}
    for path in ("/_emulator/reset", "/emails", "/_emulator/outbox"):
        preflight = api.options(path, headers=evil)
        assert preflight.status_code >= 400, path
        assert not [name for name in preflight.headers if name.startswith("access-control-")], path
    read = api.get("/_emulator/outbox", headers={"Origin": "http://127.0.0.1:9"})
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
def test_loopback_names_are_answered(api: httpx.Client, server: EmulatorServer, host: str) -> None:
    port = server.url.rsplit(":", 1)[1]
    assert api.get("/_emulator/health", headers={"Host": f"{host}:{port}"}).status_code == 200


def test_allowed_host_lets_a_container_name_in() -> None:
    with running_server(allowed_hosts=["emulator"]) as running, httpx.Client(base_url=running.url) as http:
        assert http.get("/_emulator/health", headers={"Host": "emulator:2580"}).status_code == 200
        assert http.get("/_emulator/health", headers={"Host": "other:2580"}).status_code == 400


@pytest.mark.parametrize("headers", [
    {"Origin": "http://127.0.0.1:9", "content-type": "application/json"},
    {"Origin": "null", "content-type": "application/json"},
    {"Sec-Fetch-Site": "same-site", "content-type": "application/json"},
    {"Sec-Fetch-Site": "cross-site", "content-type": "application/json"},
])
def test_cross_site_state_changes_are_refused(api: httpx.Client, headers: dict[str, str]) -> None:
    response = api.post("/_emulator/clock/advance", content=b'{"days": 1}', headers=headers)
    assert (response.status_code, response.json()["name"]) == (403, "cross_site_request")
    assert api.get("/_emulator/clock").json()["now"] == "2026-05-14T09:00:00.000000Z"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", None])
def test_control_plane_bodies_must_be_json(api: httpx.Client, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = api.post("/_emulator/clock/advance", content=b'{"days": 1}', headers=headers)
    assert (response.status_code, response.json()["name"]) == (415, "unsupported_media_type")
    assert api.get("/_emulator/clock").json()["now"] == "2026-05-14T09:00:00.000000Z"


def test_same_origin_and_non_browser_callers_keep_working(api: httpx.Client, server: EmulatorServer) -> None:
    same_origin = {"Origin": server.url, "Sec-Fetch-Site": "same-origin"}
    assert api.post("/_emulator/clock/advance", json={"days": 1}, headers=same_origin).status_code == 200
    assert api.post("/_emulator/reset").status_code == 200  # no body, no type: what the SDK helpers send
    # The API itself is not the control plane: SDKs send JSON, and a body-less POST is still answered.
    assert api.post("/emails", json=email()).status_code == 200
    inbox = api.get("/_emulator/inbound/address").json()
    raw = f"From: a@b.dev\r\nTo: anyone@{inbox['domain']}\r\nSubject: s\r\n\r\nhi\r\n".encode()
    inbound = api.post("/_emulator/inbound", content=raw, headers={"content-type": "message/rfc822"})
    assert inbound.status_code < 400, inbound.text
