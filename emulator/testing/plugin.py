"""pytest fixtures for suites that test code sending mail through Resend (see README, "Testing with pytest").

Installing the package registers this plugin (`pytest11` entry point). One emulator runs per test
session — per worker under pytest-xdist, each on its own free ports — and every test that asks for
`resend_emulator` starts from the same baseline state (a sub-millisecond restore, not a restart).

Override these fixtures in a conftest.py to configure it:

    resend_emulator_settings   dict of `Settings` fields, e.g. {"clock": "frozen", "isolate_keys": True}
    resend_emulator_seed       a scenario loaded once at start: bundled name, JSON path, or dict
    resend_emulator_autoenv    True (default): each test runs with RESEND_API_URL / RESEND_BASE_URL /
                               RESEND_API_KEY set, and an imported `resend` module pointed here

Whatever those say, no test reaches api.resend.com (any resend.com name) while the plugin is active: a
test that tries fails with one sentence saying how to point it here. `--resend-allow-real-api` lifts that.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from emulator.testing.hermetic import Guard
    from emulator.testing.receiver import WebhookReceiver
    from emulator.testing.server import EmulatorServer

PACKAGE = __name__.partition(".")[0]
ALLOW_REAL_API = "--resend-allow-real-api"
_GUARD: pytest.StashKey[Guard] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Called as the plugin registers, before any conftest or test module is imported."""
    _rewrite_this_module_only(pluginmanager)
    parser.getgroup("resend-emulator").addoption(
        ALLOW_REAL_API, action="store_true", default=False, dest="resend_allow_real_api",
        help="let tests reach the real Resend API (api.resend.com and any other resend.com name); "
             "without it such a request fails the test before any DNS lookup or connection")


def pytest_configure(config: pytest.Config) -> None:
    """From here to `pytest_unconfigure` resend.com names do not resolve in this process."""
    if config.getoption("resend_allow_real_api", default=False):
        return
    from emulator.testing.hermetic import install

    config.stash[_GUARD] = install(_fail_test)


def pytest_unconfigure(config: pytest.Config) -> None:
    guard = config.stash.get(_GUARD, None)
    if guard is not None:
        del config.stash[_GUARD]
        guard.uninstall()


def _fail_test(sentence: str) -> NoReturn:
    """`pytest.fail` raises an exception no `except Exception` in an SDK or client wraps or swallows."""
    pytest.fail(sentence, pytrace=False)


def _rewrite_this_module_only(pluginmanager: pytest.PytestPluginManager) -> None:
    """Keep pytest's assertion rewriting to this module, not the whole `emulator` package.

    For a plugin found through a `pytest11` entry point pytest marks every top-level package of its
    distribution for rewriting, so each of the emulator's ~180 modules would be parsed and compiled
    again by pytest's import hook instead of loading from its bytecode cache: ~0.25 s of a first test,
    paid on every run where that cache cannot be written (PYTHONDONTWRITEBYTECODE=1, read-only
    installs). Nothing in `emulator` asserts on a user's behalf, so nothing is lost. pytest has no
    public way to take a mark back; if its private state ever changes shape, this does nothing and
    the package is rewritten as before.
    """
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if not isinstance(marked, set) or PACKAGE not in marked:
        return
    marked.discard(PACKAGE)
    cache = getattr(hook, "_marked_for_rewrite_cache", None)
    if isinstance(cache, dict):
        for name in [name for name in cache if name.partition(".")[0] == PACKAGE]:
            del cache[name]


@pytest.fixture(scope="session")
def resend_emulator_settings() -> dict[str, Any]:
    """`Settings` fields for the session's emulator (override in conftest.py).

    Default: everything as the CLI's defaults, on free ports of 127.0.0.1, quiet.
    """
    return {}


