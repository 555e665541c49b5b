"""The route table against the operations of Resend's OpenAPI document: what is built, what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emulator.app import all_ops


def _find_spec() -> Path:
    """`shared/reference/` lies beside the clone (developers' machines and CI alike)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "reference" / "resend-openapi.yaml"
        if candidate.exists():
            return candidate
    return Path("shared/reference/resend-openapi.yaml")


SPEC = _find_spec()
METHODS = {"get", "post", "put", "patch", "delete"}
# Groups claimed done: every one of their operations must be routed with the spec's operationId.
DONE_GROUPS = {"api-keys", "domains", "emails", "templates", "webhooks"}


def spec_operations() -> dict[str, tuple[str, str]]:
    spec = yaml.safe_load(SPEC.read_text())
    return {
        op["operationId"]: (method.upper(), path)
        for path, item in spec["paths"].items()
        for method, op in item.items() if method in METHODS
    }


@pytest.mark.skipif(not SPEC.exists(), reason="shared/reference is not beside this clone")
def test_route_table_covers_the_done_groups() -> None:
    routed: dict[str, set[tuple[str, str]]] = {}
    for op in all_ops():  # send aliases share `emails/send`
        routed.setdefault(op.operation_id, set()).add((op.method, op.path))
    spec = spec_operations()
    missing = sorted(op_id for op_id in spec if op_id not in routed)
    print(f"\nrouted {len(spec) - len(missing)} of {len(spec)} OpenAPI operations; missing:")
    for op_id in missing:
        print(f"  {spec[op_id][0]:6} {spec[op_id][1]:55} {op_id}")
    done_missing = [op_id for op_id in missing if op_id.split("/")[0] in DONE_GROUPS]
    assert done_missing == []
    for op_id, routes in routed.items():
        if op_id in spec:
            assert spec[op_id] in routes, op_id
