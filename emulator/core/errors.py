"""The error catalogue (reference/00-general.md §3) and the one exception every layer raises."""

from __future__ import annotations

from typing import Any, NamedTuple


class ErrorKind(NamedTuple):
    status: int
    name: str
    message: str
    oauth: bool = False  # serialised in the OAuth shape `{error, error_description}` (00-general §3.2)


def _kind(status: int, name: str, message: str) -> ErrorKind:
    return ErrorKind(status, name, message)


def _oauth(status: int, error: str, description: str) -> ErrorKind:
    return ErrorKind(status, error, description, oauth=True)


# Documented messages, word for word where the reference gives them.
INVALID_IDEMPOTENCY_KEY = _kind(
    400, "invalid_idempotency_key",
    "Idempotency keys, if present, must have between 1 and 256 characters.",
)
MALFORMED_BODY = _kind(
    400, "validation_error", "An error was found with one or more fields in the request."
)
MISSING_API_KEY = _kind(401, "missing_api_key", "Missing API key in the authorization header.")
RESTRICTED_API_KEY = _kind(
    401, "restricted_api_key", "This API key is restricted to only send emails."
)
# The emulator's own, not Resend's: the UI or control plane without a user of --ui-auth-file (issue 38).
# One entry for a missing header, an unknown user and a wrong password alike: the answer tells nothing.
UI_AUTH_REQUIRED = _kind(
    401, "ui_auth_required",
    "Sign in with a user name and password from --ui-auth-file to use the web UI and the control plane.",
)
INVALID_API_KEY = _kind(403, "invalid_api_key", "API key is invalid")
# The emulator's own, not Resend's: a control-plane or UI request that no page of this UI made.
CROSS_SITE_REQUEST = _kind(403, "cross_site_request", "The control plane refuses requests from other sites.")
# The emulator's own: a web UI request (its live rows, stream, frames) without a sign-in where one is
# required (--isolate-keys on a team host; web/signin.py).
SIGN_IN_REQUIRED = _kind(401, "sign_in_required",
                         "Sign in with an API key at /_emulator/ui/sign-in to use the web UI.")
INACTIVE_API_KEY = _kind(403, "restricted_api_key", "API key is not active")
SUSPENDED_API_KEY = _kind(403, "suspended_api_key", "This API key is suspended")
INVALID_PERMISSION = _kind(403, "invalid_permission", "Access token is missing required scopes.")
EMAIL_ABOVE_QUOTA = _kind(
    403, "email_above_quota",
    "You can't retrieve this email's content because it was above quota when received.",
)
FORBIDDEN = _kind(403, "validation_error", "You are not allowed to perform this action.")
NOT_FOUND = _kind(404, "not_found", "The requested endpoint does not exist.")
METHOD_NOT_ALLOWED = _kind(405, "method_not_allowed", "Method is not allowed for the requested path.")
CONCURRENT_IDEMPOTENT_REQUESTS = _kind(
    409, "concurrent_idempotent_requests",
    "There is another request in progress with the same idempotency key.",
)
INVALID_IDEMPOTENT_REQUEST = _kind(
    409, "invalid_idempotent_request",
    "This idempotency key has been used with this HTTP method and endpoint within the last 24 hours,"
    " but the request body was modified and doesn't match the original request.",
)
# [recommendation] Inboxes answer 409 for a used address and a draft sent twice (reference/inboxes.md);
# the name is undocumented.
CONFLICT = _kind(409, "conflict", "The request conflicts with the current state of the resource.")
RESOURCE_LOCKED = _kind(409, "resource_locked", "Another request is already updating this resource.")
# Not in Resend's catalogue: the real edge answers oversize bodies itself. We keep the Resend shape so
# SDKs still parse it; 413 is the status any HTTP client expects for this condition.
PAYLOAD_TOO_LARGE = _kind(413, "validation_error", "The request body is too large.")
INVALID_ATTACHMENT = _kind(422, "invalid_attachment", "Attachment must have either a `content` or `path`.")
INVALID_PARAMETER = _kind(422, "invalid_parameter", "The `parameter` must be a valid UUID.")
MISSING_REQUIRED_FIELD = _kind(
    422, "missing_required_field", "The request body is missing one or more required fields."
)
MISSING_REQUIRED_PARAMETER = _kind(
    422, "missing_required_parameter", "The request is missing one or more required parameters."
)
VALIDATION_ERROR = _kind(
    422, "validation_error", "An error was found with one or more fields in the request."
)
INVALID_REGION = _kind(422, "invalid_region", "Invalid region.")
INVALID_FROM_ADDRESS = _kind(422, "invalid_from_address", "Invalid `from` field.")
DAILY_QUOTA_EXCEEDED = _kind(429, "daily_quota_exceeded", "You have exceeded your daily email sending quota.")
MONTHLY_QUOTA_EXCEEDED = _kind(
    429, "monthly_quota_exceeded", "You have exceeded your monthly email sending quota."
)
RATE_LIMIT_EXCEEDED = _kind(
    429, "rate_limit_exceeded",
    "Too many requests. Please limit the number of requests per second."
    " Or [contact support](https://resend.com/contact) to increase rate limit.",
)
# Not Resend's: the control plane's long-poll `GET /_emulator/outbox/wait` (emulator/control/outbox.py) saw no
# matching email before its timeout. 408 tells an HTTP client "try again", the body keeps the shape.
WAIT_TIMEOUT = _kind(408, "wait_timeout", "No email matching the filter arrived before the timeout.")
# The emulator's own (issue 39): the link check and release make connections to the outside, off on a
# non-loopback --host unless --link-check / --release (the message names the flag).
OUTBOUND_DISABLED = _kind(403, "outbound_disabled", "Outgoing connections are off on this host.")
# Release to an SMTP server (control/release.py). What the request named and the server refused (the
# credentials, a recipient) is the caller's to fix: 422 like other bad input. What failed between us
# and the server, or a refusal of the message itself, is an upstream failure: 502.
RELEASE_AUTH_FAILED = _kind(422, "release_auth_failed", "The SMTP server refused the credentials.")
RELEASE_RECIPIENTS_REFUSED = _kind(422, "release_recipients_refused",
                                   "The SMTP server refused the recipients.")
