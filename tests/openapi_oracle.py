"""Resend's OpenAPI document (vendored in tests/data/) as a test oracle: validate bodies against it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from openapi_schema_validator import OAS31Validator

METHODS = {"get", "post", "put", "patch", "delete"}


# Vendored from Resend's OpenAPI repository (MIT, tests/data/LICENSE-resend-openapi), so a fresh clone
# runs every oracle test instead of skipping it.
SPEC = Path(__file__).resolve().parent / "data" / "resend-openapi.yaml"


@cache
def _document() -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(SPEC.read_text(), Loader=loader)  # type: ignore[no-any-return]


def spec_operations() -> dict[str, tuple[str, str]]:
    """operationId → (METHOD, path) for every operation in the document."""
    return {
        op["operationId"]: (method.upper(), path)
        for path, item in _document()["paths"].items()
        for method, op in item.items() if method in METHODS
    }


def check(schema_name: str, body: Any) -> None:
    """Validate `body` against `#/components/schemas/<schema_name>` (OpenAPI 3.1 dialect)."""
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": _document()["components"]}
    OAS31Validator(schema, format_checker=OAS31Validator.FORMAT_CHECKER).validate(body)
