"""Why the log's pool and the formula's differ: each explanation the numbers allow, with its number, and which
the log supports.

Where the pool a start-up logged is not the one the release's formula gives for its figures, more than one
thing can account for it, and the answer weighs them rather than naming one:

- the fraction: the one the formula takes may not be the run's (given with ``--set`` from a README, a launch
  command of another run); the fraction that gives the log's pool is solved from the formula;
- a share the log does not show: the budget pays for more than the KV pool (a hybrid model's Mamba state, see
  :mod:`sgtrace.analyses.shares`) and the log has no line of that part, so its pool is not all the budget paid for;
- a cap: a ``min`` whose other operand, evaluated for the run, is the pool's tokens (it bound the pool), or caps
  that apply or may, whose value the log does not give;
- memory that moved: the free memory grew while the pool was allocated (another process freed some, or a
  unified-memory system gave some back), so the figures the formula takes were not all the run's own;
- another path: the pool is above the formula's and nothing in the numbers says which path sized it.

A statement of the formula's own chain is never a cap of it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sgtrace.analyses.explain import Explanation, Reading, solve
from sgtrace.analyses.figures import number
from sgtrace.model import BudgetSite
from sgtrace.run.startups import StartUp

#: A pool within this many GB (or 1 %) of the formula's is the formula's.
MATCH_GB = 0.05
#: Free memory that grew by more than this many GB across the pool's allocation moved (a figure's rounding is 0.01).
MOVED_GB = 0.5


#: Caps that cannot account for a gap in GB: the pool's own write from the formula, a rounding to whole pages.
_NOT_A_GAP = frozenset({"base", "round"})


class Why(enum.Enum):
    """What can account for the difference."""

    SHARE = "share"
    FRACTION = "fraction"
    CAP = "cap"
    MEMORY_MOVED = "memory moved"
    ANOTHER_PATH = "another path"


@dataclass(frozen=True, slots=True)
class Cause:
    """One explanation the numbers allow."""

    why: Why
    #: Its number: the fraction that gives the log's pool, the GB of memory that moved or that a share the log does
    #: not show may be (None: none).
    number: float | None
    #: What it says, a clause.
    words: str
    #: Whether the log's own lines support it (a cap the run's values bind, a fraction the log does not show).
    supported: bool


def matches(predicted: float, observed: float) -> bool:
    """Whether the log's pool is the formula's, within its rounding."""
    return abs(predicted - observed) <= max(MATCH_GB, predicted * 0.01)


def weigh(
    sites: list[BudgetSite],
    budget: str,
    known: Mapping[str, Any],
    origins: Mapping[str, str],
    result: Explanation,
    run: StartUp | None,
    reading: Reading,
) -> tuple[Cause, ...]:
    """The explanations of the difference between the log's pool and the formula's, likeliest first; () when
    they agree or either is not known."""
    predicted, observed = result.kv_budget_gb, result.observed_kv_gb
    if predicted is None or observed is None or matches(predicted, observed) or result.implied:
        return ()
    causes = [*_unshown(result), *_fraction(sites, budget, known, origins, observed, reading), *_caps(result)]
    moved = _moved(run)
    if moved is not None:
        causes.append(moved)
    if observed > predicted and not any(c.supported for c in causes):
        causes.append(Cause(Why.ANOTHER_PATH, None, "another path sized it (the numbers do not say which)", False))
    return tuple(sorted(causes, key=lambda cause: not cause.supported))


def _fraction(
    sites: list[BudgetSite],
    budget: str,
    known: Mapping[str, Any],
    origins: Mapping[str, str],
    observed: float,
    reading: Reading,
) -> list[Cause]:
    given = number(known.get(budget))
    if given is None:
        return []
    implied = solve(sites, budget, {k: v for k, v in known.items() if k != budget}, observed, reading=reading)
    if implied is None or not 0 < implied <= 1 or abs(implied - given) < 0.0005:
        return []
    origin = origins.get(budget, "")
    from_log = not origin  # the log's own server_args (an origin is named for every other door)
    whence = "the log's own server_args" if from_log else origin
    if from_log:
        words = f"{budget} {implied:.3f} gives the log's pool, not the run's {given:g} ({whence}): not this"
    else:
        words = (
            f"{budget} {implied:.3f} gives the log's pool, not the {given:g} given ({whence}), and the log does not"
            " show the run's own: the run may have had it"
        )
    return [Cause(Why.FRACTION, round(implied, 3), words, not from_log)]


def _unshown(result: Explanation) -> list[Cause]:
    """The shares of the budget the log has no line of, where its pool is below the formula's: they may be the
    difference (the log supports it where the run's facts say the release's code took them)."""
    gap = (result.kv_budget_gb or 0.0) - (result.observed_kv_gb or 0.0)
    unshown = [share for share in result.shares if share.shown is None]
    if gap <= 0 or not unshown:
        return []
    named = " and ".join(f"{share.what} ({share.path}:{share.line})" for share in unshown)
    words = (
        f"the budget pays for {named} as well, taken out of it before the KV pool, and the log shows no line of"
        f" {'it' if len(unshown) == 1 else 'them'}: the {gap:.2f} GB may be {'it' if len(unshown) == 1 else 'them'}"
    )
    return [Cause(Why.SHARE, round(gap, 2), words, all(share.status == "applies" for share in unshown))]


def _caps(result: Explanation) -> list[Cause]:
    mine = result.statements | {(share.path, share.line) for share in result.shares}
    found = [
        Cause(Why.CAP, None, f"{path}:{line} (min) bound it ({why})", True)
        for path, line, why in result.bound
        if (path, line) not in mine
    ]
    if found:
        return found
    maybe = [
        f"{cap.path}:{cap.line} ({cap.category})"
        for cap, status, _ in result.caps
        if status in ("applies", "unknown") and (cap.path, cap.line) not in mine and cap.category not in _NOT_A_GAP
    ]
    if not maybe or (result.kv_budget_gb or 0) <= (result.observed_kv_gb or 0):
        return []
    more = f" and {len(maybe) - 3} more" if len(maybe) > 3 else ""
    return [Cause(Why.CAP, None, f"a cap whose value the log does not give: {', '.join(maybe[:3])}{more}", False)]


def _moved(run: StartUp | None) -> Cause | None:
    """Free memory that grew across the pool's allocation: after the weights, less the pools, is below what was
    free after them."""
    if run is None:
        return None
    target = run.target
    after, pools, left = (target.get(n) for n in ("avail_after_weights_gb", "kv_gb", "avail_after_pool_gb"))
    if after is None or pools is None or left is None:
        return None
    state = target.get("mamba_gb")
    grew = left.value - (after.value - pools.value - (state.value if state is not None else 0.0))
    if grew <= MOVED_GB:
        return None
    return Cause(
        Why.MEMORY_MOVED,
        round(grew, 2),
        f"{grew:.2f} GB more was free after the pool (line {left.line}) than after the weights (line {after.line})"
        " less the pool: another process freed memory, or a unified-memory system gave some back, while it was"
        " allocated, so the free memory the formula takes was not all the run's",
        True,
    )
