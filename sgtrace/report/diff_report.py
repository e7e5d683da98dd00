"""Renderers of ``diff`` and ``check``: Markdown for a pull-request comment, JSON, SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from sgtrace.analyses.diff import CapDiff, fingerprint
from sgtrace.model import Cap
from sgtrace.report import sarif


def render(old: str, new: str, attribute: str, result: CapDiff) -> str:
    """Markdown: budget change side by side, then a table per kind of change."""
    lines = [f"## sgtrace: caps of `{attribute}`, {old} → {new}", ""]
    if not (result.added or result.removed or result.changed or result.moved or result.budget_changed):
        return "\n".join([*lines, "No change to the budget formula or the caps.", ""])
    if result.budget_changed:
        before, after = result.budget_changed
        lines += ["### Budget formula changed", "", f"| {old} | {new} |", "|---|---|"]
        for index in range(max(len(before), len(after))):
            left = before[index] if index < len(before) else ""
            right = after[index] if index < len(after) else ""
            lines.append(f"| {_cell(left)} | {_cell(right)} |")
        lines.append("")
    for title, caps in (("Added caps", result.added), ("Removed caps", result.removed)):
        if caps:
            lines += [f"### {title} ({len(caps)})", "", "| category | where | code | when |", "|---|---|---|---|"]
            lines += [
                f"| {c.category} | {_where(c)} | {_cell(c.code)} | {_cell(' and '.join(c.guard))} |" for c in caps
            ]
            lines.append("")
    for title, pairs in (("Changed caps", result.changed), ("Moved caps", result.moved)):
        if pairs:
            lines += [f"### {title} ({len(pairs)})", "", f"| category | {old} | {new} |", "|---|---|---|"]
            lines += [
                f"| {a.category} | {_where(a)}: {_cell(a.code)} | {_where(b)}: {_cell(b.code)} |" for a, b in pairs
            ]
            lines.append("")
    return "\n".join(lines)


def render_json(old: str, new: str, result: CapDiff) -> str:
    """``{"old","new","added","removed","changed","moved","budget_changed"}``."""
    payload: dict[str, Any] = {
        "old": old,
        "new": new,
        "added": [_cap(c) for c in result.added],
        "removed": [_cap(c) for c in result.removed],
        "changed": [{"old": _cap(a), "new": _cap(b)} for a, b in result.changed],
        "moved": [{"old": _cap(a), "new": _cap(b)} for a, b in result.moved],
        "budget_changed": (
            {"old": list(result.budget_changed[0]), "new": list(result.budget_changed[1])}
            if result.budget_changed
            else None
        ),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def render_sarif(result: CapDiff) -> str:
    """SARIF 2.1.0 for code scanning: one rule per category, results located in NEW."""
    changes = [(c, "added") for c in result.added] + [(b, "changed") for _, b in result.changed]
    results = [
        sarif.result(c, "warning", f"{change} cap ({c.category}) of {c.target}: {c.code}", fingerprint(c))
        for c, change in changes
    ]
    return sarif.render(results)


def _cap(cap: Cap) -> dict[str, Any]:
    return {
        "fingerprint": fingerprint(cap),
        "category": cap.category,
        "path": cap.path,
        "line": cap.line,
        "owner": cap.owner,
        "function": cap.function,
        "target": cap.target,
        "guard": list(cap.guard),
        "knobs": list(cap.knobs),
        "code": cap.code,
    }


def _where(cap: Cap) -> str:
    return f"`{cap.path}:{cap.line}`"


def _cell(text: str) -> str:
    escaped = text.replace("|", "\\|")
    return f"`{escaped}`" if text else ""
