"""SARIF 2.1.0 pieces shared by ``caps`` and ``diff``/``check``: one rule per category, results on caps."""

from __future__ import annotations

import json
from typing import Any

from sgtrace import __version__
from sgtrace.analyses.categories import CATEGORIES
from sgtrace.model import Cap

#: Where the SARIF 2.1.0 JSON schema is published.
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(
    results: list[dict[str, Any]],
    subject: str = "",
    default_level: str | None = None,
    notifications: list[dict[str, Any]] | None = None,
    succeeded: bool = True,
    provenance: list[dict[str, Any]] | None = None,
) -> str:
    """A SARIF log with one rule per cap category (described for *subject*, if given) and *results*.

    With *notifications* (what went wrong while analysing, see :func:`notification`), the run carries
    an invocation that holds them and says whether the analysis *succeeded*. *provenance* is the run's
    ``versionControlProvenance`` (see :func:`sgtrace.report.provenance.version_control`).
    """
    rules = []
    for category, reason in CATEGORIES.items():
        rule: dict[str, Any] = {
            "id": f"sgtrace/{category}",
            "name": category,
            "shortDescription": {"text": f"{subject}: {reason}" if subject else reason},
        }
        if default_level is not None:
            rule["defaultConfiguration"] = {"level": default_level}
        rules.append(rule)
    run: dict[str, Any] = {"tool": {"driver": {"name": "sgtrace", "version": __version__, "rules": rules}}}
    if provenance:
        run["versionControlProvenance"] = provenance
    if notifications is not None:
        run["invocations"] = [{"executionSuccessful": succeeded, "toolExecutionNotifications": notifications}]
    run["results"] = results
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def notification(path: str, line: int, message: str, level: str) -> dict[str, Any]:
    """A tool execution notification on a file (and a line, when known): a problem met while analysing."""
    location: dict[str, Any] = {"artifactLocation": {"uri": path}}
    if line > 0:
        location["region"] = {"startLine": line}
    return {"level": level, "message": {"text": message}, "locations": [{"physicalLocation": location}]}


def result(cap: Cap, level: str, message: str, fingerprint: str | None = None) -> dict[str, Any]:
    """One result on a cap, located at its path and line."""
    found: dict[str, Any] = {"ruleId": f"sgtrace/{cap.category}", "level": level, "message": {"text": message}}
    if fingerprint is not None:
        found["partialFingerprints"] = {"sgtrace/v1": fingerprint}
    found["locations"] = [
        {"physicalLocation": {"artifactLocation": {"uri": cap.path}, "region": {"startLine": cap.line}}}
    ]
    if cap.approximate:  # reached through a receiver guessed by method name (see --strict-types)
        found["properties"] = {"approximate": True}
    return found
