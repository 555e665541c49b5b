"""What a Resend API operation is (Op), what its handler receives (ApiRequest) and returns (Reply, JSON)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from emulator.api.auth import Credential
from emulator.api.multipart import FormField, parse_form
from emulator.core import errors
from emulator.core.clock import to_db
from emulator.core.errors import ApiError
from emulator.core.jsontext import compact_bytes

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams
    from starlette.types import Send

    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

JSON_TYPE = "application/json; charset=utf-8"


@dataclass
class Reply:
    """A handler result with a status other than its operation's default."""

    body: Any
    status: int = 200


@dataclass
class FormBody:
    """A `multipart/form-data` request body (contact imports upload their CSV this way)."""

    fields: dict[str, FormField]

    @classmethod
    def parse(cls, content_type: str, raw: bytes) -> FormBody:
        """Read by `emulator.api.multipart`, whose every loop has a stated bound (issue 36)."""
        return cls(parse_form(content_type, raw))


class CallHeaders(Headers):
    """Starlette's Headers (every method still works) whose single-value lookups go to a dict made once:
    Starlette's scan the raw list, encoding the name afresh, on each lookup, and a send makes six
    (issue 28). As in Starlette, names are matched without regard to case (ASGI servers give them in
    lower case), and of repeated headers the first wins."""

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        listed: list[tuple[bytes, bytes]] = raw if isinstance(raw, list) else list(raw)  # ASGI: any iterable
        super().__init__(raw=listed)
        self._found: dict[str, str] = {name.decode("latin-1"): value.decode("latin-1")
                                       for name, value in reversed(listed)}

    def get(self, key: str, default: Any = None) -> Any:
        return self._found.get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return self._found[key.lower()]

    def __contains__(self, key: Any) -> bool:
        return isinstance(key, str) and key.lower() in self._found


class ApiCall(Request):
    """One API call as the pipeline sees it: Starlette's Request with its headers in a `CallHeaders`, and
    the pipeline's own facts as plain attributes, not in `state` (a dict behind `__getattr__`, whose
    misses raise): when it came (`now` on the emulator clock, and `now_db` as stored: its log row, its
    key's `last_used_at` and its quota headers share one reading), the caller's credential (the log
    needs it even when the operation fails), the JSON body as sent (for the log), and headers a
    `before_op` hook adds to the answer (control/faults.py)."""

    def __init__(self, scope: Scope, receive: Receive, now: datetime) -> None:
        super().__init__(scope, receive)
        self.now, self.now_db = now, to_db(now)
        self._call_headers = CallHeaders(scope["headers"])
        self.credential: Credential | None = None
        self.json_body: bytes | None = None
        self.response_headers: dict[str, str] = {}

    @property
    def headers(self) -> CallHeaders:
        return self._call_headers


@dataclass
class ApiRequest:
    method: str
    path: str
    params: dict[str, str]
    headers: Headers
    body: Any
    credential: Credential | None
    raw: Request = field(repr=False)

    @property
    def query(self) -> QueryParams:
        # Parsed on first use (and kept by Starlette's Request): a send never reads its query string.
        return self.raw.query_params

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object; `{}` when empty (SDKs send bodies on GET/DELETE too)."""
        if self.body is None:
            return {}
        if not isinstance(self.body, dict):
            raise ApiError(errors.MALFORMED_BODY, "The request body must be a JSON object.")
        return self.body


Handler = Callable[["Tx", ApiRequest], Awaitable[Any]]


class Op(NamedTuple):
    """One Resend operation: `operation_id` is the OpenAPI operationId (grep leads spec → code)."""

    operation_id: str
    method: str
    path: str
    handler: Handler
    access: str = "full"  # "full": full_access only; "send": any key; "public": no key
    status: int = 200
    idempotent: bool = False
    form: bool = False  # accepts multipart/form-data (a FormBody) besides JSON


def dumps(body: Any) -> bytes:
    return compact_bytes(body)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(body), status, headers=headers, media_type=JSON_TYPE)


_JSON_TYPE = JSON_TYPE.encode()


# Header names as they go out, by the name given: the same dozen on every answer (rate limit, quota).
_NAMES: dict[str, bytes] = {}


def _name(name: str) -> bytes:
    encoded = name.lower().encode("latin-1")
    if len(_NAMES) < 256:
        _NAMES[name] = encoded
    return encoded


async def send_json(send: Send, status: int, body: bytes, headers: dict[str, str]) -> None:
    """A JSON answer straight to ASGI, headers as `json_response` orders them (given ones first)."""
    raw = [(_NAMES.get(name) or _name(name), value.encode("latin-1")) for name, value in headers.items()]
    raw += [(b"content-length", str(len(body)).encode()), (b"content-type", _JSON_TYPE)]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def error_response(error: ApiError) -> Response:
    return json_response(error.body(), error.status, error.headers)




def emulator_of(request: Request) -> Emulator:
    """The running emulator, for routes outside the API pipeline (control plane, UI, downloads)."""
    return request.app.state.emu  # type: ignore[no-any-return]
