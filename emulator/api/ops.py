"""What a Resend API operation is (Op), what its handler receives (ApiRequest) and returns (Reply, JSON)."""

from __future__ import annotations

import base64
import quopri
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from emulator.api.auth import Credential
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


class FormField(NamedTuple):
    data: bytes
    filename: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8-sig", errors="replace")


@dataclass
class FormBody:
    """A `multipart/form-data` request body (contact imports upload their CSV this way)."""

    fields: dict[str, FormField]

    @classmethod
    def parse(cls, content_type: str, raw: bytes) -> FormBody:
        """The parts between the boundary delimiters (RFC 2046 §5.1.1), cut with bytes operations: the
        email package's parser took 0.13 s of the event loop for a 4 MB CSV upload (issue 27). Only the
        small header block of each part goes through it."""
        # Here, not at the top: the email package's header registry is ~3 ms of every start (issue 28).
        import email.message
        import email.parser
        import email.policy

        declared = email.message.EmailMessage(policy=email.policy.HTTP)
        declared["Content-Type"] = content_type
        boundary = declared.get_boundary()
        delimiter = f"--{boundary}".encode()
        # Lines end with CRLF as the RFC says; a client that ends them with LF alone is understood too.
        newline = b"\r\n" if raw.startswith(delimiter + b"\r\n") or b"\r\n" + delimiter in raw else b"\n"
        sections = (newline + raw).split(newline + delimiter) if boundary else []
        parts = sections[1:]
        if parts and parts[-1].startswith(b"--"):
            parts.pop()  # the closing delimiter and the epilogue
        elif parts:
            parts[-1] = parts[-1].removesuffix(newline)  # no closing delimiter: the body ends the last part
        if not parts:
            raise ApiError(errors.MALFORMED_BODY, "The request body is not valid multipart/form-data.")
        headers = email.parser.BytesHeaderParser(policy=email.policy.HTTP)
        fields: dict[str, FormField] = {}
        for section in parts:
            head, _, body = section.partition(newline * 2)
            part = headers.parsebytes(head.lstrip(b" \t\r\n"))
            name = part.get_param("name", header="content-disposition")
            if isinstance(name, str):
                fields[name] = FormField(_decoded(body, part.get("content-transfer-encoding", "")),
                                         part.get_filename())
        return cls(fields)


def _decoded(body: bytes, encoding: str) -> bytes:
    """A part's bytes under its (rare, RFC 7578 deprecates it) Content-Transfer-Encoding."""
    kind = encoding.strip().lower()
    try:
        if kind == "base64":
            return base64.b64decode(body)
        if kind == "quoted-printable":
            return quopri.decodestring(body)
    except ValueError:
        raise ApiError(errors.MALFORMED_BODY, "The request body is not valid multipart/form-data.") from None
    return body


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
