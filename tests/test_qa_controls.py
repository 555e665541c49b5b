"""Hidden characters (/_emulator/outbox/{id}/controls-check, the `visible` filter): invisible and bidi
control characters in headers and filenames are listed with where they are, and shown, never obeyed."""

from __future__ import annotations

import asyncio
import base64

import pytest
from starlette.testclient import TestClient

from emulator.control.qa.controls import hidden_characters
from emulator.web import sse
from emulator.web.bidi import visible, visible_text
from tests.emails_helpers import send

OUTBOX = "/_emulator/outbox"
RLO = "\u202e"


def test_controls_check_lists_each_hidden_character_where_it_is(client: TestClient) -> None:
    email_id = send(client, subject="Hi\u200bthere", attachments=[
        {"filename": f"report{RLO}slx.pdf", "content": base64.b64encode(b"%PDF").decode()}])
    body = client.get(f"{OUTBOX}/{email_id}/controls-check").json()
    assert body["status"] == "error"
    assert [(f["where"], f["field"], f["character"], f["name"], f["position"], f["severity"])
            for f in body["findings"]] == [
        ("header", "Subject", "U+200B", "ZERO WIDTH SPACE", 3, "warning"),
        ("attachment", "filename", "U+202E", "RIGHT-TO-LEFT OVERRIDE", 7, "error")]
    assert body["problems"][1]["problem"] == "bidi_control"
    assert RLO not in body["problems"][1]["message"] and "\\u202e" in body["problems"][1]["message"]
    assert client.get(f"{OUTBOX}/{email_id}/qa").json()["controls"]["findings"] == body["findings"]


def test_controls_check_of_plain_mail_is_ok(client: TestClient) -> None:
    body = client.get(f"{OUTBOX}/{send(client, subject='Ünïcödé שלום 注文 👩‍💻')}/controls-check").json()
    assert (body["status"], body["findings"], body["problems"]) == ("ok", [], [])


def test_emoji_joiners_and_flag_tags_are_not_hidden_characters() -> None:
    scotland = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    assert hidden_characters(f"👩‍💻 {scotland} ok") == []
    assert [h.code for h in hidden_characters("a\u200db\tc\x85\u2066d\ufeff")] == [
        "U+200D", "U+0009", "U+0085", "U+2066", "U+FEFF"]


def test_visible_escapes_html_and_replaces_each_hidden_character_by_a_marked_token() -> None:
    assert str(visible(f"<b>{RLO}x")) == (
        '&lt;b&gt;<span class="ctl" dir="ltr" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>x')
    assert visible_text(f"a{RLO}b") == visible(f"a{RLO}b", plain=True) == "a⟨U+202E⟩b"
    assert str(visible(None)) == "" and str(visible("plain & simple")) == "plain &amp; simple"


def test_the_outbox_list_and_message_view_show_the_token_not_the_override(client: TestClient) -> None:
    email_id = send(client, subject=f"Your report{RLO}slx.pdf")
    for url in ("/_emulator/ui/", f"/_emulator/ui/messages/{email_id}"):
        html = client.get(url).text
        assert RLO not in html and "⟨U+202E⟩" in html and 'dir="auto"' in html


def test_a_stream_says_its_planned_end_before_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    async def frames() -> list[str]:
        hub = sse.LiveHub()
        return [frame async for frame in sse._stream(hub, hub.subscribe(), "default")]

    monkeypatch.setattr(sse, "STREAM_SECONDS", 0.05)
    found = asyncio.run(frames())
    assert found[0].startswith("retry: ") and found[-1] == "event: recycle\ndata: {}\n\n"
