"""SMTP submission against the real servers: smtplib over STARTTLS and implicit TLS (reference/smtp.md)."""

from __future__ import annotations

import base64
import smtplib
from collections.abc import Iterator

import pytest

from emulator.mime.intake import parse
from tests.conftest import KEY
from tests.smtp_helpers import PDF, PNG, LiveEmulator, email_id_of, rich_message, transmit

RECIPIENTS = ["jane@example.org", "hidden@example.org"]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveEmulator]:
    with LiveEmulator() as live:
        yield live


@pytest.fixture
def live(server: LiveEmulator) -> LiveEmulator:
    server.reset()
    return server


def _sent_over(client: smtplib.SMTP, live: LiveEmulator) -> str:
    code, reply = transmit(client, rich_message(X_Entity_Ref_ID="order-1042"), "hello@acme.dev", RECIPIENTS)
    assert code == 250, reply
    return email_id_of(reply)


def _check_stored(live: LiveEmulator, email_id: str) -> None:
    email = live.http.get(f"/emails/{email_id}").json()
    assert email["from"] == "Acme <hello@acme.dev>"
    assert email["to"] == ["Jane <jane@example.org>"]
    assert email["bcc"] == ["hidden@example.org"]  # envelope-only recipient
    assert email["subject"] == "Your receipt"
    assert email["text"] == "Thanks for your order.\n"
    assert email["html"].startswith('<p>Thanks for your order.</p><img src="cid:logo@acme">')
    attachments = live.http.get(f"/emails/{email_id}/attachments").json()["data"]
    by_name = {item["filename"]: item for item in attachments}
    assert by_name["receipt.pdf"]["size"] == len(PDF)
    assert by_name["receipt.pdf"]["content_disposition"] == "attachment"
    logo = by_name["logo.png"]
    assert (logo["content_disposition"], logo["content_id"]) == ("inline", "logo@acme")


def _check_eml_round_trip(live: LiveEmulator, email_id: str) -> None:
    eml = live.http.get(f"/_emulator/outbox/{email_id}.eml")
    assert eml.status_code == 200
    parsed = parse(eml.content)
    assert parsed.subject == "Your receipt"
    assert parsed.text == "Thanks for your order.\n"
    assert {(p.filename, p.content_id, p.content) for p in parsed.attachments} == {
        ("receipt.pdf", None, PDF), ("logo.png", "logo@acme", PNG)}
    assert parsed.header("x-entity-ref-id") == "order-1042"
    assert parsed.header("bcc") is None


def test_starttls_send_is_stored_like_an_api_send(live: LiveEmulator) -> None:
    with live.starttls() as client:
        email_id = _sent_over(client, live)
    _check_stored(live, email_id)
    _check_eml_round_trip(live, email_id)
    listed = live.http.get("/emails").json()["data"]
    assert [item["id"] for item in listed] == [email_id]


def test_implicit_tls_send_is_stored(live: LiveEmulator) -> None:
    with live.implicit() as client:
        email_id = _sent_over(client, live)
    _check_stored(live, email_id)
    _check_eml_round_trip(live, email_id)


def test_ehlo_advertises_size_and_auth_only_after_starttls(live: LiveEmulator) -> None:
    with smtplib.SMTP("127.0.0.1", live.smtp_port) as client:
        client.ehlo()
        assert client.has_extn("starttls") and not client.has_extn("auth")
        assert client.esmtp_features["size"] == "41943040"
        client.starttls(context=live.tls)
        client.ehlo()
        assert set(client.esmtp_features["auth"].split()) >= {"PLAIN", "LOGIN"}


def test_auth_on_plaintext_connection_is_refused(live: LiveEmulator) -> None:
    with smtplib.SMTP("127.0.0.1", live.smtp_port) as client:
        client.ehlo()
        token = base64.b64encode(f"\0resend\0{KEY}".encode()).decode()
        code, _ = client.docmd("AUTH", f"PLAIN {token}")
        assert code == 538


