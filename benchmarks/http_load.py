"""A small HTTP/1.1 keep-alive load generator, run in its own process so it never shares a core's
event loop with the server it measures.

    python -m benchmarks.http_load --port P --method POST --path /emails --body '{...}' \
        --header 'Authorization: Bearer re_x' --concurrency 8 --seconds 3

Prints one JSON line: requests, errors, seconds, rps, p50_ms, p99_ms, max_ms. Each connection sends a
request, reads the whole response (Content-Length framing, which Starlette always sets), then sends
the next: closed-loop load, latency measured per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time


def build_request(method: str, host: str, path: str, body: bytes, headers: list[str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: keep-alive", *headers]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return int(head[9:12])


async def _connection(host: str, port: int, request: bytes, start: float, stop: float,
                      latencies: list[float], errors: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while (sent := time.perf_counter()) < stop:
            writer.write(request)
            status = await _read_response(reader)
            if sent >= start:
                latencies.append(time.perf_counter() - sent)
                if status >= 400:
                    errors.append(status)
    finally:
        writer.close()


async def run(host: str, port: int, request: bytes, concurrency: int, seconds: float,
              warmup: float) -> dict[str, float]:
    start = time.perf_counter() + warmup
    stop = start + seconds
    latencies: list[float] = []
    errors: list[int] = []
    await asyncio.gather(*(_connection(host, port, request, start, stop, latencies, errors)
                           for _ in range(concurrency)))
    ordered = sorted(latencies)
    quantiles = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else ordered * 99
    return {
        "requests": len(ordered), "errors": len(errors), "seconds": seconds,
        "rps": len(ordered) / seconds, "p50_ms": quantiles[49] * 1000, "p99_ms": quantiles[98] * 1000,
        "max_ms": (ordered[-1] if ordered else 0) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--path", default="/")
    parser.add_argument("--body", default="")
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5)
    args = parser.parse_args()
    request = build_request(args.method, f"{args.host}:{args.port}", args.path, args.body.encode(),
                            args.header)
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run  # type: ignore[assignment]
    result = runner(run(args.host, args.port, request, args.concurrency, args.seconds, args.warmup))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
