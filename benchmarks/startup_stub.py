"""The start-up benchmark's stub: a plain `uvicorn.run` of a one-route Starlette app that answers
POST /emails with a fresh id. What a stock uvicorn + Starlette process costs before its first answer.

    python -m benchmarks.startup_stub PORT
"""

from __future__ import annotations

import sys
import uuid

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def send(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"id": str(uuid.uuid4())})


if __name__ == "__main__":
    app = Starlette(routes=[Route("/emails", send, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
