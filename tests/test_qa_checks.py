"""The QA toolbox as JSON (/_emulator/outbox/{id}/…-check): HTML support, links, List-Unsubscribe, text."""

from __future__ import annotations

import base64
from typing import Any

from starlette.testclient import TestClient

from emulator.control.qa.compat import PACKAGE_VERSION
from tests.emails_helpers import PNG, send, verified_domain

OUTBOX = "/_emulator/outbox"
PLAIN_TABLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Your order</title></head><body>
<table width="100%" cellpadding="0" cellspacing="0" border="0">
<tr><td align="center" style="background-color: #ffffff; color: #333333; font-family: Arial, sans-serif">
Hello, Ada. Your order has shipped.
</td></tr></table></body></html>"""
FLEX = """<!doctype html>
<html><head><style>
.row { display: flex; }
</style></head>
<body><div class="row"><div>Left</div><div>Right</div></div>
<div style="display:flex">Again</div></body></html>"""


def check(client: TestClient, email_id: str, name: str) -> dict[str, Any]:
    response = client.get(f"{OUTBOX}/{email_id}/{name}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["email_id"] == email_id
    return body


def flagged(body: dict[str, Any]) -> dict[str, list[str]]:
    return {f["slug"]: [c["client"] for c in f["clients"]] for f in body["unsupported"]}


def test_html_check_flags_display_flex_in_outlook_for_windows_on_its_lines(client: TestClient) -> None:
    body = check(client, send(client, html=FLEX), "html-check")
    assert body["object"] == "html_check"
    assert body["dataset"] == {"name": "caniemail", "package_version": PACKAGE_VERSION,
                               "updated": "2025-09-09"}
    flex = next(f for f in body["unsupported"] if f["slug"] == "css-display-flex")
    assert flex["title"] == "display:flex" and flex["lines"] == [3, 6]
    outlook = next(c for c in flex["clients"] if c["client"] == "outlook.windows")
    assert outlook == {"client": "outlook.windows", "name": "Outlook Windows", "version": "2019",
                       "support": "unsupported", "notes": []}
    assert "apple-mail.macos" not in flagged(body)["css-display-flex"]
    windows = next(c for c in body["clients"] if c["client"] == "outlook.windows")
    assert windows["score"] < 100 and body["score"] < 100


def test_html_check_flags_nothing_in_a_plain_table_layout(client: TestClient) -> None:
    body = check(client, send(client, html=PLAIN_TABLE), "html-check")
    assert body["unsupported"] == []
    assert body["features_detected"] >= 5  # table, cellpadding, align, background-color, font-family...
    assert {f["slug"] for f in body["partial"]} <= {"html-align", "html-width"}
    assert body["score"] > 95


def test_a_styled_body_is_flagged_where_clients_drop_the_body(client: TestClient) -> None:
    html = '<body style="background:#eeeeee"><p>Hi</p></body>'
    styled = check(client, send(client, html=html), "html-check")
    body = next(f for f in styled["unsupported"] if f["slug"] == "html-body")
    assert body["lines"] == [1] and "outlook.macos" in [c["client"] for c in body["clients"]]


def test_html_check_of_a_text_only_email_detects_nothing(client: TestClient) -> None:
    body = check(client, send(client, html=None, text="Hello"), "html-check")
    assert (body["score"], body["features_detected"], body["unsupported"]) == (100.0, 0, [])


LINKS = """<p><a href="https://acme.dev/ok">fine</a>
<a href="http://acme.dev/plain">plain</a>
<a href="javascript:alert(1)">js</a>
<a href="http://localhost:3000/reset">local</a>
<a href="https://192.168.1.20/admin">private</a>
<a href="/relative/path">relative</a>
<a href="https://exa mple.com">spaces</a>
<a href="mailto:help@acme.dev">mail</a>
<img src="https://cdn.acme.dev/logo.png">
<img src="https://cdn.acme.dev/deco.png" alt="">
<img src="cid:LOGO" alt="Logo"><img src="cid:nowhere" alt="x">
<a href="http://[::1/broken">bad ipv6</a> <a href="https://acme.dev/_emulator/t/click/x?y">lookalike</a></p>"""


def test_link_check_names_each_problem_of_each_link_and_image(client: TestClient) -> None:
    logo = {"filename": "logo.png", "content": base64.b64encode(PNG).decode(), "content_id": "logo"}
    body = check(client, send(client, html=LINKS, attachments=[logo]), "link-check")
    found = [(e["kind"], e["url"], e["status"], [p["problem"] for p in e["problems"]]) for e in body["links"]]
    assert found == [
        ("link", "https://acme.dev/ok", "ok", []),
        ("link", "http://acme.dev/plain", "warning", ["insecure"]),
        ("link", "javascript:alert(1)", "error", ["javascript"]),
        ("link", "http://localhost:3000/reset", "error", ["local_host", "insecure"]),
        ("link", "https://192.168.1.20/admin", "error", ["local_host"]),
        ("link", "/relative/path", "error", ["relative"]),
        ("link", "https://exa mple.com", "error", ["malformed"]),
        ("link", "mailto:help@acme.dev", "ok", []),
        ("image", "https://cdn.acme.dev/logo.png", "warning", ["missing_alt"]),
        ("image", "https://cdn.acme.dev/deco.png", "ok", []),
        ("image", "cid:LOGO", "ok", []),
        ("image", "cid:nowhere", "error", ["missing_cid"]),
        ("link", "http://[::1/broken", "error", ["malformed"]),
        ("link", "https://acme.dev/_emulator/t/click/x?y", "ok", []),  # not one of this email's tokens
    ]
    assert [e["line"] for e in body["links"]][:3] == [1, 2, 3]
    assert (body["errors"], body["warnings"]) == (7, 2)


def test_link_check_resolves_click_tracking_links_to_their_targets(client: TestClient) -> None:
    domain_id = verified_domain(client)
    assert client.patch(f"/domains/{domain_id}", json={"click_tracking": True,
                                                       "open_tracking": True}).status_code == 200
    html = '<a href="http://acme.dev/a">A</a> <a href="https://acme.dev/b">B</a>'
    body = check(client, send(client, html=html), "link-check")
    links = [e for e in body["links"] if e["kind"] == "link"]
    assert [(e["target"], [p["problem"] for p in e["problems"]]) for e in links] == [
        ("http://acme.dev/a", ["insecure"]), ("https://acme.dev/b", [])]
    assert all("/_emulator/t/click/" in e["url"] for e in links)
    assert [e["status"] for e in body["links"] if e["kind"] == "tracking_pixel"] == ["ok"]


def test_unsubscribe_check_accepts_rfc_8058_one_click(client: TestClient) -> None:
    headers = {"List-Unsubscribe": "<https://acme.dev/u/42>, <mailto:unsubscribe@acme.dev?subject=42>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    body = check(client, send(client, headers=headers), "unsubscribe-check")
    assert body == {"email_id": body["email_id"], "object": "unsubscribe_check",
                    "list_unsubscribe": headers["List-Unsubscribe"],
                    "list_unsubscribe_post": "List-Unsubscribe=One-Click",
                    "uris": ["https://acme.dev/u/42", "mailto:unsubscribe@acme.dev?subject=42"],
                    "one_click": True, "status": "ok", "problems": []}


def problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["problem"], p["severity"]) for p in body["problems"]]


def test_unsubscribe_check_explains_what_breaks_one_click(client: TestClient) -> None:
    missing = check(client, send(client), "unsubscribe-check")
    assert (missing["status"], problems(missing), missing["one_click"]) == (
        "warning", [("missing", "warning")], False)
    no_post = check(client, send(client, headers={"List-Unsubscribe": "<https://acme.dev/u>"}),
                    "unsubscribe-check")
    assert problems(no_post) == [("no_one_click", "warning")]
    broken = check(client, send(client, headers={"List-Unsubscribe": "mailto:u@acme.dev, <ftp://acme.dev/u>",
                                                 "List-Unsubscribe-Post": "One-Click"}), "unsubscribe-check")
    assert problems(broken) == [("not_bracketed", "error"), ("bad_scheme", "error"),
                                ("bad_post_value", "error"), ("post_without_https", "error")]
    assert broken["status"] == "error" and broken["one_click"] is False


def test_the_emulators_own_unsubscribe_page_stands_for_resends_https_one(client: TestClient) -> None:
    headers = {"List-Unsubscribe": "<http://127.0.0.1:2580/_emulator/unsubscribe/tok>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    body = check(client, send(client, headers=headers), "unsubscribe-check")
    assert (body["status"], body["one_click"]) == ("ok", True)
    elsewhere = {**headers, "List-Unsubscribe": "<http://127.0.0.1:2580/unsubscribe/tok>"}
    body = check(client, send(client, headers=elsewhere), "unsubscribe-check")
    assert problems(body) == [("insecure", "warning"), ("post_without_https", "error")]


def test_text_check_reports_generated_missing_links_and_leftovers(client: TestClient) -> None:
    html = '<p>Your order shipped. <a href="https://acme.dev/track/42">Track it</a> anytime.</p>'
    generated_id = send(client, html=html)
    generated = check(client, generated_id, "text-check")
    assert problems(generated) == [("generated", "info")] and generated["status"] == "ok"
    assert "https://acme.dev/track/42" in generated["text"]
    assert client.get(f"{OUTBOX}/{generated_id}.eml").status_code == 200  # stores the generated text
    assert check(client, generated_id, "text-check") == generated
    stub = check(client, send(client, html=html, text="<p>{{{FIRST_NAME}}}</p>"), "text-check")
    assert problems(stub) == [("html_in_text", "warning"), ("placeholder", "warning"), ("short", "warning"),
                              ("missing_link", "warning")]
    good = check(client, send(client, html=html, text="Your order shipped. Track it anytime:"
                                                      " https://acme.dev/track/42"), "text-check")
    assert (good["status"], good["problems"]) == ("ok", [])


def test_qa_reports_all_five_and_unknown_emails_are_404(client: TestClient) -> None:
    email_id = send(client, html=FLEX)
    body = client.get(f"{OUTBOX}/{email_id}/qa").json()
    assert body["object"] == "qa_report" and list(body) == ["object", "email_id", "html", "links",
                                                            "unsubscribe", "text", "navigation",
                                                            "controls", "spam"]
    assert body["spam"]["status"] == "disabled"  # no --spamassassin here (tests/test_qa_spam.py has one)
    assert body["html"] == {k: v for k, v in check(client, email_id, "html-check").items() if k != "email_id"}
    missing = client.get(f"{OUTBOX}/4f1c0a52-0000-4000-8000-000000000000/html-check")
    assert missing.status_code == 404 and missing.json()["name"] == "not_found"
