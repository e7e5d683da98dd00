"""The upgrade verdict: what a CI log shows in one line and a pull-request comment shows first."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sgtrace.analyses.diff import CapDiff

#: The kinds of change ``--fail-on`` can name: the caps' kinds, the budget formula, and the pool of the
#: start-up given (differs by 0.01 GB or more, or cannot be evaluated under one release only).
FAIL_ON = ("added", "removed", "changed", "moved", "budget", "pool")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The counts, the pool of the start-up given, and whether the gate fails and why."""

    #: Caps only in the new tree.
    added: int
    #: Caps only in the old tree.
    removed: int
    #: Caps paired whose code, guard or knobs differ.
    changed: int
    #: Caps paired that do the same thing elsewhere.
    moved: int
    #: Caps the same in both trees.
    unchanged: int
    #: Whether the budget formula differs.
    budget_changed: bool
    #: The start-up's KV budget in GB under the old and the new release (None where it cannot be
    #: evaluated); None when no start-up was given.
    pool: tuple[float | None, float | None] | None
    #: The kinds found that ``--fail-on`` names, in FAIL_ON's order.
    failing: tuple[str, ...]
    #: Caps of the old tree in files the new tree could not read or parse (the gate fails closed on them).
    unreadable: int
    #: Whether the gate fails (exit 1).
    failed: bool


def verdict(result: CapDiff, fail_on: Collection[str], exit_zero: bool = False) -> Verdict:
    """The verdict of *result* under ``--fail-on`` *fail_on*; with *exit_zero* the gate never fails."""
    pool = None
    if result.pool is not None:
        pool = (result.pool.old.explanation.kv_budget_gb, result.pool.new.explanation.kv_budget_gb)
    found = {
        "added": bool(result.added),
        "removed": bool(result.removed),
        "changed": bool(result.changed),
        "moved": bool(result.moved),
        "budget": result.budget_changed is not None,
        "pool": pool is not None and _pool_differs(*pool),
    }
    failing = tuple(kind for kind in FAIL_ON if kind in fail_on and found[kind])
    return Verdict(
        added=len(result.added),
        removed=len(result.removed),
        changed=len(result.changed),
        moved=len(result.moved),
        unchanged=result.unchanged,
        budget_changed=result.budget_changed is not None,
        pool=pool,
        failing=failing,
        unreadable=len(result.unreadable),
        failed=not exit_zero and bool(failing or result.unreadable),
    )


def _pool_differs(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return (old is None) != (new is None)
    return round(old, 2) != round(new, 2)
