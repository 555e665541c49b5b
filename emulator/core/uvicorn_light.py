"""uvicorn's server and config without its command line: what the emulator runs, imported alone."""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any


def import_server_only() -> None:
    """Import uvicorn's server and config, not yet its command line and reloaders.

    uvicorn's package `__init__` imports its `main` module, and with it click, multiprocessing and
    watchfiles: ~15 ms of a start (issue 28: a test session's; issue 40: the command line's, ~10 ms of
    spawn → first send) for parts the emulator never runs. So the package module is made without
    running its `__init__`, the server's own modules are imported into it, and the first name asked of
    it that they did not provide (`uvicorn.run`, `uvicorn.main`, `__version__`, ...) runs the `__init__`
    then, as a plain import would have: code of the test suite's own that uses uvicorn sees the whole
    package.
    """
    if "uvicorn" in sys.modules:
        return
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None:
        return  # not installed: the import below says so
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)
    lock = threading.Lock()

    def complete(name: str) -> Any:  # PEP 562: called only for names the module does not hold
        with lock:
            if package.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(package)
        return getattr(package, name)

    # In place before the module is visible: another thread that imports uvicorn meanwhile gets it whole.
    vars(package)["__getattr__"] = complete
    sys.modules["uvicorn"] = package
    try:
        from uvicorn.config import Config
        from uvicorn.server import Server
    except BaseException:
        del sys.modules["uvicorn"]
        raise
    # Config and Server: the names uvicorn's own modules import from the package.
    vars(package).update(Config=Config, Server=Server)
