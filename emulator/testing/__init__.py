"""Handles for test suites: `EmulatorServer` (start one in a thread), `EmulatorClient` (drive its control
plane), `WebhookReceiver` (a real local endpoint) and the pytest plugin (`emulator.testing.plugin`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.testing.server import EmulatorClient, EmulatorError, EmulatorServer

if TYPE_CHECKING:
    from emulator.testing.receiver import WebhookReceiver

__all__ = ["EmulatorClient", "EmulatorError", "EmulatorServer", "WebhookReceiver"]


def __getattr__(name: str) -> Any:
    # The receiver pulls in http.server; most suites never use it, so it loads on first mention.
    if name == "WebhookReceiver":
        from emulator.testing.receiver import WebhookReceiver

        return WebhookReceiver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
