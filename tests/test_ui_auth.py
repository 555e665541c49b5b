"""`--ui-auth-file` (issue 38): the web UI, its live stream and the whole control plane ask for a user of an
htpasswd file — written here by the real `htpasswd` — while the Resend API keeps using API keys only; and
an emulator listening beyond loopback starts only with a sign-in or an explicit `--no-ui-auth`."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import time
from base64 import b64encode
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import resend
from starlette.routing import BaseRoute, Mount, Route

from emulator.app import LazyRoutes, create_app
from emulator.testing import EmulatorServer
from tests.conftest import KEY, make_settings
from tests.test_cli_restarts import banner, launch, stop
from tests.test_cli_startup import one_line, start

ALICE, BOB = ("alice", "correct horse"), ("bob", "battery staple")  # bcrypt, {SHA}
EXPECTED_CHALLENGE = 'Basic realm="resend-emulator", charset="UTF-8"'
# Open without a password, and only these: health for load balancers, the pages recipients' mail
# clients call from anywhere (unsubscribe links, open and click tracking; emulator/api/basic_auth.py).
OPEN = re.compile(r"^/_emulator/(health$|unsubscribe/|t/)")
EMAIL = {"from": "qa@example.com", "to": ["ada@example.com"], "subject": "Welcome aboard",
         "html": "<p>hi</p>"}


def htpasswd(*args: str) -> None:
    binary = shutil.which("htpasswd")
    if binary is None:
        pytest.fail("htpasswd is not installed: run `apt-get install apache2-utils`")
    subprocess.run([binary, *args], check=True, capture_output=True)


def users_file(folder: Path) -> Path:
    path = folder / "users"
    htpasswd("-c", "-b", "-B", str(path), *ALICE)  # bcrypt ($2y$)
    htpasswd("-b", "-s", str(path), *BOB)  # {SHA}
    return path


@pytest.fixture(scope="module")
def auth_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return users_file(tmp_path_factory.mktemp("auth"))


@pytest.fixture(scope="module")
def server(auth_file: Path) -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0, ui_auth_file=str(auth_file))) as running:
        yield running


def _filled(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _walk(routes: list[BaseRoute], app_emu: object, prefix: str = "") -> Iterator[tuple[str, str]]:
    for route in routes:
        if isinstance(route, LazyRoutes):
            yield from _walk(route.routes_for(app_emu), app_emu, prefix)  # type: ignore[arg-type]
        elif isinstance(route, Mount) and route.routes:
            yield from _walk(route.routes, app_emu, prefix + route.path)
        elif isinstance(route, Mount):  # an app of its own (static files): any path under it
            yield "GET", prefix + route.path + "/app.css"
        elif isinstance(route, Route):
            for method in sorted(route.methods or {"GET"}):
                yield method, prefix + _filled(route.path)
        else:
            pytest.fail(f"a route of a kind this test cannot walk: {route!r}")


def route_table() -> list[tuple[str, str]]:
    """Every (method, path) the app serves, from its own route table: a new route is in it."""
    app = create_app(make_settings())
    return sorted(set(_walk(app.routes, app.state.emu)))


def sign_in_routes() -> list[tuple[str, str]]:
    return [(method, path) for method, path in route_table()
            if (path == "/" or path.startswith("/_emulator")) and not OPEN.match(path)]


def test_the_route_table_walk_finds_the_ui_the_control_plane_and_the_open_pages() -> None:
    table = route_table()
    paths = {path for _, path in table}
    assert {"/", "/_emulator/ui/", "/_emulator/outbox", "/_emulator/reset", "/_emulator/health"} <= paths
    assert any(path.startswith("/_emulator/ui/events") for path in paths), "the live stream"
    assert {path for path in paths if OPEN.match(path)} == {
        "/_emulator/health", "/_emulator/unsubscribe/x1", "/_emulator/t/open/x1", "/_emulator/t/click/x1"}
    # Everything else is the Resend API, which the sign-in leaves alone.
    assert all(path.startswith("/_emulator") or path == "/" or not path.startswith("/_")
               for path in paths)


@pytest.mark.parametrize("who", ["no credentials", "a wrong bcrypt password", "a wrong SHA password",
                                 "an unknown user", "a bearer API key", "a broken header"])
def test_every_ui_and_control_plane_route_answers_401_without_a_user(server: EmulatorServer,
                                                                      who: str) -> None:
    headers = {"no credentials": {},
               "a wrong bcrypt password": _basic("alice", "wrong"),
               "a wrong SHA password": _basic("bob", "wrong"),
               "an unknown user": _basic("mallory", ALICE[1]),
               "a bearer API key": {"Authorization": f"Bearer {KEY}"},
               "a broken header": {"Authorization": "Basic !!not-base64!!"}}[who]
    routes = sign_in_routes()
    assert len(routes) > 100
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
        for method, path in routes:
            answer = client.request(method, path)
            assert answer.status_code == 401, (method, path, answer.status_code, answer.text[:200])
            assert answer.headers["www-authenticate"] == EXPECTED_CHALLENGE, (method, path)
            if method != "HEAD":
                assert answer.json() == {"statusCode": 401, "name": "ui_auth_required", "message": (
                    "Sign in with a user name and password from --ui-auth-file to use the web UI and"
                    " the control plane.")}, (method, path)


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + b64encode(f"{user}:{password}".encode()).decode()}


@pytest.mark.parametrize("user", [ALICE, BOB], ids=["bcrypt", "sha"])
def test_a_user_of_the_file_uses_the_ui_and_control_plane_as_without_sign_in(server: EmulatorServer,
                                                                             user: tuple[str, str]) -> None:
    server.reset()
    with httpx.Client(base_url=server.url, auth=user, timeout=60) as client:
        assert client.post("/_emulator/reset", json={}).status_code == 200
        sent = httpx.post(f"{server.url}/emails", json=EMAIL, headers={"Authorization": f"Bearer {KEY}"})
        assert sent.status_code == 200, sent.text
        outbox = client.get("/_emulator/outbox")
        assert outbox.status_code == 200
        assert [mail["id"] for mail in outbox.json()["data"]] == [sent.json()["id"]]
        page = client.get("/_emulator/ui/")
        assert page.status_code == 200 and "Welcome aboard" in page.text
        assert client.get("/", follow_redirects=False).status_code in (301, 302, 307, 308)
        assert client.get("/_emulator/health").status_code == 200


def test_health_and_the_recipient_pages_need_no_password(server: EmulatorServer) -> None:
    assert httpx.get(f"{server.url}/_emulator/health").status_code == 200
    for path in ("/_emulator/unsubscribe/x1", "/_emulator/t/open/x1", "/_emulator/t/click/x1"):
        assert httpx.get(f"{server.url}{path}").status_code != 401, path


def test_the_api_takes_its_key_without_a_password(server: EmulatorServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    server.reset()
    monkeypatch.setattr(resend, "api_url", server.url)
    monkeypatch.setattr(resend, "api_key", KEY)
    sent = resend.Emails.send(EMAIL)  # type: ignore[arg-type]
    assert resend.Emails.get(sent["id"])["subject"] == "Welcome aboard"


@pytest.mark.parametrize("user", [ALICE, BOB], ids=["bcrypt", "sha"])
def test_a_ui_user_is_no_api_key(server: EmulatorServer, user: tuple[str, str]) -> None:
    with httpx.Client(base_url=server.url, auth=user, timeout=60) as client:
        for method, path in (("POST", "/emails"), ("GET", "/domains"), ("GET", "/api-keys")):
            answer = client.request(method, path, json=EMAIL if method == "POST" else None)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.json()["name"] == "missing_api_key"
            assert "www-authenticate" not in answer.headers


def test_a_changed_password_counts_without_a_restart(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = users_file(tmp_path)
    with EmulatorServer(make_settings(port=0, ui_auth_file=str(path))) as running:
        outbox = f"{running.url}/_emulator/outbox"
        assert httpx.get(outbox, auth=ALICE).status_code == 200  # and now remembered
        htpasswd("-b", "-B", str(path), "alice", "new password")
        _eventually(lambda: httpx.get(outbox, auth=("alice", "new password")).status_code == 200)
        assert httpx.get(outbox, auth=ALICE).status_code == 401
        assert httpx.get(outbox, auth=BOB).status_code == 200
        # A broken version is reported once on stderr and the last good one stays in force.
        capsys.readouterr()
        path.write_text("alice:$apr1$PaYFRAnX$PtHcyOu9LA3bGwPqQNPF20\n")
        said: list[str] = []

        def warned() -> bool:  # the file is looked at when a request needs it
            assert httpx.get(outbox, auth=BOB).status_code == 200
            said.append(capsys.readouterr().err)
            return "--ui-auth-file" in "".join(said)

        _eventually(warned)
        assert "user 'alice': MD5 (apr1) passwords are not accepted" in "".join(said)
        assert "keeping the previous users" in "".join(said)
        assert httpx.get(outbox, auth=("alice", "new password")).status_code == 200
        # A file moved into place (a new inode, as `mv` or a config tool does) takes over.
        fresh = tmp_path / "fresh"
        htpasswd("-c", "-b", "-B", str(fresh), "carol", "third")
        fresh.replace(path)
        _eventually(lambda: httpx.get(outbox, auth=("carol", "third")).status_code == 200)
        assert httpx.get(outbox, auth=("alice", "new password")).status_code == 401


def _eventually(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """The file is looked at about once a second: wait for it, generously, without a timed assertion."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the change to the file never took effect"
        time.sleep(0.1)


