"""Compare the caps and budget sites of two trees: added, removed, changed, moved, budget changed.

A cap's identity does not depend on line numbers or formatting: its
fingerprint is a hash of owner, function, category, target and the statement
normalised through the standard library's ``ast`` (so a reformatted or shifted
statement keeps its fingerprint). Matching runs in passes: identical caps;
caps whose statement moved to another file, class or function; caps of the
same place and category whose code, guard or knobs changed. What is left is
added or removed.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from sgtrace.model import BudgetSite, Cap


def normalise(code: str) -> str:
    """A statement's shape, independent of formatting: ``ast.dump`` of it, else its words."""
    try:
        return ast.dump(ast.parse(code.strip()))
    except SyntaxError:
        return " ".join(code.split())


def fingerprint(cap: Cap) -> str:
    """Stable identity: owner, function, category, target and the normalised statement."""
    text = "\0".join([cap.owner or "", cap.function or "", cap.category, cap.target, normalise(cap.code)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class CapDiff:
    """How two sets of caps differ."""

    #: Caps only in the new tree.
    added: tuple[Cap, ...]
    #: Caps only in the old tree.
    removed: tuple[Cap, ...]
    #: (old, new): same place and category, different code, guard or knobs.
    changed: tuple[tuple[Cap, Cap], ...]
    #: (old, new): same statement, another file, class or function.
    moved: tuple[tuple[Cap, Cap], ...]
    #: (old formula statements, new ones) when the budget formula differs, else None.
    budget_changed: tuple[tuple[str, ...], tuple[str, ...]] | None


def compare(
    old: Iterable[Cap], new: Iterable[Cap], old_sites: Iterable[BudgetSite], new_sites: Iterable[BudgetSite]
) -> CapDiff:
    """Match the caps of two trees pass by pass; compare their budget formulas."""
    left, right = list(old), list(new)
    _take(left, right, lambda c: (fingerprint(c), c.guard, c.knobs))
    moved = _take(left, right, lambda c: (c.category, c.target, normalise(c.code), c.guard))
    changed = _take(left, right, lambda c: (c.owner, c.function, c.category, c.target))
    old_formula = tuple(sorted({" ".join(s.code.split()) for s in old_sites}))
    new_formula = tuple(sorted({" ".join(s.code.split()) for s in new_sites}))
    formula_changed = {normalise(c) for c in old_formula} != {normalise(c) for c in new_formula}
    return CapDiff(
        added=tuple(right),
        removed=tuple(left),
        changed=tuple(changed),
        moved=tuple(moved),
        budget_changed=(old_formula, new_formula) if formula_changed else None,
    )


def _take(left: list[Cap], right: list[Cap], key: object) -> list[tuple[Cap, Cap]]:
    """Remove from both lists the caps that pair up by *key*; return the pairs."""
    assert callable(key)
    pairs: list[tuple[Cap, Cap]] = []
    waiting: dict[object, list[Cap]] = {}
    for cap in right:
        waiting.setdefault(key(cap), []).append(cap)
    unmatched = []
    for cap in left:
        candidates = waiting.get(key(cap))
        if candidates:
            pairs.append((cap, candidates.pop(0)))
        else:
            unmatched.append(cap)
    matched_new = {id(new) for _, new in pairs}
    left[:] = unmatched
    right[:] = [c for c in right if id(c) not in matched_new]
    return pairs
