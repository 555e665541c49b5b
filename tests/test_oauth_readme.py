"""The OAuth example of docs/oauth.md runs as printed against a real `python -m emulator` process."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import running_cli

OAUTH_PAGE = Path(__file__).resolve().parent.parent / "docs" / "oauth.md"


def test_the_readme_oauth_example_runs() -> None:
    match = re.search(r"```python\n(.*?)```", OAUTH_PAGE.read_text(), re.S)
    assert match is not None
    with running_cli() as url:
        result = subprocess.run([sys.executable, "-c", match.group(1).replace("http://127.0.0.1:2580", url)],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert ast.literal_eval(result.stdout.strip()) == {"object": "list", "has_more": False, "data": []}
