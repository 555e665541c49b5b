"""The navigation check (control/qa/navigation.py): every element by which an email tries to replace the
window it is read in, with its source line, in the `/qa` report the Checks tab shows."""

from __future__ import annotations

from starlette.testclient import TestClient

from emulator.web.frame import block_refresh
from tests.emails_helpers import send

OUTBOX = "/_emulator/outbox"
NAVIGATING = """<!doctype html>
<html><head>
<meta http-equiv="Refresh" content="0;url=https://acme.dev/elsewhere">
<base target="_self">
</head><body>
<a href="https://acme.dev/a" target="_self">self</a>
<a href="https://acme.dev/b" target="_TOP">top</a>
<a href="https://acme.dev/c" target="_parent">parent</a>
<a href="https://acme.dev/d" target="_blank">new tab, fine</a>
<a href="https://acme.dev/e">no target, fine</a>
<form action="https://acme.dev/subscribe" method="post"><input name="email"></form>
<meta http-equiv="content-type" content="text/html; charset=utf-8">
</body></html>"""


def navigation(client: TestClient, html: str) -> dict[str, object]:
    body = client.get(f"{OUTBOX}/{send(client, html=html)}/qa").json()
    return dict(body["navigation"])


def test_each_navigating_element_is_a_finding_with_its_line(client: TestClient) -> None:
    found = navigation(client, NAVIGATING)
    assert found["status"] == "warning"
    rows = [(p["problem"], p["line"], p["detail"]) for p in found["problems"]]  # type: ignore[attr-defined]
    assert rows == [
        ("meta_refresh", 3, "0;url=https://acme.dev/elsewhere"),
        ("base_target", 4, "target=_self"),
        ("link_target", 6, "target=_self https://acme.dev/a"),
        ("link_target", 7, "target=_top https://acme.dev/b"),
        ("link_target", 8, "target=_parent https://acme.dev/c"),
        ("form", 11, "post https://acme.dev/subscribe"),
    ]


def test_an_email_that_navigates_nowhere_is_ok(client: TestClient) -> None:
    found = navigation(client, '<base target="_blank"><a href="https://acme.dev" target="_blank">x</a>')
    assert found == {"object": "navigation_check", "status": "ok", "problems": []}


def test_an_entity_encoded_refresh_is_found_and_blocked(client: TestClient) -> None:
    html = '<meta http-equiv="&#114;efresh" content="1">'
    assert [p["problem"] for p in navigation(client, html)["problems"]] == ["meta_refresh"]  # type: ignore[attr-defined]
    assert "http-equiv" not in block_refresh(html).replace("data-blocked-http-equiv", "")


def test_only_refresh_pragmas_are_renamed() -> None:
    kept = '<meta http-equiv="content-type" content="text/html">'
    assert block_refresh(kept) == kept
    assert block_refresh("<META HTTP-EQUIV = 'refresh' content=0>") == \
        "<META data-blocked-http-equiv = 'refresh' content=0>"
