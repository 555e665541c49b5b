"""`--https`: the HTTP port (API and UI) over TLS, driven through a real `resend-emulator` process with
the official SDK, httpx, smtplib and Chromium, each trusting the certificate the emulator presents."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import signal
import smtplib
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx
import pytest
from cryptography import x509

from emulator.testing import EmulatorServer
from tests.test_cli_startup import one_line, start

KEY = "re_emulator_default_key"
AUTH = {"Authorization": f"Bearer {KEY}"}
COMMAND = str(Path(sys.executable).with_name("resend-emulator"))


class Running(NamedTuple):
    process: subprocess.Popen[str]
    url: str
    banner: list[str]
    stderr: list[str]  # what the process wrote to stderr, once stopped

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)


def banner_of(process: subprocess.Popen[str]) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    while not lines or "outbox UI" not in lines[-1]:
        line = process.stdout.readline()
        assert line, f"ended before its banner: {process.communicate(timeout=30)}"
        lines.append(line.rstrip("\n"))
    return lines


@contextmanager
def emulator(*args: str) -> Iterator[Running]:
    """`resend-emulator --https --port 0 ARGS` as a real process, stopped by its PID with SIGTERM."""
    process = subprocess.Popen([COMMAND, "--https", "--port", "0", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    try:
        lines = banner_of(process)
        yield Running(process, lines[0].split()[-1], lines, stderr)
    finally:
        os.kill(process.pid, signal.SIGTERM)
        try:
            stderr.append(process.communicate(timeout=30)[1])
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.communicate(timeout=30)
            raise


def make_certificate(folder: Path, name: str = "team") -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1 made by `openssl req -x509`, as a team host's admin would."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def presented(port: int) -> str:
    """The PEM certificate the port presents (read without verifying it: this is how one learns it)."""
    return ssl.get_server_certificate(("127.0.0.1", port), timeout=30)


def trusting(pem: str) -> ssl.SSLContext:
    return ssl.create_default_context(cadata=pem)


def send(client: httpx.Client, url: str, **fields: object) -> str:
    body = {"from": "qa@example.com", "to": ["ada@example.com"], "subject": "Over TLS",
            "html": "<p>Hello</p>", **fields}
    response = client.post(f"{url}/emails", json=body, headers=AUTH)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def self_signed() -> Iterator[Running]:
    with emulator("--no-smtp") as running:
        yield running


def test_the_banner_says_https_and_names_the_certificate(self_signed: Running) -> None:
    assert self_signed.banner[0].startswith("resend-emulator listening on https://127.0.0.1:")
    assert f"outbox UI: {self_signed.url}/_emulator/ui/" in self_signed.banner[-1]
    assert any("HTTPS with the self-signed certificate" in line for line in self_signed.banner)
    assert not any("http://" in line for line in self_signed.banner)


def test_the_self_signed_certificate_verifies_for_127_0_0_1_and_is_the_one_it_hands_out(
        self_signed: Running) -> None:
    pem = presented(self_signed.port)
    with httpx.Client(verify=trusting(pem)) as client:
        assert client.get(f"{self_signed.url}/_emulator/health").json()["status"] == "ok"
        assert client.get(f"{self_signed.url}/_emulator/smtp").json()["certificate"].strip() == pem.strip()


def test_urls_the_emulator_builds_say_https(self_signed: Running) -> None:
    with httpx.Client(verify=trusting(presented(self_signed.port))) as client:
        url = self_signed.url
        client.post(f"{url}/domains", json={"name": "acme.dev", "click_tracking": True}, headers=AUTH)
        email = send(client, url, html='<a href="https://example.com/welcome">Start</a>',
                     **{"from": "qa@acme.dev"})
        html = client.get(f"{url}/emails/{email}", headers=AUTH).json()["html"]
        link = re.search(r'href="([^"]+)"', html)
        assert link is not None and link.group(1).startswith(f"{url}/_emulator/t/click/"), html
        assert client.get(link.group(1)).headers["location"] == "https://example.com/welcome"
        metadata = client.get(f"{url}/.well-known/oauth-authorization-server").json()
        assert metadata["issuer"] == url
        endpoints = [value for key, value in metadata.items() if key.endswith("_endpoint")]
        assert endpoints and all(value.startswith(f"{url}/") for value in endpoints), metadata


def test_plain_http_to_the_https_port_is_closed_and_the_server_keeps_answering() -> None:
    with emulator("--no-smtp") as running:
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{running.port}/_emulator/health", timeout=30)
        with socket.create_connection(("127.0.0.1", running.port), timeout=30) as raw:
            raw.sendall(b"GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            with contextlib.suppress(ConnectionResetError):
                assert raw.recv(1024) == b""  # closed: no HTTP answer, and no hang
        with httpx.Client(verify=trusting(presented(running.port))) as client:
            assert client.get(f"{running.url}/_emulator/health").status_code == 200
        assert running.process.poll() is None
    assert running.stderr == [""], "nothing logged: no traceback, no handshake noise"


def old_client(newest: ssl.TLSVersion) -> ssl.SSLContext:
    """A client that offers TLS 1.0 up to `newest` (and ciphers old enough for them)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
    context.minimum_version, context.maximum_version = ssl.TLSVersion.TLSv1, newest
    return context


