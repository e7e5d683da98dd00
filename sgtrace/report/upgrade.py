"""Section (e) of the report: ``diff``'s answer as the page shows it.

The one place that reads the diff result for the page: the verdict (as ``diff`` words it for a CI
log), the pool of the start-up under both releases, the moved and changed pairs with what differs,
the caps added and removed, and the two budget formulas as chains of steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sgtrace.analyses.diff import CapDiff, CapPair
from sgtrace.analyses.verdict import Verdict, verdict
from sgtrace.model import Cap, CapsResult
from sgtrace.report import diff_parts

#: What the page calls a reason to look: the kinds ``diff``'s gate fails on by default.
REVIEW = ("added", "changed", "budget", "pool")


def _verdict(found: Verdict) -> str:
    """The page's first line on the upgrade: what to review, or that nothing in the sizing changed."""
    counts = diff_parts.counts(found)
    reasons = [*found.failing, *(["caps in files the new tree could not analyse"] if found.unreadable else [])]
    if reasons:
        return f"Review before upgrading ({', '.join(reasons)}): {counts}."
    return f"Nothing to review in how the pool is sized: {counts}."


def upgrade(
    compared: tuple[CapsResult, CapsResult, CapDiff], old: str, new: str, url: Callable[[str, int], str]
) -> dict[str, Any]:
    """The verdict and the moved / changed / added / removed caps from *old* to *new* (links in *new*)."""
    _, _, result = compared
    found = verdict(result, REVIEW)
    tone = "review" if found.failing or found.unreadable else "same"
    before, after = diff_parts.statuses(result.pool)

    def cap(c: Cap, link: bool = True, statuses: diff_parts.Statuses | None = None) -> dict[str, Any]:
        status = (statuses or {}).get(c)
        return {
            "cap": c,
            "where": diff_parts.where(c),
            "link": url(c.path, c.line) if link else "",
            "when": diff_parts.conditions(c),
            "status": status[0] if status else "",
        }

    def pair(p: CapPair) -> dict[str, Any]:
        return {
            "old": cap(p.old, False, before),
            "new": cap(p.new, True, after),
            "differences": list(p.differences),
            "renamed": [f"{a} \u2192 {b}" for a, b in p.renamed],
            "diff": diff_parts.code_diff(p) if "code" in p.differences or "names" in p.differences else [],
            "guard_changed": "guard" in p.differences,
        }

    formula = result.budget_changed
    return {
        "old": old,
        "new": new,
        "verdict": _verdict(found),
        "pool": diff_parts.pool_sentence(old, new, result.pool) if result.pool is not None else "",
        "counts": diff_parts.counts(found),
        "tone": tone,
        "budget": formula,
        "formula_old": [(f"{s.path}:{s.line}", diff_parts.flat(s.code)) for s in formula.old] if formula else [],
        "formula_new": [(f"{s.path}:{s.line}", diff_parts.flat(s.code)) for s in formula.new] if formula else [],
        "pairs": [("changed", [pair(p) for p in result.changed]), ("moved", [pair(p) for p in result.moved])],
        "singles": [
            ("added", [cap(c, True, after) for c in result.added]),
            ("removed", [cap(c, False, before) for c in result.removed]),
        ],
        "unreadable": [(cap(c, False), f"{e.path}:{e.line}: {e.message}") for c, e in result.unreadable],
    }
