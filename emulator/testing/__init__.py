"""Handles for test suites: `EmulatorServer` (start one in a thread), `EmulatorClient` (drive its control
plane), `WebhookReceiver` (a real local endpoint) and the pytest plugin (`emulator.testing.plugin`)."""

from __future__ import annotations

from emulator.testing.receiver import WebhookReceiver
from emulator.testing.server import EmulatorClient, EmulatorError, EmulatorServer

__all__ = ["EmulatorClient", "EmulatorError", "EmulatorServer", "WebhookReceiver"]