RELEASE_CONNECTION_FAILED = _kind(502, "release_connection_failed", "Could not reach the SMTP server.")
RELEASE_FAILED = _kind(502, "release_failed", "The SMTP server did not accept the message.")
APPLICATION_ERROR = _kind(500, "application_error", "An unexpected error occurred.")
SERVICE_UNAVAILABLE = _kind(503, "service_unavailable", "API is temporarily unavailable")


# The OAuth protocol endpoints (/oauth/register, /authorize, /token, /revoke): seed §7.2, reference oauth.md.
# Statuses where the reference leaves them open are its [rec] ones; each raise names the exact cause.
OAUTH_INVALID_REQUEST = _oauth(
    400, "invalid_request", "The request is missing a required parameter or is malformed."
)
OAUTH_INVALID_CLIENT = _oauth(401, "invalid_client", "Client authentication failed.")
OAUTH_INVALID_GRANT = _oauth(400, "invalid_grant", "The provided grant is invalid, expired or revoked.")
OAUTH_INVALID_SCOPE = _oauth(400, "invalid_scope", "The requested scope is invalid.")
OAUTH_UNAUTHORIZED_CLIENT = _oauth(
    400, "unauthorized_client", "The client is not registered for this grant type."
)
OAUTH_ACCESS_DENIED = _oauth(403, "access_denied", "The resource owner denied the request.")
OAUTH_TOO_MANY_REQUESTS = _oauth(429, "too_many_requests", "Too many client registrations from this address.")
OAUTH_SERVER_ERROR = _oauth(500, "server_error", "The authorization server failed to process the request.")

# Resend's catalogue (what API faults may inject) and the OAuth protocol's, kept apart.
# The outgoing connections' errors are no API's: fault injection cannot pick them (a `{"status": 502}`
# rule still names no Resend error).
_OUTBOUND = (OUTBOUND_DISABLED, RELEASE_AUTH_FAILED, RELEASE_RECIPIENTS_REFUSED, RELEASE_CONNECTION_FAILED,
             RELEASE_FAILED)
CATALOGUE: dict[str, ErrorKind] = {
    name: value for name, value in globals().items()
    if isinstance(value, ErrorKind) and not value.oauth and value not in _OUTBOUND
}
OAUTH_CATALOGUE: dict[str, ErrorKind] = {
    name: value for name, value in globals().items() if isinstance(value, ErrorKind) and value.oauth
}


class ApiError(Exception):
    """Raised anywhere below a handler; serialised once by the app's exception handler."""

    def __init__(self, kind: ErrorKind, message: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message or kind.message)
        self.kind = kind
        self.message = message or kind.message
        self.headers = headers or {}

    @property
    def status(self) -> int:
        return self.kind.status

    def body(self) -> dict[str, Any]:
        if self.kind.oauth:
            return {"error": self.kind.name, "error_description": self.message}
        # Key order as observed on the wire: statusCode, message, name.
        return {"statusCode": self.kind.status, "message": self.message, "name": self.kind.name}


def not_found(resource: str) -> ApiError:
    return ApiError(NOT_FOUND, f"{resource} not found")


def invalid(message: str) -> ApiError:
    return ApiError(VALIDATION_ERROR, message)


def missing_field(field: str) -> ApiError:
    return ApiError(MISSING_REQUIRED_FIELD, f"Missing `{field}` field.")


def find_kind(name: str, status: int) -> ErrorKind | None:
    """The catalogue entry with this wire name and status (used by fault injection)."""
    for kind in CATALOGUE.values():
        if kind.name == name and kind.status == status:
            return kind
    return None
