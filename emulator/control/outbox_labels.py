"""The control plane's routes for labels (the service: labels.py, which search.py imports too).

    GET    /_emulator/outbox/{id}/labels            {"object": "list", "data": ["checked", ...]}
    POST   /_emulator/outbox/{id}/labels            {"labels": ["checked"]} (or {"label": "checked"}): added
    DELETE /_emulator/outbox/{id}/labels/{name}     removed

Each answers the email's labels after the change; `account`/`api_key` in the query scope the lookup like
the other outbox routes.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import body_of
from emulator.control.fields import ARRAY, STRING, Spec
from emulator.control.labels import add, labels_of, remove
from emulator.control.outbox import BASE, requested_email
from emulator.core.errors import invalid

SPEC: Spec = {"labels": ARRAY, "label": STRING}


def _listed(names: list[str]) -> Response:
    return json_response({"object": "list", "data": names})


async def get_labels(request: Request) -> Response:
    row = await requested_email(request)
    async with emulator_of(request).transaction(row["account"]) as tx:
        return _listed(await labels_of(tx, row["id"]))


async def post_labels(request: Request) -> Response:
    body = await body_of(request, SPEC)
    names = [*(body.get("labels") or []), *([body["label"]] if body.get("label") is not None else [])]
    if not names:
        raise invalid("Give the labels to add: `labels` (an array) or `label`.")
    row = await requested_email(request)
    async with emulator_of(request).transaction(row["account"]) as tx:
        return _listed(await add(tx, row["id"], names))


async def delete_label(request: Request) -> Response:
    row = await requested_email(request)
    async with emulator_of(request).transaction(row["account"]) as tx:
        return _listed(await remove(tx, row["id"], request.path_params["name"]))


ROUTES = [
    Route(f"{BASE}/{{email_id}}/labels", get_labels, methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/labels", post_labels, methods=["POST"]),
    Route(f"{BASE}/{{email_id}}/labels/{{name}}", delete_label, methods=["DELETE"]),
]