def handshake(port: int, context: ssl.SSLContext) -> str:
    with (socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
          context.wrap_socket(raw, server_hostname="127.0.0.1") as tls):
        return str(tls.version())


def test_tls_older_than_1_2_is_refused_by_the_server(self_signed: Running) -> None:
    assert handshake(self_signed.port, old_client(ssl.TLSVersion.TLSv1_2)) == "TLSv1.2"
    with pytest.raises(ssl.SSLError) as refused:
        handshake(self_signed.port, old_client(ssl.TLSVersion.TLSv1_1))
    if "NO_PROTOCOLS_AVAILABLE" in str(refused.value):
        pytest.skip("this OpenSSL cannot even offer TLS 1.1, so the server's refusal cannot be observed")
    reason = str(refused.value)
    assert re.search("PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|UNEXPECTED_EOF|closed \\(EOF\\)", reason), reason


def test_ui_cookies_are_secure_over_https(self_signed: Running) -> None:
    with httpx.Client(verify=trusting(presented(self_signed.port)), timeout=30) as client:
        page = client.get(f"{self_signed.url}/_emulator/ui/")
        theme = client.post(f"{self_signed.url}/_emulator/ui/theme", data={"theme": "dark"},
                            headers={"Sec-Fetch-Site": "same-origin"})
    cookies = page.headers.get_list("set-cookie") + theme.headers.get_list("set-cookie")
    names = {cookie.split("=")[0] for cookie in cookies}
    assert names >= {"emulator_ui_session", "emulator_ui_theme"}, cookies
    assert all("; secure" in cookie.lower() for cookie in cookies), cookies


def test_ui_cookies_are_not_secure_over_plain_http() -> None:
    with EmulatorServer(smtp=False) as server, httpx.Client() as client:
        cookies = client.get(f"{server.url}/_emulator/ui/").headers.get_list("set-cookie")
    assert cookies and not any("secure" in cookie.lower() for cookie in cookies), cookies


