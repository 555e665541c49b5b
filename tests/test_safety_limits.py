"""Every input gets a 4xx, never a 500 (issue 11): JSON depth and charset, lone surrogates, numeric
bounds on schedules and the clock, one body limit everywhere, keep-alive kept after an error."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from emulator.app import control_plane_routes, create_app
from emulator.cli import parse_settings
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, api_client, make_settings
from tests.emails_helpers import email
from tests.ui_helpers import running_server

JSON = {"content-type": "application/json"}
DEEP = b"[" * 10_000 + b"]" * 10_000
DEEP_MESSAGE = "The request body is nested more than 100 levels deep."
FROZEN = "2026-05-14T09:00:00.000000Z"


def _writing_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the app that takes a body, API and control plane alike (but the two
    resets: they read no body, so they answer 200 and empty the state whatever comes with them)."""
    app = create_app(make_settings())
    found = []
    for route in control_plane_routes(app):
        if isinstance(route, Route):
            if route.path.endswith("/reset"):
                continue
            for method in sorted((route.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"}):
                found.append((method, route.path.replace("{", "").replace("}", "")))
    return found


def _sent(client: TestClient) -> list[str]:
    return [row["id"] for row in client.get("/emails").json()["data"]]


@pytest.fixture(scope="module")
def shared() -> Iterator[TestClient]:
    with api_client(make_settings()) as client:
        yield client


@pytest.mark.parametrize(("method", "path"), _writing_routes(), ids=lambda value: str(value))
def test_json_nested_10_000_deep_is_refused_on_every_route(shared: TestClient, method: str,
                                                           path: str) -> None:
    shared.post("/emails", json=email())
    before = _sent(shared)
    response = shared.request(method, path, content=DEEP, headers=JSON)
    assert response.status_code < 500, response.text
    if response.status_code == 400:
        body = response.json()  # the OAuth protocol endpoints answer in the OAuth error shape
        message = body["error_description"] if "error" in body else body["message"]
        assert message in (DEEP_MESSAGE, "The request body must be a JSON object.")
    assert _sent(shared) == before


def test_json_100_deep_is_still_parsed(client: TestClient) -> None:
    deep_but_fine = {"tags": [{"name": "n", "value": "v"}], "headers": {"X-A": "b"}}
    nested: Any = "x"
    for _ in range(95):
        nested = [nested]
    response = client.post("/emails", json=email(**deep_but_fine, variables=nested))
    assert response.status_code in (200, 422), response.text
    too_deep = client.post("/emails", content=json.dumps(email(x=[nested] * 10)).replace(
        '"x"', "[" * 10 + '"x"' + "]" * 10), headers=JSON)
    assert too_deep.status_code == 400


@pytest.mark.parametrize("path", ["/emails", "/_emulator/clock/advance", "/_emulator/scenario"])
@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-32"])
def test_a_body_not_in_utf_8_is_refused(client: TestClient, path: str, codec: str) -> None:
    body = email() if path == "/emails" else {"days": 1} if "clock" in path else {"scenario": {}}
    response = client.post(path, content=json.dumps(body).encode(codec), headers=JSON)
    assert response.json() == {"statusCode": 400, "name": "validation_error",
                               "message": "The request body must be JSON encoded as UTF-8."}
    assert _sent(client) == [] and client.get("/_emulator/clock").json()["now"] == FROZEN


def test_a_utf_8_byte_order_mark_is_tolerated(client: TestClient) -> None:
    response = client.post("/emails", content=b"\xef\xbb\xbf" + json.dumps(email()).encode(), headers=JSON)
    assert response.status_code == 200


@pytest.mark.parametrize("hostile", ['"\\ud800"', '"a\\udfffb"', '"\\uDBFF"'])
@pytest.mark.parametrize("field", ["subject", "text", "from"])
def test_a_lone_surrogate_is_refused_and_nothing_is_stored(client: TestClient, hostile: str,
                                                           field: str) -> None:
    body = json.dumps(email(text="t")).replace(f'"{field}": ', f'"{field}": {hostile}, "_": ', 1)
    response = client.post("/emails", content=body.encode(), headers=JSON)
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith("The request body contains a lone surrogate")
    assert _sent(client) == []
    assert client.get("/logs").status_code == 200


def test_a_lone_surrogate_in_a_key_or_on_the_control_plane_is_refused(client: TestClient) -> None:
    assert client.post("/emails", content=b'{"\\ud800": 1}', headers=JSON).status_code == 400
    refused = client.post("/_emulator/scenario", content=b'{"scenario": {"domains": [{"name": "\\udc00"}]}}',
                          headers=JSON)
    assert refused.status_code == 400 and client.get("/domains").json()["data"] == []


def test_a_surrogate_pair_is_a_character_and_reads_back(client: TestClient) -> None:
    body = json.dumps(email(subject="x")).replace('"x"', '"Party \\ud83c\\udf89"')
    sent = client.post("/emails", content=body.encode(), headers=JSON)
    assert sent.status_code == 200
    assert client.get(f"/emails/{sent.json()['id']}").json()["subject"] == "Party \N{PARTY POPPER}"
    assert client.get(f"/_emulator/outbox/{sent.json()['id']}.eml").status_code == 200


@pytest.mark.parametrize("when", ["in 99999999999999999999 days", "in 9999999999 weeks", "in 31 days",
                                  "in " + "9" * 5000 + " seconds"])
def test_a_schedule_beyond_any_date_is_a_422(client: TestClient, when: str) -> None:
    response = client.post("/emails", json=email(scheduled_at=when))
    assert response.json() == {
        "statusCode": 422, "name": "validation_error",
        "message": "Invalid `scheduled_at` field. Emails can be scheduled at most 30 days in advance."}
    assert _sent(client) == []


def test_a_schedule_within_30_days_still_works(client: TestClient) -> None:
    assert client.post("/emails", json=email(scheduled_at="in 30 days")).status_code == 200
    assert client.post("/emails", json=email(scheduled_at="in 0002 hours")).status_code == 200


OUT_OF_RANGE = {"statusCode": 422, "name": "validation_error",
                "message": "The clock only goes from 1970-01-01T00:00:00Z to 9000-01-01T00:00:00Z."}


@pytest.mark.parametrize("body", [{"days": 1e308}, {"seconds": 10 ** 400}, {"days": 3_000_000},
                                  {"days": 1e308, "seconds": 1e308}])
def test_advancing_the_clock_past_what_dates_hold_is_a_422(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/_emulator/clock/advance", json=body)
    assert response.json() == OUT_OF_RANGE
    assert client.get("/_emulator/clock").json()["now"] == FROZEN


def test_advance_refuses_a_huge_integer_given_as_text(client: TestClient) -> None:
    response = client.post("/_emulator/clock/advance", content=b'{"days": 1e999}', headers=JSON)
    assert response.json() == OUT_OF_RANGE  # Python reads 1e999 as infinity


@pytest.mark.parametrize("route", ["set", "freeze"])
@pytest.mark.parametrize("at", ["9999-12-31T00:00:00Z", "9000-01-01T00:00:01Z", "0001-01-01T00:00:00Z",
                                "1969-12-31T23:59:59Z"])
def test_the_clock_refuses_dates_the_storage_cannot_hold(client: TestClient, route: str, at: str) -> None:
    response = client.post(f"/_emulator/clock/{route}", json={"at": at})
    assert response.json() == OUT_OF_RANGE
    assert client.get("/_emulator/clock").json() == {"mode": "frozen", "now": FROZEN}
    sent = client.post("/emails", json=email(scheduled_at="in 1 day"))
    assert sent.status_code == 200
    assert client.get("/emails").status_code == 200


def test_the_clock_reaches_its_last_instant_and_mail_still_flows(client: TestClient) -> None:
    assert client.post("/_emulator/clock/set", json={"at": "9000-01-01T00:00:00Z"}).status_code == 200
    sent = client.post("/emails", json=email(scheduled_at="in 30 days"))
    assert sent.status_code == 200
    assert client.get(f"/emails/{sent.json()['id']}").json()["scheduled_at"].startswith("9000-01-31")
    assert client.post("/_emulator/clock/advance", json={"seconds": 1}).json() == OUT_OF_RANGE


def test_the_cli_refuses_a_start_the_clock_cannot_show(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_settings(["--clock-start", "9999-12-31T00:00:00Z"])
    assert "The clock only goes from 1970-01-01T00:00:00Z" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["/_emulator/scenario", "/_emulator/clock/advance", "/_emulator/inbound",
                                  "/_emulator/snapshot/save", "/_emulator/unsubscribe/x"])
def test_the_control_plane_has_the_api_body_limit(path: str) -> None:
    with api_client(make_settings(max_body_bytes=1000)) as client:
        body = json.dumps({"scenario": {"domains": [{"name": "a" * 2000 + ".dev"}]}}).encode()
        declared = client.post(path, content=body, headers=JSON)
        streamed = client.post(path, content=iter([body[:600], body[600:]]), headers=JSON)  # chunked
        # An unknown unsubscribe token is answered before the body is read.
        for response in (declared, streamed) if "unsubscribe" not in path else (declared,):
            assert response.json() == {"statusCode": 413, "name": "validation_error",
                                       "message": "The request body is too large."}
        assert client.get("/domains").json()["data"] == []
        assert client.post("/emails", content=body, headers=JSON).status_code == 413  # the API's own


def _exchange(sock: socket.socket, request: bytes) -> tuple[int, bytes]:
    """Send one request on a kept-alive socket; read one response (Content-Length framed)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body


def _post(path: str, body: bytes, port: str) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {AUTH['Authorization']}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.fixture(scope="module")
def live() -> Iterator[EmulatorServer]:
    with running_server() as server:
        yield server


def test_the_connection_stays_open_after_errors(live: EmulatorServer) -> None:
    port = live.url.rsplit(":", 1)[1]
    health = f"GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
        assert _exchange(sock, _post("/emails", DEEP, port))[0] == 400
        assert _exchange(sock, _post("/emails", b'{"from": 1}', port))[0] == 422
        assert _exchange(sock, _post("/_emulator/clock/advance", b'{"days": 1e308}', port))[0] == 422
        assert _exchange(sock, health)[0] == 200


def test_an_unexpected_error_is_a_500_on_a_connection_that_stays_open(
        live: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> dict[str, object]:
        raise RuntimeError("a defect")

    port = live.url.rsplit(":", 1)[1]
    health = f"GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
        monkeypatch.setattr(live.emu.clock, "state", broken)
        status, body = _exchange(sock, health)
        assert (status, json.loads(body)) == (500, {"statusCode": 500, "name": "application_error",
                                                    "message": "An unexpected error occurred."})
        monkeypatch.undo()
        assert _exchange(sock, health)[0] == 200


def test_a_crash_on_a_literal_api_path_is_a_500_on_a_connection_that_stays_open(
        live: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # POST /emails skips the router (pipeline.ApiShortcut): the crash barrier must still be in front of it.
    async def broken(*args: object, **kwargs: object) -> dict[str, object]:
        raise RuntimeError("a defect")

    port = live.url.rsplit(":", 1)[1]
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
        monkeypatch.setattr("emulator.resources.emails.service.send_email", broken)
        status, body = _exchange(sock, _post("/emails", json.dumps(email()).encode(), port))
        assert (status, json.loads(body)) == (500, {"statusCode": 500, "name": "application_error",
                                                    "message": "An unexpected error occurred."})
        monkeypatch.undo()
        assert _exchange(sock, _post("/emails", json.dumps(email()).encode(), port))[0] == 200


@pytest.mark.parametrize(("method", "path", "status", "name"), [
    ("PUT", "/emails", 405, "method_not_allowed"),  # a literal path, a method it lacks: the router's 405
    ("GET", "/emails/batch", 422, "invalid_parameter"),  # GET goes on to /emails/{email_id}, as before
    ("DELETE", "/domains", 405, "method_not_allowed"),
])
def test_literal_api_paths_with_other_methods_answer_as_the_router_does(
        client: TestClient, method: str, path: str, status: int, name: str) -> None:
    response = client.request(method, path)
    assert (response.status_code, response.json()["name"]) == (status, name)


def test_a_declared_body_past_the_limit_is_refused_before_it_is_sent(live: EmulatorServer) -> None:
    port = live.url.rsplit(":", 1)[1]
    head = (f"POST /_emulator/scenario HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json"
            f"\r\nContent-Length: {50 * 1024 * 1024 + 1}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
        sock.sendall(head)
        status = sock.recv(65536).split()[1]
    assert status == b"413"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json_and_are_refused(client: TestClient, constant: str) -> None:
    # JSON.parse (the real service's parser) refuses them; RFC 8259 §6 has no such numbers.
    body = json.dumps(email()).replace('"subject": ', f'"x": {constant}, "subject": ', 1)
    response = client.post("/emails", content=body.encode(), headers=JSON)
    assert response.status_code == 400, response.text
    message = f"The request body is not valid JSON: `{constant}` is not a JSON value."
    assert response.json()["message"] == message
    assert _sent(client) == []


def test_the_json_codec_keeps_what_the_stdlib_keeps() -> None:
    from emulator.core.jsontext import compact, compact_bytes, parse

    big = 123456789012345678901234567890
    assert parse(b'{"n": %d, "m": -9223372036854775809}' % big) == {"n": big, "m": -9223372036854775809}
    assert compact({"n": big}) == f'{{"n":{big}}}'
    assert compact({1: "é", "s": "\u2028<&>"}) == '{"1":"é","s":"\u2028<&>"}'
    assert compact_bytes({"id": "x", "n": [1, 2.5, None, True]}) == b'{"id":"x","n":[1,2.5,null,true]}'
