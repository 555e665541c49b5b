"""Helpers for the template tests: the SDK pointed at a server, sample bodies (servers: EmulatorServer)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import resend

from tests.conftest import KEY

ORDER_HTML = "<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p>"
ORDER_TEXT = "Name: {{{PRODUCT}}}\nTotal: {{{PRICE}}}"
T0 = "2026-05-14 09:00:00+00"  # the frozen clock of tests/conftest.py, as templates print it


def order_template(**overrides: Any) -> dict[str, Any]:
    """The docs' `order-confirmation` example (templates.md §3)."""
    body: dict[str, Any] = {
        "name": "order-confirmation", "alias": "order-confirmation",
        "from": "Acme Store <store@mail.acme.dev>", "subject": "Thanks for your order!",
        "html": ORDER_HTML, "text": ORDER_TEXT,
        "variables": [{"key": "PRODUCT", "type": "string", "fallback_value": "item"},
                      {"key": "PRICE", "type": "number", "fallback_value": 25}],
    }
    body.update(overrides)
    return body


@contextmanager
def sdk_against(url: str, key: str = KEY) -> Iterator[None]:
    """Point the module-global `resend` SDK configuration at `url` for the duration of the block."""
    saved = (resend.api_url, resend.api_key)
    resend.api_url, resend.api_key = url, key
    try:
        yield
    finally:
        resend.api_url, resend.api_key = saved


def plain(response: Any) -> Any:
    """An SDK response as the wire body: the SDK adds `http_headers` to every dict client-side."""
    if isinstance(response, dict):
        return {key: plain(value) for key, value in response.items() if key != "http_headers"}
    if isinstance(response, list):
        return [plain(item) for item in response]
    return response
