"""The pytest plugin, tested as users use it: real test files run by pytester against the installed plugin."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SEND_AND_WAIT = '''
import resend

def test_welcome_mail_arrives(resend_emulator):
    sent = resend.Emails.send({
        "from": "Acme <hello@acme.dev>", "to": ["ada@lovelace.dev"],
        "subject": "Welcome, Ada", "html": "<p>Glad you are here.</p>",
    })
    mail = resend_emulator.outbox.wait_for(to="ada@lovelace.dev", timeout=5)
    assert mail["id"] == sent["id"]
    assert mail["subject"] == "Welcome, Ada"
    assert "Glad you are here." in mail["text"]
'''

NO_SHARED_STATE = '''
import os
import httpx

def api(method, path, **kwargs):
    headers = {"Authorization": "Bearer " + os.environ["RESEND_API_KEY"]}
    return httpx.request(method, os.environ["RESEND_API_URL"] + path, headers=headers, **kwargs).json()

def test_first_leaves_things_behind(resend_emulator):
    api("POST", "/domains", json={"name": "first.dev"})
    api("POST", "/emails", json={"from": "a@first.dev", "to": ["b@first.dev"], "subject": "s", "text": "t"})
    resend_emulator.faults.add("GET", "/domains", error="application_error", times=None)
    resend_emulator.clock.freeze("2030-01-01T00:00:00Z")

def test_second_sees_none_of_it(resend_emulator):
    assert api("GET", "/domains")["data"] == []
    assert api("GET", "/emails")["data"] == []
    assert resend_emulator.outbox.list() == []
    assert resend_emulator.faults.list() == []
    assert resend_emulator.clock.now() != "2030-01-01T00:00:00.000000Z"
'''

SEEDED_CONFTEST = '''
import pytest

@pytest.fixture(scope="session")
def resend_emulator_seed():
    return "basic"

@pytest.fixture(scope="session")
def resend_emulator_settings():
    return {"seed": 7, "strict_domains": True, "clock": "frozen"}
'''

SEEDED_TESTS = '''
import resend

def test_the_seed_scenario_is_there(resend_emulator):
    domains = resend.Domains.list()["data"]
    assert [(d["name"], d["status"]) for d in domains] == [("acme.dev", "verified")]
    assert resend.Templates.get("welcome")["status"] == "published"
    assert resend_emulator.health()["seed"] == 7

def test_the_seeded_key_sends_from_the_verified_domain(resend_emulator):
    resend.api_key = "re_scenario_sending_key"
    resend.Emails.send({"from": "hello@acme.dev", "to": ["grace@hopper.dev"], "subject": "Hi",
                        "template": {"id": "welcome", "variables": {"NAME": "Grace"}}})
    mail = resend_emulator.outbox.wait_for(to="grace@hopper.dev", api_key="re_scenario_sending_key")
    assert "Welcome, Grace!" in mail["html"]

def test_deleting_seeded_data_does_not_reach_the_next_test(resend_emulator):
    domain = resend.Domains.list()["data"][0]
    resend.Domains.remove(domain["id"])
    assert resend.Domains.list()["data"] == []

def test_the_next_test_has_the_seed_again(resend_emulator):
    assert len(resend.Domains.list()["data"]) == 1
'''

WEBHOOKS = '''
from svix.webhooks import Webhook
import resend

def test_delivery_reaches_the_receiver_signed(resend_emulator, resend_webhook_receiver):
    hook = resend_emulator.webhooks.register(resend_webhook_receiver.url, ["email.delivered"])
    resend.Emails.send({"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "s", "text": "t"})
    resend_emulator.clock.advance(seconds=5)
    resend_emulator.webhooks.flush()
    delivery = resend_webhook_receiver.wait_for(type="email.delivered")
    assert resend_webhook_receiver.verify(delivery, hook["signing_secret"])
    assert not resend_webhook_receiver.verify(delivery, "whsec_" + "QUFBQUFBQUFBQUFBQUFBQQ==")
    Webhook(hook["signing_secret"]).verify(delivery.body, delivery.headers)
    attempts = resend_emulator.webhooks.attempts(hook["id"])
    assert [a["http_status_code"] for a in attempts] == [200]

def test_receiver_scripted_failure_makes_the_emulator_retry(resend_emulator, resend_webhook_receiver):
    assert resend_webhook_receiver.deliveries == []
    resend_webhook_receiver.respond_with(500, times=1)
    hook = resend_emulator.webhooks.register(resend_webhook_receiver.url, ["email.sent"])
    resend.Emails.send({"from": "a@acme.dev", "to": ["x@acme.dev"], "subject": "s", "text": "t"})
    resend_emulator.webhooks.flush()
    resend_webhook_receiver.wait_for(1)
    resend_emulator.clock.advance(minutes=10)
    resend_emulator.webhooks.flush()
    resend_webhook_receiver.wait_for(2)
    statuses = sorted(a["http_status_code"] for a in resend_emulator.webhooks.attempts(hook["id"]))
    assert statuses == [200, 500]
'''

FAULTS = '''
import pytest
import resend

def test_retry_code_sees_two_429s(resend_emulator):
    resend_emulator.faults.rate_limit("POST", "/emails", times=2)
    mail = {"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s", "text": "t"}
    for _ in range(2):
        with pytest.raises(resend.exceptions.RateLimitError):
            resend.Emails.send(mail)
    assert resend.Emails.send(mail)["id"]
'''

XDIST_TESTS = '''
import os
import resend

def record(resend_emulator, name):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["RECORD_DIR"], f"{worker}-{name}"), "w") as out:
        out.write(resend_emulator.url)

def test_a(resend_emulator):
    resend.Domains.create({"name": "same.dev"})
    record(resend_emulator, "a")

def test_b(resend_emulator):
    resend.Domains.create({"name": "same.dev"})
    record(resend_emulator, "b")

def test_c(resend_emulator):
    resend.Domains.create({"name": "same.dev"})
    record(resend_emulator, "c")

def test_d(resend_emulator):
    resend.Domains.create({"name": "same.dev"})
    record(resend_emulator, "d")
'''


@pytest.fixture(params=["process", "thread"])
def shape(request: pytest.FixtureRequest) -> str:
    """The run's `--resend-emulator-shape`: each behaviour holds with the emulator in either place."""
    return f"--resend-emulator-shape={request.param}"


