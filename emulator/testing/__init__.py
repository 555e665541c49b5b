"""Handles for test suites: `EmulatorServer` (start one in a thread), `EmulatorClient` (drive its control
plane), `WebhookReceiver` (a real local endpoint) and the pytest plugin (`emulator.testing.plugin`)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.testing.receiver import WebhookReceiver
    from emulator.testing.server import EmulatorClient, EmulatorError, EmulatorServer

__all__ = ["EmulatorClient", "EmulatorError", "EmulatorServer", "WebhookReceiver"]


# Each name loads on first mention: the pytest plugin lives in this package, and a suite whose tests
# never ask for the emulator should not pay for importing it (issue 18, startup).
_HOMES = {"EmulatorClient": "server", "EmulatorError": "server", "EmulatorServer": "server",
          "WebhookReceiver": "receiver"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
