"""Binding listening sockets: a port in use is one clear line (SystemExit), not a traceback."""

from __future__ import annotations

import socket


def bind(host: str, port: int) -> socket.socket:
    """Bind before serving, so a port in use is one clear line and port 0 is known."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"resend-emulator: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
