"""pytest fixtures for suites that test code sending mail through Resend (see README, "Testing with pytest").

Installing the package registers this plugin (`pytest11` entry point). One emulator runs per test
session — per worker under pytest-xdist, each on its own free ports — and every test that asks for
`resend_emulator` starts from the same baseline state (a restore of about a millisecond, not a restart).

Override these fixtures in a conftest.py to configure it:

    resend_emulator_settings   dict of `Settings` fields, e.g. {"clock": "frozen", "isolate_keys": True}
    resend_emulator_seed       a scenario loaded once at start: bundled name, JSON path, or dict
    resend_emulator_autoenv    True (default): each test runs with RESEND_API_URL / RESEND_BASE_URL /
                               RESEND_API_KEY set, and an imported `resend` module pointed here

Where the emulator runs (`resend_emulator_shape`, an ini option, or `--resend-emulator-shape` on the
command line, which wins):

    thread (default)   a thread of the pytest process (`EmulatorServer`): `emu` and `call()` give
                       in-process access to the live emulator.
    process            a child process, spawned as the plugin registers so that its start overlaps
                       pytest's own (ended at once if no collected test needs it); it does not share the
                       GIL with the code under test, and dies with the pytest process, even one killed
                       with SIGKILL. The fixture is an `EmulatorClient` (`emulator.testing.process.
                       ChildEmulator`): everything but `emu` and `call()`. Resets are begun as a test ends.

Measured on a quiet 2-core machine (issue 40, benchmarks/bench_suite.py and bench_plugin.py): a 200-test
suite of SDK sends took 0.84x the thread's time in a process (0.80-0.90 over five alternated rounds), a
one-test run 1.47x bare pytest in a process against 1.32x in the thread (the child's imports outlast
pytest's own start). The thread stays the default: it is faster for the short runs of a change being
written, keeps `emu` and `call()`, and spawns nothing in a pytest run that does not ask; a long suite
picks the process.

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
LISTING_OPTIONS = ("collectonly", "showfixtures", "show_fixtures_per_test", "markers", "help")
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
        help="where the `resend_emulator` fixture's emulator runs: a thread of the pytest process "
             "(default) or a child process (overrides the ini option)")
    parser.addini("resend_emulator_shape", "where the `resend_emulator` fixture's emulator runs: "
                  "`thread` (default) or `process`", default="thread")
    _spawn_at_registration(pluginmanager)


def _shape(config: pytest.Config, option: Any = None) -> str:
    chosen = getattr(option or config.option, "resend_emulator_shape", None)
    shape = chosen or config.getini("resend_emulator_shape")
    if shape not in SHAPES:
        raise pytest.UsageError(f"resend_emulator_shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    return str(shape)


def _spawn_at_registration(pluginmanager: pytest.PytestPluginManager) -> None:
    """Shape `process`: the emulator's process starts as the plugin registers, the earliest a pytest
    plugin runs, so its start (~0.25 s, mostly imports) overlaps pytest loading its other plugins, the
    conftests and collection. The command line is not parsed yet: only what it plainly says counts
    here; `pytest_configure` ends the process if the options want none (an xdist controller, a
    listing), as does `pytest_collection_finish` when no collected test needs it."""
    config = pluginmanager.get_plugin("pytestconfig")
    if not isinstance(config, pytest.Config) or _CHILD in config.stash:
        return
    words = [str(arg) for arg in config.invocation_params.args]
    shape = str(config.getini("resend_emulator_shape"))
    for index, word in enumerate(words):  # the command line wins, as `_shape` reads it later
        if word.startswith("--resend-emulator-shape="):
            shape = word.partition("=")[2]
        elif word == "--resend-emulator-shape" and index + 1 < len(words):
            shape = words[index + 1]
    said = " ".join(words)
    if shape != "process" or "-n" in words or "--numprocesses" in said:
        return
    if any(word in said for word in ("--collect-only", "--co", "--fixtures", "--markers", "--help")):
        return
    config.stash[_CHILD] = _spawn()


def _spawn_early(config: pytest.Config, option: Any) -> None:
    """Spawn the emulator's process now (shape `process`), unless this process runs no test."""
    child, wanted = config.stash.get(_CHILD, None), _wanted(config, option)
    if child is None and wanted:
        config.stash[_CHILD] = _spawn()
    elif child is not None and not wanted:
        config.stash[_CHILD] = None
        _end(child)


def _wanted(config: pytest.Config, option: Any) -> bool:
    controller = getattr(option, "numprocesses", None) and not hasattr(config, "workerinput")
    listing = any(getattr(option, name, False) for name in LISTING_OPTIONS)
    # An xdist controller runs no test (each worker spawns its own); a listing runs none.
    return not controller and not listing and _shape(config, option) == "process"


def pytest_collection_finish(session: pytest.Session) -> None:
    """No collected test needs the emulator: its process goes now, likely before it has even started."""
    child = session.config.stash.get(_CHILD, None)
    if child is not None and not any("resend_emulator_server" in getattr(item, "fixturenames", ())
                                     for item in session.items):
        session.config.stash[_CHILD] = None
        _end(child)


def _end(child: subprocess.Popen[bytes]) -> None:
    child.terminate()  # nothing of it is worth keeping: it has served nothing
    child.wait(10)
    for pipe in (child.stdin, child.stdout):
        if pipe is not None:
            pipe.close()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A reset begun as the previous test ended is over before this test's setup starts, whether or
    not this test asks for `resend_emulator`: no test runs beside a restore."""
    handle = item.config.stash.get(_HANDLE, None)
    if handle is not None:
        item.stash[_FRESH] = handle.settle()


def _spawn() -> subprocess.Popen[bytes]:
    # `emulator.testing.process.spawn`, without importing the handle's modules (~35 ms) at registration.
    import subprocess

    return subprocess.Popen([sys.executable, "-m", "emulator.testing.process"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def pytest_configure(config: pytest.Config) -> None:
    """From here to `pytest_unconfigure` resend.com names do not resolve in this process."""
    _spawn_early(config, config.option)  # an xdist worker (its options arrive after the early hook)
    if config.getoption("resend_allow_real_api", default=False):
        return
    from emulator.testing.hermetic import install

    config.stash[_GUARD] = install(_fail_test)


def pytest_unconfigure(config: pytest.Config) -> None:
    child = config.stash.get(_CHILD, None)
    if child is not None:  # spawned and never asked for (the session failed before its tests, say)
        config.stash[_CHILD] = None
        _end(child)
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
    # (the same as emulator.testing.process.DEFAULTS with no settings: not imported here for the thread)
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
