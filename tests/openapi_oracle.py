"""Resend's OpenAPI document as a test oracle: find it beside the clone, validate bodies against it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_schema_validator import OAS31Validator

METHODS = {"get", "post", "put", "patch", "delete"}


def _find_spec() -> Path:
    """`shared/reference/` lies beside the clone (developers' machines and CI alike)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "reference" / "resend-openapi.yaml"
        if candidate.exists():
            return candidate
    return Path("shared/reference/resend-openapi.yaml")


SPEC = _find_spec()
needs_spec = pytest.mark.skipif(not SPEC.exists(), reason="shared/reference is not beside this clone")


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
