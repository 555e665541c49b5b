"""Every number, date and size a route reads from its query string, fed hostile values by hypothesis
(issue 36): numbers past SQLite's INTEGER, signs, fractions, Unicode digits (`²`, `٣`, `０`), dates at the
years 1 and 9999 with offsets that push them past either end, sizes with units. Every answer is below 500,
and a JSON route's refusal has Resend's shape. The search language (`q`) is fuzzed on its own below."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Route
from starlette.testclient import TestClient

from emulator.app import LazyRoutes, all_ops, create_app
from tests.conftest import ERROR_KEYS, api_client, make_settings
from tests.inboxes_helpers import conversation, create_inbox, receiving_domain
from tests.test_broadcasts_send import broadcast, flush

ROOT = Path(__file__).resolve().parent.parent
SEARCH_NAMES = ("q", "query", "search")
# What pages, cursors and windows are called across the API, the control plane and the UI.
COMMON_NAMES = ("limit", "after", "before", "older_than", "newer_than", "deleted", "marked", "page", "cursor",
                "since", "until", "offset", "size", "timeout", "expires", "start_date", "end_date", "days",
                "count")
READ = re.compile(r"""query(?:_params)?\.get(?:list)?\(\s*["']([a-z_]+)["']""")
# Streams and long polls answer only when something happens or their timeout runs out.
LONG_POLLS = ("/events", "/wait", "/live")

UNICODE_DIGITS = "²³¹٣٠۹߁०০੧０９𝟘①⑽"
SPECIAL_NUMBERS = ["0", "-0", "+5", " 7 ", "1_000", "0x10", "1e3", "1e309", "-1e309", "nan", "inf", "-inf",
                   "", " ", "\t", "9" * 23, "9" * 400, str(2**63 - 1), str(2**63), str(-(2**63) - 1),
                   "1.5", "-1.5", ".5", "5.", "00000000000000000000000000000001", "1,000", "\x00"]
numbers = st.one_of(
    st.integers(-(2**80), 2**80).map(str),
    st.sampled_from(SPECIAL_NUMBERS),
    st.floats().map(repr),
    st.text(alphabet=UNICODE_DIGITS + "0123456789-.", min_size=1, max_size=25),
)
OFFSETS = ["", "Z", "z", "+00:00", "+01:00", "-01:00", "+14:00", "-23:59", "+23:59", "+2400"]
dates = st.one_of(
    st.builds(lambda year, month, day, time, zone: f"{year:04d}-{month:02d}-{day:02d}{time}{zone}",
              st.sampled_from([1, 2, 1970, 2026, 9998, 9999]), st.sampled_from([1, 12]),
              st.sampled_from([1, 30, 31]), st.sampled_from(["", "T00:00:00", "T23:59:59.999999", " 12:00"]),
              st.sampled_from(OFFSETS)),
    st.sampled_from(["0000-00-00", "10000-01-01", "2026-13-45", "2026-05-14T25:00:00Z", "٢٠٢٦-٠٥-١٤",
                     "2026-W20", "2026-134", "-2026-05-14", "2026-05-14T09:00:00+99:99"]),
)
sizes = st.builds(lambda number, unit: f"{number}{unit}", numbers,
                  st.sampled_from(["", "k", "KB", "kb", "M", "MB", "G", "GB", "b", "%", " days", "h", "ms"]))
# The broadcast recipients' cursors are base64 offsets: garbage inside a well-formed cursor, too.
cursors = numbers.map(lambda text: base64.b64encode(f"offset:{text}".encode()).decode().rstrip("="))
values = numbers | dates | sizes | cursors | st.text(max_size=300)


def _all_routes() -> list[BaseRoute]:
    app = create_app(make_settings())
    found: list[BaseRoute] = []
    for route in app.routes:
        found += route.routes_for(app.state.emu) if isinstance(route, LazyRoutes) else [route]
    return found


def _source(module: str) -> str:
    path = ROOT / (module.replace(".", "/") + ".py")
    path = path if path.exists() else path.with_suffix("") / "__init__.py"
    return path.read_text() if path.exists() else ""


def _reads(module: str) -> set[str]:
    """The query parameters the route's module reads (`query.get("limit")` and the like), and those of
    the emulator modules it imports (a view reads its filters through a helper module)."""
    source = _source(module)
    helpers = [module for package, names in re.findall(r"^from (emulator[.\w]*) import ([\w, ]+)", source,
                                                         re.MULTILINE)
               for module in [package, *(f"{package}.{name.strip()}" for name in names.split(","))]]
    return {name for text in [source, *map(_source, helpers)] for name in READ.findall(text)}


def _gets() -> list[tuple[str, set[str]]]:
    """(path, parameters its module reads) of every GET: the API's operations, the control plane, the UI."""
    chosen = [(op.path, _reads(op.handler.__module__)) for op in all_ops() if op.method == "GET"]
    for route in _all_routes():
        gets = isinstance(route, Route) and "GET" in (route.methods or ())
        if (gets and route.path.startswith("/_emulator/") and not route.path.endswith(LONG_POLLS)
                and "/snapshot" not in route.path):
            chosen.append((route.path, _reads(route.endpoint.__module__)))
    return chosen


GETS = _gets()
NUMERIC = [(path, tuple(sorted((read | set(COMMON_NAMES)) - set(SEARCH_NAMES)))) for path, read in GETS]
SEARCHING = [(path, tuple(sorted(read & set(SEARCH_NAMES)))) for path, read in GETS
             if read & set(SEARCH_NAMES)]
# Ids of the data the fixture makes, by the path segment that precedes an id.
IDS: dict[str, list[str]] = {}


def _id_for(path: str, index: int, draw: Any) -> str:
    parts = path.split("/")
    kind = parts[index - 1] if index else ""
    known = IDS.get(kind) or [item for ids in IDS.values() for item in ids]
    return str(draw(st.sampled_from(known) | st.sampled_from(["00000000-0000-4000-8000-000000000000", "x"])))


def _concrete(path: str, draw: Any) -> str:
    parts = path.split("/")
    return "/".join(quote(_id_for(path, index, draw), safe="") if part.startswith("{") else part
                    for index, part in enumerate(parts))


def _check(response: Any, path: str) -> None:
    assert response.status_code < 500, (path, response.status_code, response.text[:500])
    is_json = response.headers.get("content-type", "").startswith("application/json")
    if response.status_code >= 400 and is_json and not path.startswith("/oauth"):
        body = response.json()
        assert list(body) == ERROR_KEYS and body["statusCode"] == response.status_code, (path, body)


def _listed(client: TestClient, path: str) -> list[str]:
    return [item["id"] for item in client.get(path).json()["data"]]


@pytest.fixture(scope="module")
def data_client() -> Iterator[TestClient]:
    """An app with a little of everything, so paths with ids reach past "not found"."""
    with api_client(make_settings()) as client:
        IDS.clear()
        sent = [client.post("/emails", json={
            "from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": f"News {n}", "text": "t",
            "attachments": [{"filename": "a.txt", "content": "aGk="}]}).json()["id"] for n in range(3)]
        IDS["emails"] = IDS["outbox"] = IDS["messages"] = sent
        segment_id = client.post("/segments", json={"name": "All"}).json()["id"]
        contacts = [client.post("/contacts", json={"email": f"{name}@example.org"}).json()["id"]
                    for name in ("ada", "bob")]
        for contact_id in contacts:
            client.post(f"/contacts/{contact_id}/segments/{segment_id}")
        IDS["contacts"], IDS["segments"] = contacts, [segment_id]
        IDS["broadcasts"] = [broadcast(client, segment_id, send=True)]
        receiving_domain(client)
        IDS["inboxes"] = [create_inbox(client)["id"]]
        IDS["received"] = IDS["receiving"] = conversation(client, 2)
        IDS["threads"] = _listed(client, f"/inboxes/{IDS['inboxes'][0]}/threads")
        IDS["attachments"] = _listed(client, f"/emails/{sent[0]}/attachments")
        flush(client)
        yield client


@pytest.mark.parametrize(("path", "names"), NUMERIC, ids=[path for path, _ in NUMERIC])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_number_date_or_size_in_a_query_fails_with_a_server_error(
        data_client: TestClient, path: str, names: tuple[str, ...], data: st.DataObject) -> None:
    query = data.draw(st.dictionaries(st.sampled_from(names), values, min_size=1, max_size=4))
    concrete = _concrete(path, data.draw)
    _check(data_client.get(concrete, params=query), concrete)


# The search language (control/query.py, search.py, mailsearch.py, owned by branch i36-search) with numbers,
# dates and sizes in its filters: its own test, so a failure there is told apart from the numbers above.
# (It found no 500 on this branch at 60 examples a route; mark it xfail if a change to the language does.)
SEARCH_KEYS = ["from", "to", "subject", "tag", "status", "is", "has", "larger", "smaller", "before", "after",
               "older_than", "newer_than", "size", "date"]
terms = st.builds(lambda key, value: f"{key}:{value}", st.sampled_from(SEARCH_KEYS), numbers | dates | sizes)
searches = (st.lists(terms | st.text(max_size=20), min_size=1, max_size=4).map(" ".join)
            | st.text(max_size=300))


@pytest.mark.parametrize(("path", "names"), SEARCHING, ids=[path for path, _ in SEARCHING])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_search_with_numbers_dates_or_sizes_fails_with_a_server_error(
        data_client: TestClient, path: str, names: tuple[str, ...], data: st.DataObject) -> None:
    query = data.draw(st.dictionaries(st.sampled_from(names), searches, min_size=1, max_size=len(names)))
    concrete = _concrete(path, data.draw)
    _check(data_client.get(concrete, params=query), concrete)
