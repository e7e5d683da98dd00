"""A budget's history across releases or commits: each one's caps, formula and pool, what each step changed,
and the first release or commit where a chosen kind of change appears.

The stops are read by the caller (fetched, sliced, evaluated); here they are paired step by step with
:func:`sgtrace.analyses.diff.compare`, the verdict of each step is ``diff``'s, and :func:`first_change`
is a binary search that reads as few stops as it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from sgtrace.analyses.diff import CapDiff
from sgtrace.analyses.explain import Step, explain
from sgtrace.analyses.upgrade import ReleasePool
from sgtrace.analyses.verdict import Verdict, verdict
from sgtrace.gitrange import GitRange, RangeStop
from sgtrace.model import CapsResult, TreeIdentity

#: What a change of the history can be, as ``--fail-on`` names them (``pool``: the start-up's pool).
KINDS = ("added", "removed", "changed", "moved", "budget", "pool")


@dataclass(frozen=True, slots=True)
class Stop:
    """One release, tree or commit of the history, as read."""

    #: How it is named (a version, a path, a short commit).
    label: str
    #: What was given to read it (a spec, a path, a revision).
    text: str
    #: Its caps and budget sites; None when it was not read (not needed, or it failed: see ``error``).
    caps: CapsResult | None = None
    #: The start-up under it, when one was given and it was read.
    pool: ReleasePool | None = None
    #: Why it could not be fetched or analysed ("" when it was, or was not asked).
    error: str = ""
    #: The git tags on the commit.
    tags: tuple[str, ...] = ()
    #: The commit's subject line, for a git history.
    subject: str = ""
    #: Its budget formula, as the chain of steps ``explain`` evaluates (values not computed).
    formula: tuple[Step, ...] = ()
    #: Which code it is (a release's spec and version, a commit and its ``describe``); None when not known.
    tree: TreeIdentity | None = None
    #: For a commit of a git range: why it is a stop, how it was named, the release branches based on it.
    commit: RangeStop | None = None

    @property
    def read(self) -> bool:
        """Whether this stop was read and analysed."""
        return self.caps is not None


@dataclass(frozen=True, slots=True)
class Change:
    """How one read stop differs from the read stop before it."""

    #: Index of the older stop in ``History.stops``.
    old: int
    #: Index of the newer stop.
    new: int
    #: What ``diff`` finds between them (with the start-up's pool under each, when one was given).
    diff: CapDiff
    #: ``diff``'s verdict on it, failing on the kinds the history watches.
    verdict: Verdict

    @property
    def changes(self) -> bool:
        """Whether the step changes one of the kinds the history watches."""
        return bool(self.verdict.failing or self.verdict.unreadable)


@dataclass(frozen=True, slots=True)
class FirstChange:
    """Where a binary search over the stops found the first change of the kinds watched."""

    #: The kinds of change looked for.
    kinds: tuple[str, ...]
    #: Index of the first stop that differs from the first one; None when the last one does not.
    index: int | None
    #: Index of the last stop found the same as the first one (the step from it to ``index`` changes).
    before: int
    #: How many stops were read (fetched and analysed) to find it.
    read: int


@dataclass(frozen=True, slots=True)
class History:
    """The stops in order, the steps between the read ones, and the first change when it was looked for."""

    #: The attribute whose caps are followed.
    attribute: str
    #: The budget knob.
    budget: str
    #: Every stop, oldest first.
    stops: tuple[Stop, ...]
    #: The steps between consecutive read stops.
    changes: tuple[Change, ...]
    #: The kinds of change a step is marked for.
    kinds: tuple[str, ...]
    #: With ``--first-change``: where it is.
    first: FirstChange | None = None
    #: The git ranges the stops came from (what each cannot show: a shallow clone, a dirty work tree...).
    ranges: tuple[GitRange, ...] = ()


def formula(caps: CapsResult, budget: str) -> tuple[Step, ...]:
    """The budget formula of a stop, as the chain of steps ``explain`` evaluates."""
    return explain(list(caps.budget_sites), [], budget, {}).steps


def watched(kinds: Collection[str], with_startup: bool) -> tuple[str, ...]:
    """The kinds a history marks: the ones named, else the pool when a start-up is given and the formula
    and caps otherwise."""
    if kinds:
        return tuple(kind for kind in KINDS if kind in kinds)
    return ("budget", "pool") if with_startup else ("added", "removed", "changed", "budget")


def searched(kinds: Collection[str], with_startup: bool) -> tuple[str, ...]:
    """The kinds ``--first-change`` looks for: the ones named, else the pool when a start-up is given (the
    release where this deployment's pool changes) and the formula otherwise."""
    if kinds:
        return watched(kinds, with_startup)
    return ("pool",) if with_startup else ("budget",)


def change(old: int, new: int, found: CapDiff, kinds: Collection[str]) -> Change:
    """The step from stop *old* to stop *new*, with ``diff``'s verdict on the kinds watched."""
    return Change(old, new, found, verdict(found, kinds))


def first_change(count: int, differs: Callable[[int], bool | None]) -> tuple[int | None, int]:
    """The first index in 1..count-1 where *differs* is true, by binary search from index 0 (assumed the
    same as itself); (None, last index probed the same) when none does. *differs* answers None for a stop
    that cannot be read: the search then probes its neighbours, as ``git bisect skip`` does.

    Reads at most about log2(count) + 1 stops besides the first: the last stop is not read first, it is
    assumed to differ until a probe says otherwise (if none does, the answer is None).
    """
    same, other = 0, count  # stops[same] is the same as stops[0]; stops[other] differs (count: none does)
    skipped: set[int] = set()
    while other - same > 1:
        middle = _probe(same, other, skipped)
        if middle is None:
            break
        answer = differs(middle)
        if answer is None:
            skipped.add(middle)
        elif answer:
            other = middle
        else:
            same = middle
    return (other if other < count else None), same


def _probe(same: int, other: int, skipped: set[int]) -> int | None:
    """The index between *same* and *other* nearest their middle that is not skipped, or None."""
    middle = (same + other) // 2
    for distance in range(other - same):
        for index in (middle - distance, middle + distance):
            if same < index < other and index not in skipped:
                return index
    return None