# ---- start-up: exposed means protected -----------------------------------------------------------------

def test_a_host_beyond_loopback_without_a_sign_in_is_refused_naming_the_flag() -> None:
    one_line(start("--host", "0.0.0.0", "--no-smtp"), 2, "--host 0.0.0.0", "--ui-auth-file", "--no-ui-auth")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_hosts_need_no_sign_in(host: str) -> None:
    process = launch("--host", host)
    url, _ = banner(process)
    local = f"http://{'[::1]' if host == '::1' else host}:{url.rsplit(':', 1)[1]}"
    assert httpx.get(f"{local}/_emulator/outbox").status_code == 200
    assert stop(process) == 0


def test_no_ui_auth_is_the_explicit_opt_out() -> None:
    process = launch("--host", "0.0.0.0", "--no-ui-auth")
    url, _ = banner(process)
    local = url.replace("0.0.0.0", "127.0.0.1")
    assert httpx.get(f"{local}/_emulator/outbox").status_code == 200
    assert stop(process) == 0


def test_a_host_beyond_loopback_starts_with_a_sign_in(auth_file: Path) -> None:
    process = launch("--host", "0.0.0.0", "--ui-auth-file", str(auth_file))
    url, lines = banner(process)
    assert any(str(auth_file) in line for line in lines)
    local = url.replace("0.0.0.0", "127.0.0.1")
    assert httpx.get(f"{local}/_emulator/outbox").status_code == 401
    assert httpx.get(f"{local}/_emulator/outbox", auth=BOB).status_code == 200
    assert stop(process) == 0


