"""What a budget pays for besides the KV pool, read from the release's code and the log's lines.

A hybrid model's budget pays for more than its KV cache: the release's code takes a share out of it before
the pool's tokens (the state of Mamba / linear-attention layers, ``return total_rest_memory -
mamba_state_memory`` in ``handle_max_mamba_cache``), or divides it between pools. Each such statement is a
``reserve`` or ``split`` cap outside the formula's own statements. It is a share of this run's budget where the
run's facts say it runs (its status ``applies``), or where they leave it open (undecided, or decided against
only by what was assumed of a model known by its architecture alone) and the log's line of its pool says it
ran. A statement the release's code works out to take nothing for the run is none. Its pool is the log's pool
its name or its function's names (``mamba``: the 'Mamba Cache is allocated' line, by
:class:`sgtrace.run.messages.Pool`); the share carries that line, or none where the log has none: an answer
then says the log's pool is not all the budget paid for.
"""

from __future__ import annotations

import ast
import re

from sgtrace.analyses.evaluate import ASSUMED, CLASS_ASSUMED, LOADED_ASSUMED, Known, Value
from sgtrace.analyses.explain import Explanation, Resolve, Share
from sgtrace.analyses.figures import number
from sgtrace.model import Cap
from sgtrace.run.messages import Pool
from sgtrace.run.startups import StartUp

#: The caps that take a share of the budget before its tokens (analyses.categories).
_SHARING = frozenset({"reserve", "split"})
#: The pools besides the KV cache the log prints a line of, and the start-up's figure each line gives.
_FIGURES = {Pool.MAMBA: "mamba_gb", Pool.SWA_TOTAL: "swa_pool_gb"}
#: The words of a status's reason that say it rests on what was assumed of the model.
_ASSUMPTIONS = (ASSUMED, CLASS_ASSUMED, LOADED_ASSUMED)


def shares(result: Explanation, run: StartUp | None, resolve: Resolve | None = None) -> tuple[Share, ...]:
    """The shares of the budget the release's code takes out for this run (see the module doc): those the run's
    facts say it takes, then those only the log's line of their pool says it took, one a function (its last
    statement: what the function leaves). *resolve* works out what a statement takes out for the run: one that
    takes out nothing (a scratch only a sharded pool keeps) is no share."""
    decided: list[Share] = []
    shown_only: dict[tuple[Pool | None, str], Share] = {}
    mine = result.statements
    for cap, status, why in result.caps:
        if cap.category not in _SHARING or (cap.path, cap.line) in mine:
            continue
        pool = _pool(cap)
        figure = run.target.get(_FIGURES[pool]) if run is not None and pool is not None else None
        if status != "applies" and (figure is None or not _undecided(status, why)):
            continue
        what = _taken(cap)
        if resolve is not None and _nothing(resolve(what, cap.path, cap.line)):
            continue
        shown, gb = (figure.line, figure.value) if figure is not None else (None, None)
        share = Share(what, cap.path, cap.line, cap.function or "", status, pool, shown, gb)
        if status == "applies":
            decided.append(share)
        elif (key := (pool, share.function)) not in shown_only or shown_only[key].line < share.line:
            shown_only[key] = share
    return (*decided, *shown_only.values())


def _undecided(status: str, why: str) -> bool:
    """Whether the run's facts leave a statement's running open: its status is unknown, or it is not reached
    only by what was assumed of a model known by its architecture alone (the log's line of its pool says
    otherwise)."""
    return status == "unknown" or (status == "not reached" and any(w in why for w in _ASSUMPTIONS))


def _nothing(value: Value) -> bool:
    """Whether the release's code, worked out for the run, takes out nothing."""
    return isinstance(value, Known) and number(value.value) == 0


def _pool(cap: Cap) -> Pool | None:
    """The log's pool the share is, by a word of its statement or its function (``mamba`` in
    ``handle_max_mamba_cache``)."""
    words = set(re.split(r"[^a-z]+", f"{cap.code} {cap.function or ''}".lower()))
    return next((pool for pool in _FIGURES if pool.value.split("_")[0] in words), None)


def _taken(cap: Cap) -> str:
    """What the statement takes out of the budget: the right of its subtraction that is not the budget itself
    (``mamba_state_memory`` of ``total_rest_memory - mamba_state_memory``); else what it writes."""
    try:
        tree = ast.parse(cap.code.strip())
    except SyntaxError:
        return cap.target
    written = cap.target.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            right = ast.unparse(node.right)
            if written not in right:
                return right
    return cap.target
