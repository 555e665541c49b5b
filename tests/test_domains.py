"""Domains: reference/domains.md."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.conftest import flush
from tests.openapi_oracle import check


def create(client: TestClient, **body: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/domains", json={"name": "mail.acme.dev", **body})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_create_returns_records_without_object(client: TestClient) -> None:
    body = create(client)
    assert "object" not in body
    assert body["status"] == "not_started" and body["region"] == "us-east-1"
    assert body["capabilities"] == {"sending": "enabled", "receiving": "disabled"}
    assert [(r["record"], r["type"], r["name"]) for r in body["records"]] == [
        ("SPF", "MX", "send.mail"), ("SPF", "TXT", "send.mail"), ("DKIM", "TXT", "resend._domainkey.mail"),
    ]
    assert body["records"][0]["value"] == "feedback-smtp.us-east-1.amazonses.com"
    assert body["records"][0]["priority"] == 10
    assert body["records"][2]["value"].startswith("p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ")


def test_create_with_region_return_path_tracking_and_receiving(client: TestClient) -> None:
    body = create(client, name="acme.dev", region="eu-west-1", custom_return_path="bounce",
                  tracking_subdomain="links", capabilities={"receiving": "enabled"})
    kinds = [(r["record"], r["name"], r["value"]) for r in body["records"]]
    assert ("SPF", "bounce", "feedback-smtp.eu-west-1.amazonses.com") in kinds
    assert ("Receiving", "@", "inbound-smtp.eu-west-1.amazonaws.com") in kinds
    assert ("Tracking", "links.acme.dev", "links1.resend-dns.com") in kinds
    assert body["tracking_subdomain"] == "links"


def test_create_errors(client: TestClient) -> None:
    cases = [
        ({}, 422, "missing_required_field"),
        ({"name": "not a domain"}, 422, "validation_error"),
        ({"name": "a.dev", "region": "mars-1"}, 422, "invalid_region"),
        ({"name": "a.dev", "tls": "sometimes"}, 422, "validation_error"),
        ({"name": "a.dev", "capabilities": {"sending": "disabled"}}, 422, "validation_error"),
        ({"name": "a.dev", "open_tracking": "yes"}, 422, "validation_error"),
    ]
    for body, status, name in cases:
        response = client.post("/domains", json=body)
        assert (response.status_code, response.json()["name"]) == (status, name), body


def test_duplicate_domain_is_forbidden(client: TestClient) -> None:
    create(client)
    response = client.post("/domains", json={"name": "mail.acme.dev"})
    assert response.status_code == 403
    assert response.json() == {"statusCode": 403, "name": "validation_error",
                               "message": "The `mail.acme.dev` domain has been registered already."}


def test_get_list_and_unknown(client: TestClient) -> None:
    created = create(client)
    got = client.get(f"/domains/{created['id']}").json()
    assert got["object"] == "domain" and got["records"] == created["records"]
    item = client.get("/domains").json()["data"][0]
    assert set(item) == {"id", "name", "status", "created_at", "region", "open_tracking",
                         "click_tracking", "capabilities"}
    missing = client.get("/domains/00000000-0000-4000-8000-000000000000")
    assert missing.json() == {"statusCode": 404, "message": "Domain not found", "name": "not_found"}


def test_verify_moves_pending_then_verified(client: TestClient) -> None:
    domain_id = create(client)["id"]
    assert client.post(f"/domains/{domain_id}/verify").json() == {"object": "domain", "id": domain_id}
    flush(client)
    got = client.get(f"/domains/{domain_id}").json()
    assert got["status"] == "verified"
    assert {r["status"] for r in got["records"]} == {"verified"}


def test_verify_outcome_can_be_scripted(client: TestClient) -> None:
    domain_id = create(client)["id"]
    client.post(f"/_emulator/domains/{domain_id}/verification", json={"outcome": "failed"})
    client.post(f"/domains/{domain_id}/verify")
    flush(client)
    assert client.get(f"/domains/{domain_id}").json()["status"] == "failed"


def test_update_tracking_and_capabilities(client: TestClient) -> None:
    domain_id = create(client)["id"]
    response = client.patch(f"/domains/{domain_id}", json={
        "id": domain_id, "open_tracking": True, "click_tracking": True, "tls": "enforced",
        "tracking_subdomain": "links", "capabilities": {"receiving": "enabled"},
    })
    assert response.json() == {"object": "domain", "id": domain_id}
    got = client.get(f"/domains/{domain_id}").json()
    assert got["open_tracking"] and got["click_tracking"]
    assert got["capabilities"] == {"sending": "enabled", "receiving": "enabled"}
    assert {r["record"] for r in got["records"]} == {"SPF", "DKIM", "Receiving", "Tracking"}


def test_update_refuses_removing_tracking_or_all_capabilities(client: TestClient) -> None:
    domain_id = create(client, tracking_subdomain="links")["id"]
    assert client.patch(f"/domains/{domain_id}", json={"tracking_subdomain": ""}).status_code == 422
    both_off = {"capabilities": {"sending": "disabled", "receiving": "disabled"}}
    assert client.patch(f"/domains/{domain_id}", json=both_off).status_code == 422


def test_delete(client: TestClient) -> None:
    domain_id = create(client)["id"]
    assert client.delete(f"/domains/{domain_id}").json() == {
        "object": "domain", "id": domain_id, "deleted": True}
    assert client.get(f"/domains/{domain_id}").status_code == 404
    assert client.delete(f"/domains/{domain_id}").status_code == 404


def test_claim_lifecycle(client: TestClient) -> None:
    first = client.post("/domains/claim", json={"name": "acme.dev"})
    assert first.status_code == 201
    claim = first.json()
    assert claim["object"] == "domain_claim" and claim["status"] == "pending"
    assert claim["record"]["value"].startswith("resend-domain-verification=")
    assert claim["expires_at"] == "2026-05-21 09:00:00+00"
    again = client.post("/domains/claim", json={"name": "acme.dev"})
    assert again.status_code == 200 and again.json() == claim
    assert client.get(f"/domains/{claim['domain_id']}/claim").json() == claim
    verified = client.post(f"/domains/{claim['domain_id']}/claim/verify").json()
    assert verified["status"] == "completed"


def test_claim_expires_on_the_clock(client: TestClient) -> None:
    claim = client.post("/domains/claim", json={"name": "acme.dev"}).json()
    client.post("/_emulator/clock/advance", json={"days": 8})
    assert client.get(f"/domains/{claim['domain_id']}/claim").json()["status"] == "expired"


def test_responses_validate_against_openapi(client: TestClient) -> None:
    created = create(client, tracking_subdomain="links", capabilities={"receiving": "enabled"})
    domain_id = created["id"]
    check("CreateDomainResponse", created)
    check("Domain", client.get(f"/domains/{domain_id}").json())
    check("ListDomainsResponse", client.get("/domains").json())
    updated = client.patch(f"/domains/{domain_id}", json={"tls": "enforced"}).json()
    check("UpdateDomainResponseSuccess", updated)
    check("VerifyDomainResponse", client.post(f"/domains/{domain_id}/verify").json())
    claim = client.post("/domains/claim", json={"name": "claimed.dev"}).json()
    check("DomainClaim", claim)
    check("DeleteDomainResponse", client.delete(f"/domains/{domain_id}").json())
