"""Sending with a template through POST /emails: rendering, overrides, and the send-time errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import resend
from resend.exceptions import ResendError
from starlette.testclient import TestClient

from emulator.testing import EmulatorServer
from tests.templates_helpers import order_template, plain, sdk_against

TO = "delivered@resend.dev"


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def publish(client: TestClient, **overrides: Any) -> str:
    template_id = str(client.post("/templates", json=order_template(**overrides)).json()["id"])
    assert client.post(f"/templates/{template_id}/publish").status_code == 200
    return template_id


def send(client: TestClient, **body: Any) -> Any:
    return client.post("/emails", json={"to": TO, **body})


def test_sdk_send_with_published_template_renders_it(emulator: EmulatorServer) -> None:
    resend.Templates.create(order_template(subject="Your {{{PRODUCT}}}"))  # type: ignore[arg-type]
    resend.Templates.publish("order-confirmation")
    sent = resend.Emails.send({"to": TO, "template": {  # type: ignore[typeddict-item]
        "id": "order-confirmation", "variables": {"PRODUCT": "Vintage Macintosh", "PRICE": 499}}})
    email = plain(resend.Emails.get(sent["id"]))
    assert {key: email[key] for key in ("from", "to", "subject", "html", "text", "created_at")} == {
        "from": "Acme Store <store@mail.acme.dev>", "to": [TO], "subject": "Your Vintage Macintosh",
        "html": "<p>Name: Vintage Macintosh</p><p>Total: 499</p>",
        "text": "Name: Vintage Macintosh\nTotal: 499", "created_at": "2026-05-14 09:00:00+00",
    }


def test_sdk_send_with_unpublished_template_fails(emulator: EmulatorServer) -> None:
    resend.Templates.create(order_template())  # type: ignore[arg-type]
    with pytest.raises(ResendError) as caught:
        resend.Emails.send({"to": TO, "template": {"id": "order-confirmation"}})  # type: ignore[typeddict-item]
    assert (caught.value.code, caught.value.error_type) == (422, "validation_error")


def test_send_fields_override_template_defaults(client: TestClient) -> None:
    publish(client, reply_to="help@acme.dev")
    email_id = send(client, **{"from": "Ops <ops@acme.dev>", "subject": "Override", "reply_to": "r@acme.dev",
                               "template": {"id": "order-confirmation"}}).json()["id"]
    email = client.get(f"/emails/{email_id}").json()
    assert (email["from"], email["subject"], email["reply_to"]) == (
        "Ops <ops@acme.dev>", "Override", ["r@acme.dev"])
    assert email["html"] == "<p>Name: item</p><p>Total: 25</p>"


def test_template_without_defaults_needs_from_and_subject(client: TestClient) -> None:
    template_id = str(client.post("/templates", json={"name": "bare", "html": "<p>hi</p>"}).json()["id"])
    client.post(f"/templates/{template_id}/publish")
    response = send(client, template={"id": template_id})
    assert (response.status_code, response.json()["name"]) == (422, "missing_required_field")
    ok = send(client, **{"from": "a@acme.dev", "subject": "Hi", "template": {"id": template_id}})
    assert ok.status_code == 200
    assert client.get(f"/emails/{ok.json()['id']}").json()["html"] == "<p>hi</p>"


def test_send_uses_published_version_while_a_draft_exists(client: TestClient) -> None:
    template_id = publish(client)
    client.patch(f"/templates/{template_id}", json={"html": "<p>draft</p>"})
    email_id = send(client, template={"id": template_id}).json()["id"]
    assert client.get(f"/emails/{email_id}").json()["html"] == "<p>Name: item</p><p>Total: 25</p>"


@pytest.mark.parametrize(("template", "status", "name"), [
    ({"id": "order-confirmation", "variables": {"PRICE": "cheap"}}, 422, "validation_error"),
    ({"id": "order-confirmation", "variables": {"PRODUCT": "x" * 2001}}, 422, "validation_error"),
    ({"id": "no-such-template"}, 404, "not_found"),
    ({}, 422, "missing_required_field"),
])
def test_send_time_template_errors(client: TestClient, template: dict[str, Any], status: int,
                                   name: str) -> None:
    publish(client)
    response = send(client, template=template)
    assert (response.status_code, response.json()["name"]) == (status, name)
    assert client.get("/emails").json()["data"] == []


def test_missing_variable_refuses_the_send(client: TestClient) -> None:
    publish(client, variables=[{"key": "PRODUCT", "type": "string"}])
    response = send(client, template={"id": "order-confirmation"})
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")
    assert "`PRODUCT`" in response.json()["message"]


def test_deleted_template_is_not_found(client: TestClient) -> None:
    template_id = publish(client)
    client.delete(f"/templates/{template_id}")
    response = send(client, template={"id": template_id})
    assert response.json() == {"statusCode": 404, "message": "Template not found", "name": "not_found"}


def test_batch_items_use_templates(client: TestClient) -> None:
    publish(client)
    response = client.post("/emails/batch", json=[
        {"to": TO, "template": {"id": "order-confirmation", "variables": {"PRODUCT": "A"}}},
        {"to": TO, "template": {"id": "order-confirmation", "variables": {"PRODUCT": "B", "PRICE": 2}}},
    ])
    assert response.status_code == 200, response.text
    htmls = [client.get(f"/emails/{item['id']}").json()["html"] for item in response.json()["data"]]
    assert htmls == ["<p>Name: A</p><p>Total: 25</p>", "<p>Name: B</p><p>Total: 2</p>"]
