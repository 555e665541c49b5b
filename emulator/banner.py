"""The start-up banner: where the emulator listens, its keys, and what a user must know before the first
request (in text, or one JSON object with --log-format json)."""

from __future__ import annotations

import os
from typing import Any

from emulator import __version__
from emulator.core.accounts import redacted_key
from emulator.core.stdout import JSON, json_line, say


def print_banner(emu: Any) -> None:
    if emu.settings.log_format == JSON:
        json_line("start", **start_fields(emu))
        return
    lines = [f"resend-emulator listening on {emu.state['http_url']}"]
    for name, port in emu.state.get("smtp_ports", {}).items():
        lines.append(f"  {name} on {emu.settings.host}:{port}")
    lines.append(f"  API key: {', '.join(emu.settings.provisioned_keys)}")
    if emu.settings.https:
        lines.append(f"  HTTPS with {emu.settings.tls_cert or 'the self-signed certificate'}"
                     " (its PEM: GET /_emulator/smtp, field certificate)")
    if emu.settings.isolate_keys:
        lines.append("  --isolate-keys: any other well-formed key (re_ then letters, digits or _) works too,"
                     " each its own account")
    if emu.settings.ui_sign_in:
        lines.append("  web UI: sign in with an API key (required on a team host): each key sees its mail")
    if "scenario_summary" in emu.state:
        lines.append(f"  {emu.state['scenario_summary']}")
    if emu.settings.ui_auth_file:
        lines.append(f"  UI and control plane: sign in as a user of {emu.settings.ui_auth_file}")
    lines.append(f"  outbox UI: {emu.state['http_url']}/_emulator/ui/")
    say("\n".join(lines) + "\n")


def start_fields(emu: Any) -> dict[str, Any]:
    """The banner as JSON fields: where everything listens, and the keys only redacted (a log collector
    keeps what it is given, and a key in it would let any reader send as the team)."""
    url = emu.state["http_url"]
    return {"version": __version__, "url": url, "ui_url": f"{url}/_emulator/ui/",
            "smtp": {name: f"{emu.settings.host}:{port}"
                     for name, port in emu.state.get("smtp_ports", {}).items()},
            "api_keys": [redacted_key(key) for key in emu.settings.provisioned_keys],
            "isolate_keys": emu.settings.isolate_keys, "ui_sign_in": emu.settings.ui_sign_in,
            "ui_auth_file": emu.settings.ui_auth_file, "scenario": emu.state.get("scenario_summary"),
            "db": emu.settings.db, "pid": os.getpid()}
