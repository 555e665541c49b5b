"""The shape every QA finding shares: `{problem, severity, message}`, and a status for a list of them."""

from __future__ import annotations


def problem(name: str, severity: str, message: str) -> dict[str, str]:
    return {"problem": name, "severity": severity, "message": message}


def status_of(problems: list[dict[str, str]]) -> str:
    severities = {p["severity"] for p in problems}
    return "error" if "error" in severities else "warning" if "warning" in severities else "ok"
