"""The search language (emulator/control/query.py): what it parses into, what each new term finds in the
outbox JSON (`GET /_emulator/outbox?q=`), and the sentences it answers a wrong query with."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.control.query import Term, parse
from emulator.core.errors import ApiError
from tests.conftest import assert_error_shape

OUTBOX = "/_emulator/outbox"


def send(client: TestClient, subject: str, **fields: Any) -> str:
    body = {"from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"], "subject": subject,
            "text": f"{subject} body", **fields}
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def found(client: TestClient, q: str) -> list[str]:
    response = client.get(OUTBOX, params={"q": q, "limit": "100"})
    assert response.status_code == 200, (q, response.text)
    return [item["id"] for item in response.json()["data"]]


def test_terms_are_anded_and_or_binds_tighter() -> None:
    assert parse('from:ada invoice OR "order shipped" -is:read') == [
        [Term("from", "ada")],
        [Term("", "invoice"), Term("", "order shipped", quoted=True)],
        [Term("is", "read", negated=True)],
    ]
    assert parse("STATUS:Bounced has:attachments") == [[Term("status", "bounced")],
                                                       [Term("has", "attachment")]]
    assert parse("https://acme.dev/x tag:plan:pro") == [[Term("", "https://acme.dev/x")],
                                                         [Term("tag", "plan:pro")]]


@pytest.mark.parametrize(("query", "sentence"), [
    ("foo:bar", "Unknown operator `foo:`. Use one of `from:`, `to:`,"),
    ("source:smtp", "Unknown operator `source:`"),
    ("OR invoice", "`OR` needs a term on each side"),
    ("invoice OR", "`OR` needs a term on each side"),
    ("a OR OR b", "`OR` needs a term on each side"),
    ('subject:"never closed', "A quote is not closed"),
    ("to:", "`to:` needs a value, as in `to:ada@example.dev`"),
    ("- invoice", "A `-` must stand right before the term it excludes"),
    ("is:lost", "`is:` must be one of:"),
    ("larger:big", "`larger:` takes a size such as 500, 20k or 1.5M"),
    ("after:someday", "`after:` takes a date"),
])
def test_wrong_queries_are_refused_with_a_sentence(client: TestClient, query: str, sentence: str) -> None:
    with pytest.raises(ApiError) as raised:
        parse(query)
    assert sentence in raised.value.message
    response = client.get(OUTBOX, params={"q": query})
    assert response.status_code == 422 and sentence in response.json()["message"]
    assert_error_shape(response)


def test_negation_or_and_phrases(client: TestClient) -> None:
    invoice = send(client, "Invoice 12")
    export = send(client, "Export finished")
    digest = send(client, "Weekly digest")
    assert found(client, "invoice OR export") == [export, invoice]
    assert found(client, "-invoice -export") == [digest]
    assert found(client, "invoice OR is:read") == [invoice]
    assert found(client, '"weekly dig"') == [digest]      # a quoted phrase is a substring, spaces and all
    assert found(client, '"weekly  dig"') == []           # ... as written
    assert found(client, "weekly dig") == [digest]
    assert found(client, '-subject:"weekly digest" -from:nobody') == [export, invoice]


def test_each_field_key_reads_its_own_field(client: TestClient) -> None:
    carbon = send(client, "Carbon", cc=["grace@hopper.dev"])
    blind = send(client, "Blind", bcc=["audit@acme.dev"])
    replied = send(client, "Answer me", reply_to=["support@acme.dev"])
    assert found(client, "cc:grace") == [carbon] and found(client, "bcc:audit@acme.dev") == [blind]
    assert found(client, "to:grace") == [carbon]          # to: is any recipient
    assert found(client, "reply-to:support") == [replied]
    assert found(client, f"message-id:{blind[:8]}") == [blind]


def test_sizes_compare_bodies_and_attachments(client: TestClient) -> None:
    small = send(client, "Small")
    big = send(client, "Big", attachments=[{"filename": "a.bin",
                                            "content": base64.b64encode(bytes(30_000)).decode()}])
    assert found(client, "larger:20k") == [big] and found(client, "smaller:20k") == [small]
    assert found(client, "larger:1M") == []
