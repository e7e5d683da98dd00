"""Compare the caps and budget formulas of two trees: unchanged, moved, changed, added, removed, unreadable.

A cap's identity does not depend on line numbers or formatting: its
fingerprint is a hash of owner, function, category, target and the statement
normalised through the standard library's ``ast``. Matching runs in two
passes. Caps with the same fingerprint, guard, exits and knobs are unchanged.
The rest are paired by what they do (:mod:`sgtrace.analyses.likeness`): every
old and new cap of one category whose similarity reaches the threshold is a
candidate, and pairs are taken best first (at equal scores, the pair that
shares more of file, class and function). A pair that does the same thing
(the same code once receivers and variable names are numbered, the same
conditions, the same knobs) somewhere else is *moved*; any other pair is
*changed*, and says what changed. What pairs with nothing is added or
removed, except a cap of the old tree whose file the new tree could not
analyse: that is *unreadable*, never a silent removal.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sgtrace.analyses.explain import Step, explain
from sgtrace.analyses.likeness import THRESHOLD, Shape, renames, shape, similarity, tokens
from sgtrace.analyses.upgrade import PoolChange
from sgtrace.model import BudgetSite, Cap, FileError, TreeIdentity, TreeOrder

#: What a pair can differ in, in the order it is shown.
DIFFERENCES = ("place", "code", "guard", "knobs", "names")


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
class CapPair:
    """A cap of the old tree and the cap of the new tree it became."""

    #: The cap in the old tree.
    old: Cap
    #: The cap in the new tree.
    new: Cap
    #: How alike they are, in [0, 1] (:func:`sgtrace.analyses.likeness.similarity`).
    score: float
    #: What differs, from DIFFERENCES: ``place`` (file, class or function), ``code`` (what it computes),
    #: ``guard`` (its guard or exits), ``knobs``, ``names`` (variables renamed, nothing else in the code).
    differences: tuple[str, ...]
    #: (old name, new name) of each variable renamed, receivers left out.
    renamed: tuple[tuple[str, str], ...] = ()
    #: Added caps with the same code as ``new`` (the new tree repeats it, under other conditions).
    copies: tuple[Cap, ...] = ()


@dataclass(frozen=True, slots=True)
class FormulaChange:
    """The budget formula of each tree, as the chain of steps ``explain`` evaluates, when they differ."""

    #: The old tree's steps (not evaluated: values None).
    old: tuple[Step, ...]
    #: The new tree's steps.
    new: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class CapDiff:
    """How the caps and the budget formula of two trees differ."""

    #: Caps of the new tree that pair with nothing.
    added: tuple[Cap, ...]
    #: Caps of the old tree that pair with nothing (and whose file the new tree analysed).
    removed: tuple[Cap, ...]
    #: Pairs whose code, guard or knobs differ, or that changed in place.
    changed: tuple[CapPair, ...]
    #: Pairs that do the same thing in another file, class or function.
    moved: tuple[CapPair, ...]
    #: The two formulas when they differ, else None.
    budget_changed: FormulaChange | None
    #: How many caps are the same in both trees.
    unchanged: int = 0
    #: Caps of the old tree that pair with nothing, in a file the new tree could not read or parse.
    unreadable: tuple[tuple[Cap, FileError], ...] = ()
    #: The start-up given, under both releases (see :mod:`sgtrace.analyses.upgrade`), when one was given.
    pool: PoolChange | None = None
    #: Which code each side is (the old tree's, or the one a baseline was written on; the new tree's).
    trees: tuple[TreeIdentity | None, TreeIdentity | None] = (None, None)
    #: Whether the new tree is older than the old one, when their commits or versions tell.
    order: TreeOrder | None = None


def compare(
    old: Iterable[Cap],
    new: Iterable[Cap],
    old_sites: Iterable[BudgetSite],
    new_sites: Iterable[BudgetSite],
    attribute: str = "",
    budget: str = "mem_fraction_static",
    errors: Sequence[FileError] = (),
) -> CapDiff:
    """Pair the caps of two trees (see the module doc); compare their formulas.

    *attribute* is the attribute analysed (its words say nothing about a cap); *errors* are the new
    tree's files that could not be analysed.
    """
    left, right = list(old), list(new)
    unchanged = _take_same(left, right)
    pairs = [_with_copies(p, right) for p in _pair(left, right, attribute)]
    broken = {e.path: e for e in sorted(errors, key=lambda e: (e.path, e.line))}
    return CapDiff(
        added=tuple(right),
        removed=tuple(c for c in left if c.path not in broken),
        changed=tuple(p for p in pairs if not _is_move(p)),
        moved=tuple(p for p in pairs if _is_move(p)),
        budget_changed=formula_change(list(old_sites), list(new_sites), budget),
        unchanged=unchanged,
        unreadable=tuple((c, broken[c.path]) for c in left if c.path in broken),
    )


def formula_change(old: list[BudgetSite], new: list[BudgetSite], budget: str) -> FormulaChange | None:
    """Both formulas as ``explain`` chains them, when their statements differ (receivers and layout aside)."""
    before, after = explain(old, [], budget, {}).steps, explain(new, [], budget, {}).steps
    if [tokens(s.code) for s in before] == [tokens(s.code) for s in after]:
        return None
    return FormulaChange(before, after)


def _take_same(left: list[Cap], right: list[Cap]) -> int:
    """Remove the caps found unchanged in both lists; return how many."""
    waiting: dict[tuple[object, ...], list[Cap]] = {}
    for cap in right:
        waiting.setdefault(_identity(cap), []).append(cap)
    kept, taken = [], set()
    for cap in left:
        candidates = waiting.get(_identity(cap))
        if candidates:
            taken.add(id(candidates.pop(0)))
        else:
            kept.append(cap)
    left[:] = kept
    right[:] = [c for c in right if id(c) not in taken]
    return len(taken)


def _identity(cap: Cap) -> tuple[object, ...]:
    return (fingerprint(cap), cap.guard, cap.exits, cap.knobs)


def _pair(left: list[Cap], right: list[Cap], attribute: str) -> list[CapPair]:
    """Take pairs best first among the candidates at or above the threshold; remove them from both lists."""
    shapes = {id(c): shape(c, attribute) for c in (*left, *right)}
    candidates = []
    for i, old in enumerate(left):
        for j, new in enumerate(right):
            if old.category == new.category:
                score = similarity(shapes[id(old)], shapes[id(new)])
                if score >= THRESHOLD:
                    candidates.append((-round(score, 9), -_near(old, new), i, j, score))
    pairs, used_old, used_new = [], set(), set()
    for _, _, i, j, score in sorted(candidates):
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append(_described(left[i], right[j], shapes[id(left[i])], shapes[id(right[j])], score))
    left[:] = [c for i, c in enumerate(left) if i not in used_old]
    right[:] = [c for j, c in enumerate(right) if j not in used_new]
    return sorted(pairs, key=lambda p: (p.new.path, p.new.line))


def _near(old: Cap, new: Cap) -> int:
    """How much of its place a pair shares: file, class, function."""
    return (old.path == new.path) + (old.owner == new.owner) + (old.function == new.function)


def _described(old: Cap, new: Cap, before: Shape, after: Shape, score: float) -> CapPair:
    """The pair with what differs between its caps: a difference a rename or a receiver explains is none."""
    found = {
        "place": (old.path, old.owner, old.function) != (new.path, new.owner, new.function),
        "code": before.form != after.form and before.tokens != after.tokens,
        "guard": before.conditions != after.conditions and before.condition_tokens != after.condition_tokens,
        "knobs": before.knobs != after.knobs,
    }
    same_form = before.form == after.form and before.conditions == after.conditions
    renamed = renames(before, after) if same_form else ()
    found["names"] = bool(renamed)
    if not any(found.values()):
        found["code"] = True  # only receivers or spelling differ, in place: still a change to show
    return CapPair(old, new, score, tuple(kind for kind in DIFFERENCES if found[kind]), renamed)


def _with_copies(pair: CapPair, added: list[Cap]) -> CapPair:
    same = tokens(pair.new.code)
    copies = tuple(c for c in added if c.category == pair.new.category and tokens(c.code) == same)
    return dataclasses.replace(pair, copies=copies) if copies else pair


def _is_move(pair: CapPair) -> bool:
    """Same behaviour elsewhere: only the place (and maybe variable names) differ."""
    return "place" in pair.differences and set(pair.differences) <= {"place", "names"}
