"""emulator/mime.py: every message it writes is parsed back with the stdlib `email` package."""

from __future__ import annotations

import base64
import email
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage

import pytest
from starlette.testclient import TestClient

from emulator.mime.message import (
    MimeAttachment,
    MimeError,
    OutgoingMessage,
    html_to_text,
    message_id_for,
    plain_text,
    render_message,
)

EMAIL_ID = "7c3f2a10-5b8e-4d21-9f6a-0e4b1c2d3e4f"
WHEN = datetime(2026, 5, 14, 9, 31, 7, tzinfo=UTC)
PDF = b"%PDF-1.4\n" + bytes(range(256)) * 4
CSV = b"name,total\nAda,42\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(200)


def message(**overrides: object) -> OutgoingMessage:
    values: dict[str, object] = {
        "email_id": EMAIL_ID, "from_": "Acme <hello@mail.acme.dev>", "to": ["delivered@resend.dev"],
        "subject": "Your receipt", "date": WHEN, "html": "<p>Thanks for your order #1042.</p>",
    }
    values.update(overrides)
    return OutgoingMessage(**values)  # type: ignore[arg-type]


def parse(raw: bytes) -> EmailMessage:
    parsed = email.message_from_bytes(raw, policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    assert not parsed.defects
    return parsed


def body_text(parsed: EmailMessage, subtype: str) -> str:
    """A text part's content; RFC 5322 lines end in CRLF, which the parser keeps."""
    part = parsed.get_body((subtype,))
    assert part is not None
    content = part.get_content()
    assert isinstance(content, str)
    return content.replace("\r\n", "\n")


def test_full_message_parses_into_the_same_parts() -> None:
    html = '<h1>Receipt</h1><p>See <img src="cid:logo-image"> and the invoice.</p>'
    raw = render_message(message(
        html=html, text="Receipt\nSee the invoice.",
        attachments=[MimeAttachment(PDF, "invoice-1042.pdf", "application/pdf"),
                     MimeAttachment(CSV, "items.csv"),
                     MimeAttachment(PNG, "logo.png", "image/png", content_id="logo-image")],
    ))
    parsed = parse(raw)
    assert [part.get_content_type() for part in parsed.walk()] == [
        "multipart/mixed", "multipart/alternative", "text/plain", "multipart/related", "text/html",
        "image/png", "application/pdf", "text/csv",
    ]
    assert body_text(parsed, "plain") == "Receipt\nSee the invoice."
    assert body_text(parsed, "html") == html
    files = {part.get_filename(): part for part in parsed.iter_attachments()}
    assert set(files) == {"invoice-1042.pdf", "items.csv"}
    assert files["invoice-1042.pdf"].get_content() == PDF
    assert files["items.csv"].get_payload(decode=True) == CSV
    assert all(part.get_content_disposition() == "attachment" for part in files.values())
    inline = next(part for part in parsed.walk() if part.get_content_type() == "image/png")
    assert inline["Content-ID"] == "<logo-image>"
    assert inline.get_content_disposition() == "inline"
    assert inline.get_content() == PNG
    assert inline["Content-Transfer-Encoding"] == "base64"


def test_html_only_email_gets_a_generated_text_part() -> None:
    parsed = parse(render_message(message(html="<h1>Hello</h1><p>Your <b>code</b> is 1234.</p>")))
    assert parsed.get_content_type() == "multipart/alternative"
    assert body_text(parsed, "plain") == "Hello\n\nYour code is 1234."


def test_empty_text_opts_out_of_the_text_part() -> None:
    parsed = parse(render_message(message(text="")))
    assert parsed.get_content_type() == "text/html"


def test_text_only_email_is_a_single_part() -> None:
    parsed = parse(render_message(message(html=None, text="Plain body")))
    assert parsed.get_content_type() == "text/plain"
    assert body_text(parsed, "plain") == "Plain body"


def test_headers_and_their_encoding() -> None:
    raw = render_message(message(
        from_="Équipe Acme <hello@mail.acme.dev>", to=["a@x.dev", "Bob Smith <b@x.dev>"],
        cc=["Çelik, Ada <ada@x.dev>"], reply_to=["support@acme.dev"], subject="Reçu n° 1042 ✓",
        headers={"X-Entity-Ref-ID": "ref-1", "List-Unsubscribe": "<https://acme.dev/u/1>"},
    ))
    head = raw.split(b"\r\n\r\n", 1)[0].decode("ascii")  # every header byte is ASCII
    assert "=?utf-8?" in head
    parsed = parse(raw)
    assert parsed["From"] == "Équipe Acme <hello@mail.acme.dev>"
    assert parsed["From"].addresses[0].display_name == "Équipe Acme"
    assert [a.addr_spec for a in parsed["To"].addresses] == ["a@x.dev", "b@x.dev"]
    assert parsed["Cc"].addresses[0].display_name == "Çelik, Ada"
    assert parsed["Reply-To"] == "support@acme.dev"
    assert parsed["Subject"] == "Reçu n° 1042 ✓"
    assert parsed["Date"] == "Thu, 14 May 2026 09:31:07 +0000"
    assert parsed["Message-ID"] == f"<{EMAIL_ID}@mail.acme.dev>"
    assert parsed["X-Entity-Ref-ID"] == "ref-1"
    assert parsed["List-Unsubscribe"] == "<https://acme.dev/u/1>"
    assert parsed["MIME-Version"] == "1.0"
    assert "Bcc" not in parsed


def test_every_line_ends_in_crlf_and_stays_short() -> None:
    recipients = [f"user{n}@example-recipient.dev" for n in range(50)]
    subject = " ".join(["word"] * 40)
    raw = render_message(message(to=recipients, subject=subject))
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert max(len(line) for line in raw.split(b"\r\n")) <= 78
    parsed = parse(raw)
    assert [a.addr_spec for a in parsed["To"].addresses] == recipients
    assert parsed["Subject"] == subject


def test_custom_header_replaces_a_standard_one_and_structure_is_kept() -> None:
    parsed = parse(render_message(message(
        reply_to=["a@x.dev"], headers={"reply-to": "b@x.dev", "Content-Type": "text/x", "Bcc": "c@x.dev"},
    )))
    assert parsed.get_all("Reply-To") == ["b@x.dev"]
    assert parsed.get_content_type() == "multipart/alternative"
    assert "Bcc" not in parsed


@pytest.mark.parametrize("headers", [{"X-Bad": "one\r\nBcc: evil@x.dev"}, {"Bad Name": "x"}, {"X:y": "x"}])
def test_unwritable_headers_raise_mime_error(headers: dict[str, str]) -> None:
    with pytest.raises(MimeError):
        render_message(message(headers=headers))


def test_subject_with_line_break_is_refused() -> None:
    with pytest.raises(MimeError):
        render_message(message(subject="Hi\r\nBcc: evil@x.dev"))


def test_non_ascii_and_quoted_filenames_round_trip() -> None:
    raw = render_message(message(attachments=[
        MimeAttachment(b"a", "Résumé 2026.pdf"), MimeAttachment(b"b", 'say "hi".txt'),
        MimeAttachment(b"c", None, None),
    ]))
    parsed = parse(raw)
    parts = list(parsed.iter_attachments())
    assert [part.get_filename() for part in parts] == ["Résumé 2026.pdf", 'say "hi".txt', None]
    assert [part.get_content_type() for part in parts] == ["application/pdf", "text/plain",
                                                          "application/octet-stream"]
    assert parts[2].get_payload(decode=True) == b"c"


def test_rendering_is_deterministic_and_boundaries_come_from_the_id() -> None:
    full = message(attachments=[MimeAttachment(PNG, "logo.png", content_id="logo")])
    assert render_message(full) == render_message(full)
    other = render_message(message(email_id="11111111-2222-4333-8444-555555555555"))
    assert render_message(message()) != other


def test_non_ascii_bodies_survive() -> None:
    parsed = parse(render_message(message(html="<p>Grüße, 東京 — €5</p>", text="Grüße, 東京 — €5")))
    assert body_text(parsed, "plain") == "Grüße, 東京 — €5"
    assert body_text(parsed, "html") == "<p>Grüße, 東京 — €5</p>"


def test_a_line_that_looks_like_a_boundary_stays_inside_its_part() -> None:
    body = "--=_abc\r\n--" + "x" * 200
    parsed = parse(render_message(message(html=None, text=body)))
    assert body_text(parsed, "plain") == body.replace("\r\n", "\n")


def test_message_id_uses_the_sender_domain() -> None:
    assert message_id_for(EMAIL_ID, "Acme <Hello@Mail.Acme.dev>") == f"<{EMAIL_ID}@mail.acme.dev>"
    assert message_id_for(EMAIL_ID, "hello@acme.dev") == f"<{EMAIL_ID}@acme.dev>"


def test_plain_text_rules() -> None:
    assert plain_text("<p>Hi</p>", None) == "Hi"
    assert plain_text("<p>Hi</p>", "") is None
    assert plain_text("<p>Hi</p>", "Own text") == "Own text"
    assert plain_text(None, None) is None


@pytest.mark.parametrize(("html", "text"), [
    ('<p>Read <a href="https://acme.dev/o/1">your order</a>.</p>', "Read your order (https://acme.dev/o/1)."),
    ('<a href="https://acme.dev">https://acme.dev</a>', "https://acme.dev"),
    ('<a href="mailto:help@acme.dev">help@acme.dev</a>', "help@acme.dev"),
    ('<a href="#top">Top</a>', "Top"),
    ("<ul><li>One</li><li>Two</li></ul><p>After</p>", "- One\n- Two\n\nAfter"),
    ("<p>Fish &amp; chips &lt;3 &eacute;t&#233; &nbsp;x</p>", "Fish & chips <3 été x"),
    ("<head><title>T</title><style>p{color:red}</style></head><script>alert(1)</script><p>Body</p>",
     "Body"),
    ("Line one<br>Line two<br/>Line three", "Line one\nLine two\nLine three"),
    ("<div>  lots   of\n\n  space </div><div>next</div>", "lots of space\nnext"),
    ("<pre>keep\n  this</pre>", "keep\n  this"),
    ("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>", "a b\nc d"),
    ('<p>Logo: <img src="cid:logo" alt="Acme"></p>', "Logo: Acme"),
    ("<h1>Title</h1><h2>Sub</h2><p>Text</p><hr><p>End</p>", "Title\n\nSub\n\nText\n\n---\n\nEnd"),
])
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_sent_email_eml_parses_into_the_sent_parts(client: TestClient) -> None:
    """Acceptance (issue 3): html + text + two attachments + one inline image, through POST /emails."""
    html = '<p>Invoice attached. <img src="cid:logo-image"></p>'
    response = client.post("/emails", json={
        "from": "Acme <billing@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Invoice",
        "html": html, "text": "Invoice attached.",
        "attachments": [
            {"filename": "invoice.pdf", "content": base64.b64encode(PDF).decode()},
            {"filename": "items.csv", "content": list(CSV), "content_type": "text/csv"},
            {"filename": "logo.png", "content": base64.b64encode(PNG).decode(), "content_id": "logo-image"},
        ],
    })
    assert response.status_code == 200, response.text
    email_id = response.json()["id"]
    parsed = parse(client.get(f"/_emulator/outbox/{email_id}.eml").content)
    assert body_text(parsed, "plain") == "Invoice attached."
    assert body_text(parsed, "html") == html
    assert {p.get_filename(): p.get_content() for p in parsed.iter_attachments()} == {
        "invoice.pdf": PDF, "items.csv": CSV.decode(),
    }
    (inline,) = [p for p in parsed.walk() if p["Content-ID"]]
    assert (inline["Content-ID"], inline.get_content_type(), inline.get_content()) == (
        "<logo-image>", "image/png", PNG)
    assert parsed["Message-ID"] == client.get(f"/emails/{email_id}").json()["message_id"]


def test_sent_html_only_email_has_a_generated_text_part(client: TestClient) -> None:
    response = client.post("/emails", json={
        "from": "hello@acme.dev", "to": "delivered@resend.dev", "subject": "Hi",
        "html": '<h1>Welcome</h1><p>Start <a href="https://acme.dev/start">here</a>.</p>',
    })
    parsed = parse(client.get(f"/_emulator/outbox/{response.json()['id']}.eml").content)
    assert parsed.get_content_type() == "multipart/alternative"
    assert body_text(parsed, "plain") == "Welcome\n\nStart here (https://acme.dev/start)."