def test_a_sign_in_and_its_opt_out_together_are_a_usage_error(auth_file: Path) -> None:
    one_line(start("--ui-auth-file", str(auth_file), "--no-ui-auth"), 2, "--ui-auth-file", "--no-ui-auth")


@pytest.mark.parametrize(("flag", "scheme"), [("-m", "MD5 (apr1)"), ("-d", "crypt"), ("-p", "plain-text")])
def test_a_file_with_a_weak_scheme_is_refused_naming_the_user_and_scheme(tmp_path: Path, flag: str,
                                                                         scheme: str) -> None:
    path = users_file(tmp_path)
    htpasswd("-b", flag, str(path), "carol", "pw")
    one_line(start("--ui-auth-file", str(path), "--no-smtp"), 2, f"--ui-auth-file {path}", "'carol'", scheme)


def test_a_missing_auth_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    one_line(start("--ui-auth-file", str(missing), "--no-smtp"), 2, f"--ui-auth-file {missing}: no such file",
             "htpasswd -B -c")


# ---- a real browser --------------------------------------------------------------------------------------

@pytest.mark.browser
def test_chromium_with_credentials_sees_the_outbox_and_without_gets_401(server: EmulatorServer) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import Response, expect

    from tests.ui_helpers import chromium

    server.reset()
    sent = httpx.post(f"{server.url}/emails", json=EMAIL, headers={"Authorization": f"Bearer {KEY}"})
    assert sent.status_code == 200
    with chromium() as browser:
        signed_in = browser.new_context(http_credentials={"username": ALICE[0], "password": ALICE[1]})
        page = signed_in.new_page()
        statuses: list[int] = []
        page.on("response", lambda answer: statuses.append(answer.status))
        with page.expect_response(lambda answer: "/_emulator/ui/events" in answer.url) as stream:
            assert page.goto(f"{server.url}/") is not None  # the redirect, the page, its files, its stream
        expect(page.get_by_text("Welcome aboard").first).to_be_visible()
        assert stream.value.status == 200
        assert 401 not in statuses
        signed_in.close()
        # Without credentials headless Chromium gives up on the challenge (ERR_INVALID_AUTH_CREDENTIALS, no
        # prompt to type into): the page gets the 401 and never the outbox.
        anonymous = browser.new_context()
        page = anonymous.new_page()
        answers: list[Response] = []
        page.on("response", lambda answer: answers.append(answer))
        with contextlib.suppress(PlaywrightError):
            page.goto(f"{server.url}/_emulator/ui/")
        assert [(answer.status, answer.headers.get("www-authenticate")) for answer in answers] == [
            (401, EXPECTED_CHALLENGE)]  # and nothing else: no outbox behind it
        anonymous.close()


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST", True), ("::ffff:127.0.0.1", True), ("0.0.0.0", False), ("::", False), ("", False),
    ("192.168.1.20", False), ("team-host.example", False), ("localhost.example", False)])
def test_which_hosts_count_as_loopback(host: str, loopback: bool) -> None:
    from emulator.core.net import is_loopback

    assert is_loopback(host) is loopback
