"""The UI theme switch over HTTP: a same-site form post remembers the choice in a cookie, every page renders
it on <html>, nothing else is accepted, and the way back stays inside the UI."""

from __future__ import annotations

import httpx
from starlette.testclient import TestClient

UI = "/_emulator/ui"
SAME_SITE = {"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}


def choose(client: TestClient, body: str, **headers: str) -> httpx.Response:
    return client.post(f"{UI}/theme", content=body, headers={**SAME_SITE, **headers}, follow_redirects=False)


def test_a_chosen_theme_is_remembered_and_rendered(client: TestClient) -> None:
    response = choose(client, f"theme=dark&back={UI}/webhooks%3Fx%3D1")
    assert response.status_code == 303 and response.headers["location"] == f"{UI}/webhooks?x=1"
    assert "emulator_ui_theme=dark" in response.headers["set-cookie"]
    assert '<html lang="en" data-theme="dark">' in client.get(f"{UI}/").text
    assert '<option value="dark" selected>' in client.get(f"{UI}/webhooks").text


def test_unknown_themes_and_foreign_ways_back_are_ignored(client: TestClient) -> None:
    response = choose(client, "theme=neon&back=https://evil.example/")
    assert response.status_code == 303 and response.headers["location"] == f"{UI}/"
    assert "set-cookie" not in response.headers
    client.cookies.set("emulator_ui_theme", "<script>")
    assert '<html lang="en" data-theme="auto">' in client.get(f"{UI}/").text


def test_another_site_cannot_switch_it(client: TestClient) -> None:
    response = choose(client, "theme=dark", **{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
    assert response.status_code == 403
    assert "set-cookie" not in response.headers
