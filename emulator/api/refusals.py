"""One console line when a request's API key is refused (403 invalid_api_key), naming the keys that would
work — redacted (`re_…1234`), as every key the emulator shows. The answer itself stays Resend's.

A quick start that copied another key than the one the banner printed otherwise learns only "API key is
invalid". Each distinct refused key is told once, and only the first few: a client spraying keys must not
flood the console.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from emulator.core.accounts import redacted_key
from emulator.core.stdout import event

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator

MAX_TOLD = 20  # distinct refused keys told about; then one line says the rest are not
MAX_NAMED = 5  # accepted keys named in a line; then "and N more"


def tell_refused(emu: Emulator, token: str, accepted: Callable[[], list[str]]) -> None:
    """Print the line for `token` unless it was told before, too many were, or the console is --quiet."""
    if emu.settings.quiet:
        return
    told: set[str] = emu.state.setdefault("refused_keys_told", set())
    if token in told or len(told) > MAX_TOLD:
        return
    told.add(token)
    if len(told) > MAX_TOLD:
        _tell(emu, f"resend-emulator: more than {MAX_TOLD} different API keys refused; no more are logged")
        return
    _tell(emu, refusal_line(token, accepted(), isolate=emu.settings.isolate_keys))


def _tell(emu: Emulator, line: str) -> None:
    event(emu.settings.log_format, "key_refused", line + "\n", level="warning",
          message=line.removeprefix("resend-emulator: "))


def refusal_line(token: str, accepted: list[str], *, isolate: bool) -> str:
    refused = f"API key {redacted_key(token)}" if token.startswith("re_") \
        else "a key that does not start with re_ (Resend's keys all do)"
    return f"resend-emulator: refused {refused} (403 invalid_api_key); {what_works(accepted, isolate)}"


def what_works(accepted: list[str], isolate: bool) -> str:
    if isolate:
        return ("under --isolate-keys any well-formed key works: re_ then 1 to 128 letters, digits or"
                " underscores")
    if not accepted:
        return "no key is active (start with --api-key KEY to provision one)"
    named = ", ".join(redacted_key(token) for token in accepted[:MAX_NAMED])
    more = f" and {len(accepted) - MAX_NAMED} more" if len(accepted) > MAX_NAMED else ""
    return (f"it accepts {named}{more} (the start-up banner prints the key in full; --api-key KEY"
            " provisions another)")