def test_user_test_sends_with_the_sdk_and_waits_for_the_mail(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_welcome=SEND_AND_WAIT)
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=1)


def test_two_tests_see_no_state_of_each_other(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_isolated=NO_SHARED_STATE)
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=2)


def test_a_conftest_override_changes_the_seed(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makeconftest(SEEDED_CONFTEST)
    pytester.makepyfile(test_seeded=SEEDED_TESTS)
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=4)


def test_without_an_override_there_is_no_seed_data(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_plain="""
import resend

def test_empty(resend_emulator):
    assert resend.Domains.list()["data"] == []
    assert resend_emulator.health()["seed"] == 0
""")
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=1)


def test_webhook_receiver_records_and_verifies_deliveries(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_hooks=WEBHOOKS)
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=2)


def test_fault_rules_reach_the_users_retry_code(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_faults=FAULTS)
    pytester.runpytest_subprocess("-q", shape).assert_outcomes(passed=1)


def test_each_xdist_worker_gets_its_own_server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                              shape: str) -> None:
    records = pytester.mkdir("records")
    monkeypatch.setenv("RECORD_DIR", str(records))
    pytester.makepyfile(test_parallel=XDIST_TESTS)
    pytester.runpytest_subprocess("-q", "-n", "2", shape).assert_outcomes(passed=4)
    urls = {path.name.split("-")[0]: path.read_text() for path in records.iterdir()}
    assert sorted(urls) == ["gw0", "gw1"]
    assert len(set(urls.values())) == 2


def test_a_failing_wait_explains_itself(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_timeout="""
def test_nothing_arrives(resend_emulator):
    resend_emulator.outbox.wait_for(to="nobody@acme.dev", timeout=0.1)
""")
    result = pytester.runpytest_subprocess("-q", shape)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*EmulatorError*408*No email matching the filter arrived*"])


def test_pytest_rewrites_the_plugin_module_and_not_the_emulator(pytester: pytest.Pytester) -> None:
    # The entry point marks the whole distribution for assertion rewriting; the plugin takes that back
    # for everything but itself, so the emulator's modules load from their bytecode cache (issue 28).
    pytester.makepyfile(test_loaders="""
import sys

def loader(name):
    return type(sys.modules[name].__loader__).__name__

def test_loaders(resend_emulator):
    names = ["emulator.testing.plugin", "emulator.app", "emulator.core.db", "emulator.testing.server"]
    assert {name: loader(name) for name in names} == {
        "emulator.testing.plugin": "AssertionRewritingHook", "emulator.app": "SourceFileLoader",
        "emulator.core.db": "SourceFileLoader", "emulator.testing.server": "SourceFileLoader"}
""")
    pytester.runpytest_subprocess("-q", "--resend-emulator-shape=thread").assert_outcomes(passed=1)


def test_modules_imported_after_the_emulator_started_are_still_rewritten(pytester: pytest.Pytester) -> None:
    # The plugin sets pytest's rewriting import hook aside while the emulator is imported (issue 28);
    # it is back in its place afterwards, for the suite's own modules registered for rewriting.
    pytester.makepyfile(helper="def check(total):\n    assert total == 2\n")
    pytester.makeconftest("import pytest\n\npytest.register_assert_rewrite('helper')\n")
    pytester.makepyfile(test_after="""
import sys

def test_helper_asserts_with_introspection(resend_emulator):
    assert type(sys.meta_path[0]).__name__ == "AssertionRewritingHook"
    import helper

    helper.check(3)
""")
    result = pytester.runpytest_subprocess("-q", "--resend-emulator-shape=thread")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assert 3 == 2*"])
