"""Section (e) of the report: ``diff``'s answer as the page shows it.

The one place that reads the diff result: when ``diff`` gives its own verdict and
moved / changed pairs (issue 19), only :func:`upgrade` changes; the template's
``upgrade`` block reads the dictionary it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from typing import Any

from sgtrace.analyses.diff import CapDiff
from sgtrace.model import Cap, CapsResult


def upgrade(
    compared: tuple[CapsResult, CapsResult, CapDiff], old: str, new: str, url: Callable[[str, int], str]
) -> dict[str, Any]:
    """The verdict and the moved / changed / added / removed caps from *old* to *new* (links in *new* or *old*)."""
    _, _, result = compared
    counts = {
        "moved": len(result.moved),
        "changed": len(result.changed),
        "added": len(result.added),
        "removed": len(result.removed),
    }
    if result.budget_changed or result.added or result.removed or result.changed:
        verdict, tone = "review: the upgrade changes how the pool is sized", "review"
    elif result.moved:
        verdict, tone = "same caps, moved in the code: nothing to review in the sizing", "same"
    else:
        verdict, tone = "no change to the budget formula or the caps", "same"
    reasons = (
        [f"the budget formula changed ({len(result.budget_changed[1])} statements now)"]
        if result.budget_changed
        else []
    )
    reasons += [f"{n} {kind}" for kind, n in counts.items() if n]

    def cap(c: Cap, link: bool = True) -> dict[str, Any]:
        return {"cap": c, "where": f"{c.path}:{c.line}", "link": url(c.path, c.line) if link else ""}

    return {
        "old": old,
        "new": new,
        "verdict": verdict,
        "tone": tone,
        "reasons": reasons,
        "budget": result.budget_changed,
        "budget_rows": list(zip_longest(*result.budget_changed, fillvalue="")) if result.budget_changed else [],
        "pairs": [
            ("moved", [(cap(a, False), cap(b)) for a, b in result.moved]),
            ("changed", [(cap(a, False), cap(b)) for a, b in result.changed]),
        ],
        "singles": [
            ("added", [cap(c) for c in result.added]),
            ("removed", [cap(c, False) for c in result.removed]),
        ],
    }
