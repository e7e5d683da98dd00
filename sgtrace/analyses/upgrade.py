"""One start-up under two releases: what ``explain`` answers with each release's budget formula.

The same log, start-up and ``--set`` values are evaluated by each release. A
``--set`` name that is an input of one release only is given to that one and
left out of the other (``mm_reservation_gb`` exists from 0.5.23 on); a name
neither release has is a bad input. The inputs the new release needs that the
old one did not are named, with their value when ``--set`` gave one, else how
to supply it, and where the new code computes them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from sgtrace.analyses.explain import Explanation
from sgtrace.analyses.order import Order, draft_source


@dataclass(frozen=True)
class ReleasePool:
    """One release's evaluation of the start-up."""

    #: What ``explain`` answers with this release (prediction, steps, caps' statuses, missing inputs).
    explanation: Explanation
    #: ``--set`` names this release has no input for, left out of its evaluation.
    left_out: tuple[str, ...] = ()
    #: name -> ``path:line: code`` where this release's code computes an input of its formula that
    #: ``--set`` gave or that is missing, when the function of the step that reads it assigns it.
    computed_at: dict[str, str] = field(default_factory=dict)
    #: The names ``--set`` may give this release (its formula's, its caps' conditions', ServerArgs').
    inputs: frozenset[str] = frozenset()
    #: The weight loads this release runs before it sizes the pool, when read.
    order: Order | None = None
    #: The draft's weights (GB, line) this release's sizing sees taken, when it loads the draft first.
    draft_before: tuple[float, int] | None = None


@dataclass(frozen=True, slots=True)
class NewInput:
    """An input the new release's formula needs that the old release's did not."""

    #: Its name, as the new code spells it.
    name: str
    #: What ``--set`` gave it, or None when nothing supplied it.
    value: object | None
    #: ``path:line: code`` where the new code computes it, or "" when that is not found.
    where: str


@dataclass(frozen=True)
class PoolChange:
    """The start-up given, evaluated with the old and the new release's budget formula."""

    #: The old release's evaluation.
    old: ReleasePool
    #: The new release's evaluation.
    new: ReleasePool
    #: The start-up evaluated, 1-based (0: ``--set`` values alone, no log).
    run: int
    #: How many start-ups the log holds.
    runs: int
    #: The ``--set`` values given.
    settings: Mapping[str, object]
    #: Inputs only the new release needs, by name.
    new_inputs: tuple[NewInput, ...] = ()

    def order_changed(self) -> str:
        """What changed in the order of start-up that changes the pool, in one phrase ("" if nothing did)."""
        old, new = self.old.draft_before, self.new.draft_before
        if (old is None) == (new is None):
            return ""
        side, order = ("new", self.new.order) if new is not None else ("old", self.old.order)
        draft, line = new or old  # type: ignore[misc]
        where = f" ({order.before[-1].where})" if order is not None and order.before else ""
        said = draft_source(line)
        if side == "new":
            return f"the draft's {draft:.2f} GB of weights ({said}) now load before the pool is sized{where}"
        return f"the draft's {draft:.2f} GB of weights ({said}) no longer load before the pool is sized{where}"


class NotAnInput(ValueError):
    """``--set`` names something neither release has."""


def pool_change(old: ReleasePool, new: ReleasePool, run: int, runs: int, settings: Mapping[str, object]) -> PoolChange:
    """Both evaluations, and the inputs only the new release needs; NotAnInput for a name neither takes."""
    neither = sorted(set(old.left_out) & set(new.left_out))
    if neither:
        close = difflib.get_close_matches(neither[0], sorted(old.inputs | new.inputs), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise NotAnInput(f"--set {neither[0]}: not an input of either release's formula, caps or ServerArgs{hint}")
    needed: dict[str, NewInput] = {}
    for name in old.left_out:
        needed[name] = NewInput(name, settings[name], new.computed_at.get(name, ""))
    for name in new.explanation.missing:
        if name not in old.explanation.missing:
            needed.setdefault(name, NewInput(name, None, new.computed_at.get(name, "")))
    return PoolChange(old, new, run, runs, dict(settings), tuple(needed[n] for n in sorted(needed)))