@pytest.fixture(scope="session")
def resend_emulator_seed() -> str | dict[str, Any] | None:
    """A seed scenario loaded once, into the baseline every test starts from (override in conftest.py).

    A bundled name (`"basic"`, `"demo"`), a path to a JSON file, or the scenario as a dict. None: no data
    beyond the configured API keys.
    """
    return None


@pytest.fixture(scope="session")
def resend_emulator_autoenv() -> bool:
    """Whether `resend_emulator` sets the SDK environment variables for each test (default True)."""
    return True


@pytest.fixture(scope="session")
def resend_emulator_server(resend_emulator_settings: dict[str, Any],
                           resend_emulator_seed: str | dict[str, Any] | None,
                           pytestconfig: pytest.Config) -> Iterator[EmulatorServer]:
    """The session's emulator, started before the first test that needs it; stopped at the end."""
    overrides = {"port": 0, "smtp_port": 0, "smtps_port": 0, "quiet": True, **resend_emulator_settings}
    with _no_collections(), _rewrite_hook_aside(pytestconfig.pluginmanager):
        from emulator.testing.server import EmulatorServer

        server = EmulatorServer(**overrides).start()
    try:
        if resend_emulator_seed is not None:
            server.load_scenario(resend_emulator_seed)
            server.mark_baseline()
        yield server
    finally:
        server.stop()


@contextmanager
def _rewrite_hook_aside(pluginmanager: pytest.PytestPluginManager) -> Iterator[None]:
    """pytest's assertion-rewriting import hook out of `sys.meta_path` while the emulator is imported.

    The hook is the first finder asked about every import, and for each of the ~270 modules the
    emulator and its libraries bring it matches names and paths for ~20 µs to answer that this one is
    not for rewriting: ~5 ms of the first test's wait (issue 28). None is: the emulator is off its list
    (`_rewrite_this_module_only`), and test modules and conftests were all imported at collection,
    before any fixture ran. The hook goes back to its place even when the start fails.
    """
    hook = getattr(pluginmanager, "rewrite_hook", None)
    if hook not in sys.meta_path:
        yield
        return
    place = sys.meta_path.index(hook)
    sys.meta_path.remove(hook)
    try:
        yield
    finally:
        sys.meta_path.insert(place, hook)


@contextmanager
def _no_collections() -> Iterator[None]:
    """Cyclic garbage collection paused while the emulator is imported and started.

    Importing makes a few hundred thousand objects that live as long as the process and no garbage,
    so the collections it would trigger, each walking every object pytest and the suite hold, free
    nothing: about 10-30 ms of the first test's wait on a 2-core machine (issue 18). Afterwards they
    go straight to the oldest generation (`freeze` then `unfreeze` moves every tracked object there):
    left in the youngest, the first collection after this would walk them all anyway, ~17 ms of the
    first test's reset (issue 28). They stay collectable by full collections, as any old object.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


@pytest.fixture
def resend_emulator(resend_emulator_server: EmulatorServer, resend_emulator_autoenv: bool,
                    ) -> Iterator[EmulatorServer]:
    """The emulator, reset to the session baseline for this test: `url`, `api_key`, `smtp_host`,
    `smtp_port`, `outbox`, `clock`, `faults`, `webhooks`, `reset()`, `env()`, `patch_env()`."""
    resend_emulator_server.reset()
    if not resend_emulator_autoenv:
        yield resend_emulator_server
        return
    with resend_emulator_server.patch_env():
        yield resend_emulator_server


@pytest.fixture(scope="session")
def _resend_webhook_receiver_session() -> Iterator[WebhookReceiver]:
    from emulator.testing.receiver import WebhookReceiver

    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def resend_webhook_receiver(_resend_webhook_receiver_session: WebhookReceiver) -> WebhookReceiver:
    """A real HTTP endpoint on 127.0.0.1 recording webhook deliveries (`url`, `deliveries`,
    `wait_for(...)`, `verify(delivery, secret)`, `respond_with(status, times)`), empty for each test."""
    _resend_webhook_receiver_session.clear()
    return _resend_webhook_receiver_session
