"""The stub the start-up and suite benchmarks measure against: a plain `uvicorn.run` of a Starlette app
that answers POST /emails with a fresh id and GET /emails/{id} with a fixed body, and does nothing else.
What a stock uvicorn + Starlette process costs: before its first answer, and per call of a suite.

    python benchmarks/stub_app.py PORT
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


async def read(request: Request) -> JSONResponse:
    return JSONResponse({"object": "email", "id": request.path_params["id"], "subject": "stub"})


if __name__ == "__main__":
    app = Starlette(routes=[Route("/emails", send, methods=["POST"]), Route("/emails/{id}", read)])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", access_log=False)
