"""pytest fixtures for suites that test code sending mail through Resend (see README, "Testing with pytest").

Installing the package registers this plugin (`pytest11` entry point). One emulator runs per test
session — per worker under pytest-xdist, each on its own free ports — and every test that asks for
`resend_emulator` starts from the same baseline state (a sub-millisecond restore, not a restart).

Override these fixtures in a conftest.py to configure it:

    resend_emulator_settings   dict of `Settings` fields, e.g. {"clock": "frozen", "isolate_keys": True}
    resend_emulator_seed       a scenario loaded once at start: bundled name, JSON path, or dict
    resend_emulator_autoenv    True (default): each test runs with RESEND_API_URL / RESEND_BASE_URL /
                               RESEND_API_KEY set, and an imported `resend` module pointed here

Where the emulator runs (`resend_emulator_shape`, an ini option, or `--resend-emulator-shape` on the
command line, which wins):

    process (default)  a child process, spawned as soon as collection meets the first test that needs it,
                       so its start overlaps the rest of collection; it uses a core of its own instead of
                       sharing the GIL with the code under test (a 200-test suite of SDK sends ran in
                       ~0.6x the time of the thread shape, benchmarks/bench_suite.py). It dies with the
                       pytest process, even one killed with SIGKILL. The fixture is an `EmulatorClient`
                       (`ChildEmulator`): everything but `emu` and `call()`.
    thread             a thread of the pytest process (`EmulatorServer`): `emu` and `call()` give
                       in-process access to the live emulator.

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
    import subprocess

    from emulator.testing.hermetic import Guard
    from emulator.testing.process import ChildEmulator
    from emulator.testing.receiver import WebhookReceiver
    from emulator.testing.server import EmulatorServer

PACKAGE = __name__.partition(".")[0]
ALLOW_REAL_API = "--resend-allow-real-api"
SHAPES = ("process", "thread")
_GUARD: pytest.StashKey[Guard] = pytest.StashKey()
_CHILD: pytest.StashKey[subprocess.Popen[bytes] | None] = pytest.StashKey()
_HANDLE: pytest.StashKey[ChildEmulator] = pytest.StashKey()
_FRESH: pytest.StashKey[bool] = pytest.StashKey()  # a reset ended just before this test's setup


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Called as the plugin registers, before any conftest or test module is imported."""
    _rewrite_this_module_only(pluginmanager)
    parser.getgroup("resend-emulator").addoption(
        ALLOW_REAL_API, action="store_true", default=False, dest="resend_allow_real_api",
        help="let tests reach the real Resend API (api.resend.com and any other resend.com name); "
             "without it such a request fails the test before any DNS lookup or connection")
    parser.getgroup("resend-emulator").addoption(
        "--resend-emulator-shape", choices=SHAPES, default=None, dest="resend_emulator_shape",
        help="where the `resend_emulator` fixture's emulator runs: a child process (default) or a "
             "thread of the pytest process (overrides the ini option)")
    parser.addini("resend_emulator_shape", "where the `resend_emulator` fixture's emulator runs: "
                  "`process` (default) or `thread`", default="process")


def _shape(config: pytest.Config) -> str:
    shape = config.getoption("resend_emulator_shape", default=None) or config.getini("resend_emulator_shape")
    if shape not in SHAPES:
        raise pytest.UsageError(f"resend_emulator_shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    return str(shape)


def pytest_itemcollected(item: pytest.Item) -> None:
    """The first collected test that needs the emulator spawns its process (shape `process`): it starts
    while the rest of the suite is collected, on the other core."""
    if "resend_emulator_server" in getattr(item, "fixturenames", ()) and _CHILD not in item.config.stash:
        item.config.stash[_CHILD] = _spawn() if _shape(item.config) == "process" else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A reset begun as the previous test ended is over before this test's setup starts, whether or
    not this test asks for `resend_emulator`: no test runs beside a restore."""
    handle = item.config.stash.get(_HANDLE, None)
    if handle is not None:
        item.stash[_FRESH] = handle.settle()


def _spawn() -> subprocess.Popen[bytes]:
    from emulator.testing.process import spawn

    return spawn()


def pytest_configure(config: pytest.Config) -> None:
    """From here to `pytest_unconfigure` resend.com names do not resolve in this process."""
    if config.getoption("resend_allow_real_api", default=False):
        return
    from emulator.testing.hermetic import install

    config.stash[_GUARD] = install(_fail_test)


def pytest_unconfigure(config: pytest.Config) -> None:
    child = config.stash.get(_CHILD, None)
    if child is not None:  # spawned, never asked for (deselected tests, say): the closed pipe ends it
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
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
                           pytestconfig: pytest.Config) -> Iterator[EmulatorServer | ChildEmulator]:
    """The session's emulator, started before the first test that needs it; stopped at the end."""
    overrides = {"port": 0, "smtp_port": 0, "smtps_port": 0, "quiet": True, **resend_emulator_settings}
    server: EmulatorServer | ChildEmulator
    if _shape(pytestconfig) == "process":
        from emulator.testing.process import ChildEmulator

        child = pytestconfig.stash.get(_CHILD, None) or _spawn()
        pytestconfig.stash[_CHILD] = None  # the handle owns it now
        server = ChildEmulator(child, **overrides)
        try:
            server.start()
        except BaseException:
            server.stop()
            raise
        pytestconfig.stash[_HANDLE] = server
    else:
        with _no_collections(), _rewrite_hook_aside(pytestconfig.pluginmanager):
            from emulator.testing.server import EmulatorServer

            server = EmulatorServer(**overrides).start()
    try:
        if resend_emulator_seed is not None:
            server.load_scenario(resend_emulator_seed)
            server.mark_baseline()
        yield server
    finally:
        if _HANDLE in pytestconfig.stash:
            del pytestconfig.stash[_HANDLE]
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
def resend_emulator(resend_emulator_server: EmulatorServer | ChildEmulator, resend_emulator_autoenv: bool,
                    request: pytest.FixtureRequest) -> Iterator[EmulatorServer | ChildEmulator]:
    """The emulator, reset to the session baseline for this test: `url`, `api_key`, `smtp_host`,
    `smtp_port`, `outbox`, `clock`, `faults`, `webhooks`, `reset()`, `env()`, `patch_env()`."""
    server = resend_emulator_server
    # In a child process the reset is begun as a test ends and awaited before the next one's setup
    # (`pytest_runtest_setup`): the restore (~1 ms) runs while pytest reports and moves on.
    if not request.node.stash.get(_FRESH, False):
        server.reset()
    try:
        if not resend_emulator_autoenv:
            yield server
        else:
            with server.patch_env():
                yield server
    finally:
        begin_reset = getattr(server, "begin_reset", None)  # a child's (the thread's runs at setup)
        if begin_reset is not None:
            begin_reset()


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
