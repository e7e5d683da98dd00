"""Where one GPU's memory went in a start-up, and what a wanted KV pool would leave.

The ledger splits the memory free before the weights into what the log shows
taking it, in order: the weights, the target KV pool, the target's other pool
memory, the draft's weights, KV pool and other pool memory, the CUDA graphs,
and what is left at the end; a remainder the log does not explain is its own
row. The what-if solves the release's formula for the budget (``explain.solve``)
and carries this run's use after the pool over to the wanted pool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sgtrace.analyses.figures import written
from sgtrace.analyses.release_args import Reserve
from sgtrace.run.stages import Ended
from sgtrace.run.startups import Figure, StartUp, weights

#: A remainder smaller than this (GB) is rounding, not a row.
_NOISE_GB = 0.01
#: A model's pools the log sizes, as rows: figure -> row.
_POOLS = (("kv_gb", "KV pool"), ("mamba_gb", "Mamba state"))
#: The last row: what a start-up that got to its end left, or the last free memory of one the log shows no end of.
LEFT, LAST_FREE = "left at the end", "free at its last figure"


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One use of GPU memory."""

    #: What took it.
    item: str
    #: GB.
    gb: float
    #: 1-based log line it was read from (None for a remainder).
    line: int | None
    #: The rank whose line it is ("" for a remainder, or a line with no rank prefix).
    rank: str = ""


@dataclass(frozen=True)
class WhatIf:
    """The budget that gives a wanted pool, and the memory it would leave."""

    #: The budget's value that gives the pool (None if no value in [0, 1] does).
    mem_fraction_static: float | None
    #: The wanted pool, GB.
    kv_gb: float
    #: The tokens it holds at this run's bytes per token (None without them).
    tokens: int | None
    #: GB left at the end with that pool (None without the figures).
    left_gb: float | None
    #: The reserve the release's default heuristic keeps, with its inputs.
    reserve: Reserve
    #: Why the left memory is a concern, "" if it is not.
    warning: str
    #: The figures the left memory was computed from.
    basis: str


def ledger(run: StartUp) -> tuple[LedgerRow, ...]:
    """The rows of *run*'s ledger; the first is the total (free before the weights), the rest split it, in the
    order the start-up took them (a draft loaded before the target's pool: its weights before that pool)."""
    target, draft = run.target, run.draft
    before = target.get("avail_before_weights_gb")
    if before is None:
        return ()
    rows = [LedgerRow("free before the weights", before.value, before.line, before.rank)]
    if run.draft_first and draft:
        rows += _weights_rows("", target) + _weights_rows("draft ", draft)
        rows += _pool_rows("", target, draft.get("avail_after_weights_gb"))
        rows += _pool_rows("draft ", draft, target.get("avail_after_pool_gb"))
    else:
        for label, figures in (("", target), ("draft ", draft)):
            rows += _weights_rows(label, figures) + _pool_rows(label, figures, figures.get("avail_after_weights_gb"))
    for label, figures in (("CUDA graphs", target), ("draft CUDA graphs", draft)):
        if "graph_gb" in figures:
            rows.append(_row(label, figures["graph_gb"]))
    used = sum(row.gb for row in rows[1:])
    # What is free last: left at the end; else the free memory after the last pools, when no row is of a later
    # line (0.4's graphs' end prints no free memory); else nothing, and the rest is not known.
    pools_left = [f for f in (target.get("avail_after_pool_gb"), draft.get("avail_after_pool_gb")) if f is not None]
    latest = max(pools_left, key=lambda f: f.line) if pools_left else None
    if latest is not None and any(row.line is not None and row.line > latest.line for row in rows[1:]):
        latest = None
    final = run.left or latest
    remainder = before.value - used - (final.value if final is not None else 0.0)
    if remainder >= _NOISE_GB:  # below zero: the figures' rounding over ranks, not memory
        rows.append(LedgerRow("not shown in the log" if final is not None else "not known", _gb(remainder), None))
    if final is not None:
        item = (LEFT if finished(run) else LAST_FREE) if run.left is not None else "free after the pools"
        rows.append(_row(item, final))
    return tuple(rows)


def finished(run: StartUp) -> bool:
    """Whether the log shows the start-up to its end: ready, or its scheduler's line printed (what is free then is
    what it left); else it was cut, died or was stopped before."""
    return run.end.ready or run.end is Ended.INITIALISED


def what_if(
    run: StartUp | None, fraction: float | None, want_gb: float, bytes_per_token: float | None, reserve: Reserve
) -> WhatIf:
    """The pool *want_gb* with budget *fraction*: tokens, memory left given this run's use after the pool
    (unknown without a start-up)."""
    tokens = int(want_gb * (1 << 30) // bytes_per_token) if bytes_per_token else None
    kv = run.target.get("kv_gb") if run is not None else None
    left = run.left if run is not None else None
    if run is None or kv is None or left is None or fraction is None:
        return WhatIf(fraction, want_gb, tokens, None, reserve, "", "")
    more = want_gb - kv.value
    draft_kv = run.draft.get("kv_gb")
    draft_more = draft_kv.value * more / kv.value if draft_kv and kv.value else 0.0
    left_gb = left.value - more - draft_more
    basis = f"{left.value:.2f} GB left now (line {left.line}) - {more:.2f} GB more target pool"
    if draft_kv:
        basis += f" - {draft_more:.2f} GB more draft pool (it holds as many tokens as the target's)"
    warnings = [f"the pool does not fit: {-left_gb:.2f} GB short at the end"] if left_gb < 0 else []
    if reserve.gb is not None and left_gb < reserve.gb:
        warnings.append(
            f"{left_gb:.2f} GB left is below the {reserve.gb:.2f} GB the release's default heuristic "
            f"({reserve.where}) keeps for activations, with {_inputs(reserve.used)}"
        )
    warning = "; ".join(warnings)
    return WhatIf(fraction, want_gb, tokens, left_gb, reserve, warning, basis)


def _weights_rows(label: str, figures: Mapping[str, Figure]) -> list[LedgerRow]:
    loaded = weights(figures)
    return [_row(f"{label}weights", loaded)] if loaded is not None else []


def _pool_rows(label: str, figures: Mapping[str, Figure], after: Figure | None) -> list[LedgerRow]:
    """A model's pools the log sizes (its KV pool, a hybrid model's Mamba state), and the rest of what its pools
    took: the free memory just before them (*after*) less the free memory after them and those pools."""
    rows = [_row(f"{label}{item}", figures[name]) for name, item in _POOLS if name in figures]
    pool, kv, state = figures.get("avail_after_pool_gb"), figures.get("kv_gb"), figures.get("mamba_gb")
    if after and pool and kv:
        other = after.value - pool.value - kv.value - (state.value if state else 0.0)
        rows.append(LedgerRow(f"{label}other pool memory", _gb(other), pool.line, pool.rank))
    elif after and pool:  # no KV line (0.4's first releases print none): the pools together
        rows.append(LedgerRow(f"{label}pools", _gb(after.value - pool.value), pool.line, pool.rank))
    return rows


def _row(item: str, figure: Figure) -> LedgerRow:
    return LedgerRow(item, _gb(figure.value), figure.line, figure.rank)


def _gb(value: float) -> float:
    """Two decimals, never below zero: a residue of the log's rounding is 0.00 (and never -0.00)."""
    return max(0.0, round(value, 2)) + 0.0


def _inputs(used: Mapping[str, Any]) -> str:
    """``name=value`` pairs; whole numbers read from a log as floats are shown whole."""
    return ", ".join(f"{name}={written(value)}" for name, value in sorted(used.items()))