def test_wrong_password_is_535(live: LiveEmulator) -> None:
    with live.starttls(key=None) as client, pytest.raises(smtplib.SMTPAuthenticationError) as raised:
        client.login("resend", "re_not_a_key")
    assert raised.value.smtp_code == 535


def test_wrong_username_is_535(live: LiveEmulator) -> None:
    with live.starttls(key=None) as client, pytest.raises(smtplib.SMTPAuthenticationError) as raised:
        client.login("apikey", KEY)
    assert raised.value.smtp_code == 535


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
def test_both_auth_mechanisms_work(live: LiveEmulator, mechanism: str) -> None:
    with live.starttls(key=None) as client:
        client.ehlo()
        client.user, client.password = "resend", KEY
        method = client.auth_plain if mechanism == "PLAIN" else client.auth_login
        code, _ = client.auth(mechanism, method)
        assert code == 235


def test_mail_before_auth_is_530(live: LiveEmulator) -> None:
    with live.starttls(key=None) as client:
        client.ehlo()
        code, reply = client.mail("hello@acme.dev")
        assert code == 530, reply


def _new_key(live: LiveEmulator, **body: object) -> str:
    created = live.http.post("/api-keys", json={"name": "smtp", **body})
    assert created.status_code == 201, created.text
    return str(created.json()["token"])


def test_sending_only_key_may_send(live: LiveEmulator) -> None:
    token = _new_key(live, permission="sending_access")
    with live.starttls(key=token) as client:
        code, reply = transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    assert live.http.get(f"/emails/{email_id_of(reply)}").status_code == 200


def test_domain_restricted_key_sends_only_from_its_domain(live: LiveEmulator) -> None:
    domain = live.http.post("/domains", json={"name": "acme.dev"}).json()
    token = _new_key(live, permission="sending_access", domain_id=domain["id"])
    with live.starttls(key=token) as client:
        code, reply = transmit(client, rich_message(sender="Other <hi@other.dev>"), "hi@other.dev",
                               ["jane@example.org"])
        assert code == 550
        assert reply.startswith("5.7.1 ") and "acme.dev" in reply
        code, reply = transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
        assert code == 250, reply
    assert len(live.http.get("/emails").json()["data"]) == 1


def test_deleted_key_cannot_log_in(live: LiveEmulator) -> None:
    token = _new_key(live)
    keys = live.http.get("/api-keys").json()["data"]
    key_id = next(k["id"] for k in keys if k["name"] == "smtp")
    assert live.http.delete(f"/api-keys/{key_id}").status_code == 200
    with live.starttls(key=None) as client, pytest.raises(smtplib.SMTPAuthenticationError):
        client.login("resend", token)


def test_same_idempotency_key_twice_creates_one_email(live: LiveEmulator) -> None:
    with live.starttls() as client:
        first = transmit(client, rich_message(Resend_Idempotency_Key="order-1042"), "hello@acme.dev",
                         ["jane@example.org"])
        again = transmit(client, rich_message(Resend_Idempotency_Key="order-1042"), "hello@acme.dev",
                         ["jane@example.org"])
        changed = transmit(client, rich_message(subject="Other", Resend_Idempotency_Key="order-1042"),
                           "hello@acme.dev", ["jane@example.org"])
    assert first[0] == again[0] == 250
    assert email_id_of(first[1]) == email_id_of(again[1])
    assert changed[0] == 550 and "idempotency key" in changed[1]
    emails = live.http.get("/emails").json()["data"]
    assert len(emails) == 1
    eml = live.http.get(f"/_emulator/outbox/{emails[0]['id']}.eml").content
    assert b"Resend-Idempotency-Key" not in eml and b"order-1042" not in eml


def test_validation_failure_is_550_with_the_resend_message(live: LiveEmulator) -> None:
    message = rich_message(to=", ".join(f"user{i}@example.org" for i in range(51)))
    with live.starttls() as client:
        code, reply = transmit(client, message, "hello@acme.dev", ["user0@example.org"])
    assert code == 550 and reply.startswith("5.7.1 ")
    assert live.http.get("/emails").json()["data"] == []
