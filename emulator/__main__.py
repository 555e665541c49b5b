"""`python -m emulator` and the `resend-emulator` script (pyproject.toml names `main` here)."""

import gc

# No garbage collection from the very first import on: `emulator.cli` and asyncio allocate a great deal
# and free nothing, and those passes were ~4 ms of CPU before the first answer (issue 40). The emulator
# turns it on again once ready (cli.tune_for_serving).
gc.disable()

from emulator.cli import main  # noqa: E402

__all__ = ["main"]

if __name__ == "__main__":
    main()
