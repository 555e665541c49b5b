"""Same seed + frozen clock + same requests ⇒ byte-identical bodies, on two fresh servers."""

from __future__ import annotations

from tests.conftest import api_client, make_settings


def run_sequence(seed: int) -> list[bytes]:
    bodies: list[bytes] = []
    with api_client(make_settings(seed=seed)) as client:
        domain = client.post("/domains", json={"name": "acme.dev", "tracking_subdomain": "links"})
        domain_id = domain.json()["id"]
        for response in (
            domain,
            client.post("/api-keys", json={"name": "ci", "permission": "sending_access",
                                           "domain_id": domain_id}),
            client.post(f"/domains/{domain_id}/verify"),
            client.post("/_emulator/flush"),
            client.get(f"/domains/{domain_id}"),
            client.post("/domains/claim", json={"name": "other.dev"}),
            client.get("/domains"),
            client.get("/api-keys"),
        ):
            bodies.append(response.content)
    return bodies


def test_two_servers_with_the_same_seed_answer_byte_identically() -> None:
    assert run_sequence(7) == run_sequence(7)


def test_another_seed_gives_other_ids() -> None:
    assert run_sequence(7)[0] != run_sequence(8)[0]
