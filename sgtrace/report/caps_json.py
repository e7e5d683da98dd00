"""JSON and SARIF renderers of ``caps``."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from sgtrace.analyses.categories import CATEGORIES
from sgtrace.model import CapsResult
from sgtrace.report import provenance, sarif


def render(result: CapsResult) -> str:
    """``{"attribute","budget","budget_sites":[...],"caps":[...],"errors":[...],"tree":{...}}``."""
    payload = {
        "attribute": result.attribute,
        "budget": result.budget,
        "root": result.root,
        "budget_sites": [
            {"path": s.path, "line": s.line, "code": s.code, "knobs": list(s.knobs)} for s in result.budget_sites
        ],
        "caps": [_cap(asdict(c)) for c in result.caps],
        "errors": [{"path": e.path, "line": e.line, "message": e.message} for e in result.errors],
        "truncated": result.truncated,
        "tree": provenance.payload(result.tree),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _cap(fields: dict[str, Any]) -> dict[str, Any]:
    order = ("path", "line", "owner", "function", "target", "category", "guard", "knobs", "code")
    found = {name: list(fields[name]) if isinstance(fields[name], tuple) else fields[name] for name in order}
    if fields.get("exits"):
        found["exits"] = list(fields["exits"])
    return {**found, "approximate": True} if fields.get("approximate") else found


def render_sarif(result: CapsResult) -> str:
    """SARIF 2.1.0: one rule per category, one result per cap."""
    results = [sarif.result(c, "note", f"{c.target} {CATEGORIES[c.category]}: {c.code}") for c in result.caps]
    return sarif.render(
        results, subject=result.attribute, default_level="note", provenance=provenance.version_control(result.tree)
    )