def test_the_official_sdk_sends_through_the_users_certificate(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with emulator("--no-smtp", "--tls-cert", str(cert), "--tls-key", str(key)) as running:
        assert f"HTTPS with {cert}" in "\n".join(running.banner)
        script = ("import resend\nsent = resend.Emails.send({'from': 'qa@example.com',"
                  " 'to': ['ada@example.com'], 'subject': 'Sent by the SDK over TLS',"
                  " 'html': '<p>Hi Ada</p>'})\nprint(sent['id'])\n")
        env = {**os.environ, "RESEND_API_URL": running.url, "RESEND_API_KEY": KEY,
               "REQUESTS_CA_BUNDLE": str(cert), "SSL_CERT_FILE": str(cert)}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        email = done.stdout.strip()
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as client:
            got = client.get(f"{running.url}/emails/{email}", headers=AUTH).json()
            assert (got["subject"], got["to"]) == ("Sent by the SDK over TLS", ["ada@example.com"])
            outbox = client.get(f"{running.url}/_emulator/ui/")
            assert outbox.status_code == 200 and "Sent by the SDK over TLS" in outbox.text


@pytest.mark.browser
def test_chromium_reads_the_outbox_and_a_message_over_https(self_signed: Running) -> None:
    from tests.ui_helpers import chromium

    with httpx.Client(verify=trusting(presented(self_signed.port))) as client:
        email = send(client, self_signed.url, subject="Seen in Chromium over TLS",
                     html="<p>Body over TLS</p>")
    with chromium() as browser:
        context = browser.new_context(ignore_https_errors=True)  # the self-signed certificate
        page = context.new_page()
        page.goto(f"{self_signed.url}/_emulator/ui/")
        page.get_by_text("Seen in Chromium over TLS").first.click()
        page.wait_for_url(re.compile(f".*{email}.*"), timeout=30_000)
        body = page.frame_locator("iframe").first.locator("body")
        assert "Body over TLS" in body.inner_text(timeout=30_000)
        secure = {cookie["name"]: cookie["secure"] for cookie in context.cookies()}
        assert secure.get("emulator_ui_session") is True, secure
        context.close()


def test_smtp_serves_beside_https_with_the_same_certificate(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with emulator("--smtp-port", "0", "--smtps-port", "0", "--tls-cert", str(cert), "--tls-key",
                  str(key)) as running:
        ports = {line.split()[0]: int(line.rsplit(":", 1)[1]) for line in running.banner if " on " in line
                 and line.startswith("  smtp")}
        context = ssl.create_default_context(cafile=str(cert))
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "qa@example.com", "bo@example.com", "By SMTP"
        message.set_content("Over STARTTLS beside --https")
        with smtplib.SMTP("127.0.0.1", ports["smtp"], timeout=30) as smtp:
            smtp.starttls(context=context)
            smtp.login("resend", KEY)
            smtp.send_message(message)
        with smtplib.SMTP_SSL("127.0.0.1", ports["smtps"], context=context, timeout=30) as smtps:
            smtps.login("resend", KEY)
        with httpx.Client(verify=context) as client:
            outbox = client.get(f"{running.url}/_emulator/outbox").json()["data"]
        assert [item["subject"] for item in outbox] == ["By SMTP"]


def test_the_self_signed_certificate_names_the_host_and_the_allowed_hosts() -> None:
    hosts = ("--allowed-host", "emulator.team.test", "--allowed-host", "10.1.2.3")
    with emulator("--no-smtp", *hosts) as running:
        cert = x509.load_pem_x509_certificate(presented(running.port).encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {"localhost", "emulator.team.test"} <= set(names.get_values_for_type(x509.DNSName))
    assert {ipaddress.ip_address(each) for each in ("127.0.0.1", "::1", "10.1.2.3")} <= set(
        names.get_values_for_type(x509.IPAddress))


def test_a_tls_cert_without_its_key_stops_the_start_with_one_line(certificate: tuple[Path, Path]) -> None:
    done = start("--https", "--no-smtp", "--tls-cert", str(certificate[0]))
    one_line(done, 2, "--tls-cert", "--tls-key")


def test_a_certificate_with_the_wrong_key_stops_the_start_with_one_line(
        tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    _, other_key = make_certificate(tmp_path, "other")
    done = start("--https", "--no-smtp", "--tls-cert", str(certificate[0]), "--tls-key", str(other_key))
    one_line(done, 2, "--tls-cert", "not a usable certificate and key")


def test_a_missing_key_file_stops_the_start_with_one_line(tmp_path: Path,
                                                          certificate: tuple[Path, Path]) -> None:
    missing = str(tmp_path / "no.key")
    done = start("--https", "--no-smtp", "--tls-cert", str(certificate[0]), "--tls-key", missing)
    one_line(done, 2, "--tls-key", "no such file")


def test_the_test_handle_serves_https_when_asked_and_http_by_default() -> None:
    with EmulatorServer(https=True, smtp=False) as server:
        assert server.url.startswith("https://127.0.0.1:") and server.certificate_pem
        assert server.request("GET", "/domains")["data"] == []
        with httpx.Client(verify=server.ssl_context) as client:
            assert client.get(f"{server.url}/_emulator/health").status_code == 200
    with EmulatorServer(smtp=False) as plain:
        assert plain.url.startswith("http://127.0.0.1:") and plain.ssl_context is None
