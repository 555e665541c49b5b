"""The control plane driven from Node with plain fetch, as the README's Node recipe does: the CLI in the
background, a fresh key per run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

NODE = shutil.which("node")
pytestmark = pytest.mark.node

SCRIPT = r"""
const BASE = process.argv[1];
const key = `re_test_${process.pid}_node`;  // a fresh key is a fresh, empty account (--isolate-keys)
const call = (method, path, body, auth) => fetch(BASE + path, {
  method,
  headers: { "content-type": "application/json", ...(auth ? { authorization: `Bearer ${key}` } : {}) },
  body: body && JSON.stringify(body),
});
const mail = { from: "hello@acme.dev", to: "ada@lovelace.dev", subject: "Hi", html: "<p>Hi</p>" };
(async () => {
  const health = await (await call("GET", "/_emulator/health")).json();
  await call("POST", "/_emulator/faults",
             { method: "POST", path: "/emails", error: "rate_limit_exceeded", times: 1, api_key: key });
  const refused = await call("POST", "/emails", mail, true);
  const refusedBody = await refused.json();
  const sent = await (await call("POST", "/emails", mail, true)).json();
  const waited = await (await call("GET",
    `/_emulator/outbox/wait?api_key=${key}&to=ada@lovelace.dev&timeout=5`)).json();
  const others = await (await call("GET", "/_emulator/outbox?api_key=re_someone_else")).json();
  console.log(JSON.stringify({
    health: health.status, refused: refused.status, name: refusedBody.name,
    retryAfter: refused.headers.get("retry-after"), fault: refused.headers.get("x-emulator-fault"),
    same: waited.id === sent.id, others: others.data.length,
  }));
})().catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.fixture
def cli_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--isolate-keys", "--clock", "frozen"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("resend-emulator listening on "):
                yield line.split()[-1]
                break
        else:
            pytest.fail("the CLI did not print its URL")
    finally:
        process.terminate()
        process.wait(30)


def test_node_drives_the_cli_through_the_control_plane(cli_url: str) -> None:
    assert NODE is not None
    run = subprocess.run([NODE, "-e", SCRIPT, cli_url], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        '{"health":"ok","refused":429,"name":"rate_limit_exceeded","retryAfter":"1",'
        '"fault":"fault_1","same":true,"others":0}'
    )
