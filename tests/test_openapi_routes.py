"""The route table against the operations of Resend's OpenAPI document: what is built, what is missing."""

from __future__ import annotations

from emulator.app import all_ops
from tests.openapi_oracle import spec_operations

# Groups claimed done: every one of their operations must be routed with the spec's operationId.
DONE_GROUPS = {"api-keys", "audiences", "automations", "broadcasts", "contact-properties", "contacts",
               "domains", "emails", "events", "logs", "oauth", "segments", "suppressions", "templates",
               "topics", "webhooks"}


def test_route_table_covers_the_done_groups() -> None:
    routed: dict[str, set[tuple[str, str]]] = {}
    for op in all_ops():  # send aliases share `emails/send`
        routed.setdefault(op.operation_id, set()).add((op.method, op.path))
    spec = spec_operations()
    missing = sorted(op_id for op_id in spec if op_id not in routed)
    print(f"\nrouted {len(spec) - len(missing)} of {len(spec)} OpenAPI operations; missing:")
    for op_id in missing:
        print(f"  {spec[op_id][0]:6} {spec[op_id][1]:55} {op_id}")
    assert [op_id for op_id in missing if op_id.split("/")[0] in DONE_GROUPS] == []
    for op_id, routes in routed.items():
        if op_id in spec:
            assert spec[op_id] in routes, op_id
