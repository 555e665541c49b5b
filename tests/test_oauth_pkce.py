"""PKCE as properties ([seed] §5.3): every `code_verifier` of 43–128 characters from `A-Z a-z 0-9 - . _ ~`
verifies against its S256 challenge; every verifier outside those rules is refused with `invalid_request`
(and does not consume the code); a well-formed but different verifier is `invalid_grant`."""

from __future__ import annotations

import string
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings
from tests.oauth_helpers import (
    NO_KEY,
    VERIFIER,
    Client,
    authorize_params,
    callback_params,
    code_for,
    consent,
    oauth_error,
    redeem,
    register,
)

ALLOWED = string.ascii_letters + string.digits + "-._~"
BAD_VERIFIER = "`code_verifier` must be 43 to 128 characters from A-Z, a-z, 0-9, `-`, `.`, `_`, `~`."
EXAMPLES = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

verifiers = st.text(alphabet=ALLOWED, min_size=43, max_size=128)
wrong_length = st.one_of(st.text(alphabet=ALLOWED, min_size=1, max_size=42),
                         st.text(alphabet=ALLOWED, min_size=129, max_size=300))
foreign = st.characters(codec="utf-8").filter(lambda char: char not in ALLOWED)
wrong_characters = st.tuples(st.text(alphabet=ALLOWED, min_size=42, max_size=127), foreign,
                             st.integers(min_value=0, max_value=127)).map(
    lambda parts: parts[0][:parts[2]] + parts[1] + parts[0][parts[2]:])


@pytest.fixture(scope="module")
def http() -> Iterator[TestClient]:
    with api_client(make_settings()) as client:
        consent(client, "approve")
        assert client.post("/_emulator/oauth", json={"registration_limit": None}).status_code == 200
        yield client


@pytest.fixture(scope="module")
def oauth_client(http: TestClient) -> Client:
    return register(http)


@EXAMPLES
@given(verifier=verifiers)
def test_any_allowed_verifier_verifies_against_its_challenge(http: TestClient, oauth_client: Client,
                                                             verifier: str) -> None:
    code = code_for(http, oauth_client, verifier)
    response = redeem(http, oauth_client, code, verifier)
    assert response.status_code == 200, response.text


def test_a_verifier_outside_the_rules_is_invalid_request_and_leaves_the_code(
        http: TestClient, oauth_client: Client) -> None:
    code = code_for(http, oauth_client)

    @EXAMPLES
    @given(verifier=st.one_of(wrong_length, wrong_characters))
    def refused(verifier: str) -> None:
        assert oauth_error(redeem(http, oauth_client, code, verifier), 400, "invalid_request") == BAD_VERIFIER

    refused()
    assert redeem(http, oauth_client, code).status_code == 200


def test_a_different_allowed_verifier_is_invalid_grant_and_leaves_the_code(
        http: TestClient, oauth_client: Client) -> None:
    code = code_for(http, oauth_client)  # challenged with VERIFIER

    @EXAMPLES
    @given(verifier=verifiers.filter(lambda text: text != VERIFIER))
    def refused(verifier: str) -> None:
        response = redeem(http, oauth_client, code, verifier)
        assert oauth_error(response, 400, "invalid_grant") == \
            "The `code_verifier` does not match the `code_challenge`."

    refused()
    assert redeem(http, oauth_client, code).status_code == 200


@EXAMPLES
@given(challenge=st.text(alphabet=ALLOWED, max_size=80).filter(
    lambda text: len(text) != 43 or "." in text or "~" in text))
def test_a_malformed_challenge_is_refused_at_authorize(http: TestClient, oauth_client: Client,
                                                       challenge: str) -> None:
    params = {**authorize_params(oauth_client), "code_challenge": challenge}
    response = http.get("/oauth/authorize", params=params, headers=NO_KEY, follow_redirects=False)
    assert callback_params(response)["error"] == "invalid_request"
