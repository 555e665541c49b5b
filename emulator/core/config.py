"""Settings: one dataclass, filled from the command line and the environment (see cli.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

DEFAULT_API_KEY = "re_emulator_default_key"
DEFAULT_ACCOUNT = "default"


class StartupError(Exception):
    """A setting the emulator cannot start with. Its text is the one line the command prints: the flag,
    its value, what is wrong and what to do. A wrong argument exits 2 (as argparse's usage errors do);
    a machine that refuses a sound one (a port in use, a permission) exits 1."""

    def __init__(self, flag: str, value: object, problem: str, advice: str, *, usage: bool = True) -> None:
        super().__init__(f"{flag} {value}: {problem} ({advice})")
        self.flag = flag
        self.exit_code = 2 if usage else 1


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = 2580
    smtp: bool = True
    smtp_port: int = 2587
    smtps_port: int = 2465
    smtp_auth_plaintext: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    # Serve the HTTP port (API and UI) over TLS, with --tls-cert/--tls-key or the self-signed certificate.
    https: bool = False
    db: str = ":memory:"
    seed: int = 0
    api_keys: list[str] = field(default_factory=list)
    clock: str = "real"
    clock_start: datetime | None = None
    strict_domains: bool = False
    rate_limit: int = 0
    # Refuse sends past this many emails a UTC day / month of the account (0: no limit; core/quota.py).
    daily_quota: int = 0
    monthly_quota: int = 0
    isolate_keys: bool = False
    # The web UI shows mail only after a sign-in with an API key (web/signin.py): --isolate-keys on a
    # team host. cli.parse_settings computes it; offered (not required) wherever keys are isolated.
    ui_sign_in: bool = False
    seed_file: str | None = None
    restore: str | None = None
    max_body_bytes: int = 50 * 1024 * 1024
    # Where POST /_emulator/snapshot/{save,restore} may read and write (None: anywhere the body says).
    snapshot_dir: str | None = None
    # Retention: keep at most this many sent (and received) emails; drop mail older than this many
    # seconds on the emulator clock (0: no limit).
    max_emails: int = 0
    max_age: float = 0.0
    quiet: bool = False
    # One stdout line per HTTP request (method, path, status, ms); off by default.
    log_requests: bool = False
    # `text` (the banner, `-v` lines) or `json` (one object a line: every request unless quiet, and
    # lifecycle events; core/stdout.py).
    log_format: str = "text"
    # Host names besides the bound host and the loopback names that may reach the server (`*`: any).
    allowed_hosts: list[str] = field(default_factory=list)
    # `HOST:PORT` of a spamd whose score the QA checks show (None: the spam check says how to enable it).
    spamassassin: str | None = None
    # An htpasswd file whose users alone may open the web UI and the control plane (None: no sign-in).
    ui_auth_file: str | None = None
    # Listening beyond loopback without `ui_auth_file` was asked for knowingly (--no-ui-auth).
    no_ui_auth: bool = False
    # The outbox's on-demand link check (control/qa/probe.py) and release to an SMTP server
    # (control/release.py) make outgoing connections: True/False as the flags say, None to decide by
    # --host (on for loopback, off elsewhere: a team host must not become a request proxy or mail relay).
    link_check: bool | None = None
    release: bool | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.https else "http"

    @property
    def provisioned_keys(self) -> list[str]:
        return self.api_keys or [DEFAULT_API_KEY]
