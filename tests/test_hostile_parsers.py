"""Every parser a request body feeds is bounded (issue 36): multipart forms, JSON depth, CSV imports.

Each bound is tested at ten times its limit through HTTP: the refusal's status, name and message, and
that nothing was stored. One test holds a real server to the promise behind the bounds: a hostile
upload does not keep `/_emulator/health` waiting.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.api import multipart
from emulator.core import jsontext
from emulator.resources.contacts import import_steps
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings

BOUNDARY = "hostile"
FORM = {"content-type": f"multipart/form-data; boundary={BOUNDARY}"}
CSV = b"email\nada@example.com\n"


def form(*parts: tuple[str, bytes]) -> bytes:
    """A multipart/form-data body of (header block, content) parts."""
    return b"".join(f"--{BOUNDARY}\r\n{head}\r\n\r\n".encode() + body + b"\r\n" for head, body in parts) \
        + f"--{BOUNDARY}--\r\n".encode()


def file_part(extra: str = "") -> tuple[str, bytes]:
    return f'Content-Disposition: form-data; name="file"; filename="c.csv"{extra}', CSV


def refused(response: httpx.Response, status: int, name: str, message: str) -> None:
    assert (response.status_code, response.json()) == (status, {"statusCode": status, "message": message,
                                                                "name": name})


def no_imports(client: TestClient | httpx.Client) -> None:
    assert client.get("/contacts/imports").json()["data"] == []


# ---- multipart/form-data -------------------------------------------------------------------------

def test_a_header_of_ten_times_the_parameters_is_refused(client: TestClient) -> None:
    params = "; a=b" * (10 * multipart.MAX_PARAMETERS)
    response = client.post("/contacts/imports", content=form(file_part(params)), headers=FORM)
    refused(response, 400, "validation_error",
            f"A multipart/form-data header has more than {multipart.MAX_PARAMETERS} parameters.")
    no_imports(client)


def test_ten_times_the_parts_are_refused_unread(client: TestClient) -> None:
    one = ('Content-Disposition: form-data; name="f"', b"x")
    body = form(file_part(), *[one] * (10 * multipart.MAX_PARTS))
    response = client.post("/contacts/imports", content=body, headers=FORM)
    refused(response, 413, "validation_error",
            f"A multipart/form-data body may have at most {multipart.MAX_PARTS} parts.")
    no_imports(client)


def test_a_header_block_of_ten_times_the_bytes_is_refused(client: TestClient) -> None:
    padding = "\r\nX-Pad: " + "p" * (10 * multipart.MAX_HEAD_BYTES)
    response = client.post("/contacts/imports", content=form(file_part(padding)), headers=FORM)
    refused(response, 413, "validation_error", "The headers of a multipart/form-data part may have at most"
                                               f" {multipart.MAX_HEAD_BYTES} bytes.")
    no_imports(client)


def test_parameters_within_the_bound_are_read_quoted_or_not(client: TestClient) -> None:
    head = ('Content-Disposition: form-data; x=1; filename="a;b \\"c\\".csv"; name=file'
            + "; y=2" * (multipart.MAX_PARAMETERS - 4))
    response = client.post("/contacts/imports", content=form((head, CSV)), headers=FORM)
    assert response.status_code == 201, response.text
    assert multipart.parse_form(FORM["content-type"], form((head, CSV)))["file"].filename == 'a;b "c".csv'


def test_a_boundary_with_byte_0x85_is_read_as_sent(api: httpx.Client) -> None:
    # 0x85 is NEL, a line break to Python's str.splitlines: the email package's header parser was
    # cut short by it and the upload answered 500. A real server: the TestClient re-encodes the byte.
    body = b"--a\x85b\r\n" + form(file_part()).split(b"\r\n", 1)[1].replace(BOUNDARY.encode(), b"a\x85b")
    response = api.post("/contacts/imports", content=body,
                        headers={b"content-type": b"multipart/form-data; boundary=a\x85b"})
    assert response.status_code == 201, response.text
    assert len(api.get("/contacts/imports").json()["data"]) == 1


def test_a_boundary_missing_or_broken_is_a_400(client: TestClient) -> None:
    for content_type in ("multipart/form-data", "multipart/form-data; boundary=",
                         'multipart/form-data; boundary="'):
        response = client.post("/contacts/imports", content=form(file_part()),
                               headers={"content-type": content_type})
        refused(response, 400, "validation_error", multipart.NOT_FORM)
    no_imports(client)


def test_a_hostile_upload_is_refused_while_health_keeps_answering() -> None:
    """The review's input: one Content-Disposition of 100 000 `; a=b` (600 KB) held every request for
    11–15 s. Health is asked all along; how long it may wait is the benchmark's business (250 ms:
    benchmarks/bench_parsers.py), so this asserts only that every answer came and was a 200."""
    body = form(file_part("; a=b" * 100_000))
    statuses: list[int] = []
    with EmulatorServer(make_settings(port=0)) as server, httpx.Client(base_url=server.url, headers=AUTH,
                                                                       timeout=60) as client:
        done, answered = threading.Event(), threading.Event()

        def poll() -> None:
            with httpx.Client(base_url=server.url, timeout=60) as health:
                while not done.is_set() or len(statuses) < 2:
                    statuses.append(health.get("/_emulator/health").status_code)
                    answered.set()
                    time.sleep(0.01)

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            answered.wait(30)
            response = client.post("/contacts/imports", content=body, headers=FORM)
        finally:
            done.set()
            poller.join()
        refused(response, 413, "validation_error", "The headers of a multipart/form-data part may have at"
                                                   f" most {multipart.MAX_HEAD_BYTES} bytes.")
        no_imports(client)
    assert len(statuses) >= 2 and set(statuses) == {200}, statuses


# ---- JSON nesting --------------------------------------------------------------------------------

def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


TOO_DEEP = 10 * jsontext.MAX_DEPTH


@pytest.mark.parametrize("field", ["column_map", "segments", "topics"])
@pytest.mark.parametrize("depth", [TOO_DEEP, 100_000])
def test_a_form_field_nested_too_deep_is_a_422(client: TestClient, field: str, depth: int) -> None:
    response = client.post("/contacts/imports", files={"file": ("c.csv", CSV, "text/csv")},
                           data={field: nested(depth)})
    refused(response, 422, "validation_error",
            f"The `{field}` field is nested more than {jsontext.MAX_DEPTH} levels deep.")
    no_imports(client)


@pytest.mark.parametrize("field", ["column_map", "segments", "topics"])
def test_a_json_string_field_nested_too_deep_is_a_422(client: TestClient, field: str) -> None:
    response = client.post("/contacts/imports", json={"file": CSV.decode(), field: nested(100_000)})
    refused(response, 422, "validation_error",
            f"The `{field}` field is nested more than {jsontext.MAX_DEPTH} levels deep.")
    no_imports(client)


@pytest.mark.parametrize("path", ["/emails", "/contacts/imports", "/_emulator/clock/advance", "/oauth/token"])
def test_a_body_nested_ten_times_too_deep_is_a_400(client: TestClient, path: str) -> None:
    body = ('{"a":' * TOO_DEEP + "1" + "}" * TOO_DEEP).encode()
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    message = response.json().get("message") or response.json().get("error_description")
    assert message == jsontext.TOO_DEEP
    assert client.get("/emails").json()["data"] == []
    no_imports(client)


def test_brackets_inside_strings_do_not_count_as_nesting(client: TestClient) -> None:
    deep_looking = "[" * TOO_DEEP + "{" * TOO_DEEP
    assert jsontext.parse(json.dumps({"a": [deep_looking, {"b": '"\\' + deep_looking}]}).encode()) \
        == {"a": [deep_looking, {"b": '"\\' + deep_looking}]}
    response = client.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.com"],
                                            "subject": deep_looking, "text": "hi"})
    assert response.status_code == 200, response.text


def test_exactly_the_bound_is_accepted_and_one_more_is_not() -> None:
    limit = jsontext.MAX_DEPTH
    assert jsontext.parse(nested(limit).encode()) is not None
    with pytest.raises(jsontext.BodyError, match="nested more than"):
        jsontext.parse(nested(limit + 1).encode())
    assert jsontext.depth(b'{"a": [1, {"b": "]]]"}]}') == 3


# ---- CSV imports ---------------------------------------------------------------------------------

def upload(client: TestClient, text: str, **fields: Any) -> httpx.Response:
    return client.post("/contacts/imports", files={"file": ("c.csv", text.encode(), "text/csv")}, data=fields)


def test_a_header_ten_times_too_wide_is_refused(client: TestClient) -> None:
    width = 10 * import_steps.MAX_COLUMNS
    response = upload(client, "email," + ",".join(f"c{n}" for n in range(width - 1)) + "\nada@example.com\n")
    refused(response, 422, "validation_error", f"The CSV file could not be read: row 1 has {width} columns,"
                                               f" more than the {import_steps.MAX_COLUMNS} allowed.")
    no_imports(client)


def test_a_row_ten_times_too_wide_is_refused(client: TestClient) -> None:
    width = 10 * import_steps.MAX_COLUMNS
    response = upload(client, "email\nada@example.com\nbob@example.com" + "," * (width - 1) + "\n")
    refused(response, 422, "validation_error", f"The CSV file could not be read: row 3 has {width} columns,"
                                               f" more than the {import_steps.MAX_COLUMNS} allowed.")
    no_imports(client)


def test_a_field_ten_times_too_long_is_refused(client: TestClient) -> None:
    long = "x" * (10 * import_steps.MAX_FIELD_CHARS)
    response = upload(client, f'email,first_name\nada@example.com,"{long}"\n')
    refused(response, 422, "validation_error", "The CSV file could not be read: row 2 has a field longer"
                                               f" than {import_steps.MAX_FIELD_CHARS} characters.")
    no_imports(client)


def test_rows_at_the_bounds_are_imported(client: TestClient) -> None:
    width = import_steps.MAX_COLUMNS
    header = "email,first_name," + ",".join(f"c{n}" for n in range(width - 2))
    row = "ada@example.com," + "x" * import_steps.MAX_FIELD_CHARS + "," * (width - 2)
    response = upload(client, f"{header}\n{row}\n")
    assert response.status_code == 201, response.text
