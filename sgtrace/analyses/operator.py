"""What ``explain`` tells an operator beyond the formula: the start-ups, the ledger, the what-if.

``build`` picks the start-up, turns it into the formula's facts (see
:mod:`sgtrace.analyses.inputs`: its server arguments and figures, the server's
configuration, ``--set``; the release's ServerArgs defaults for what they leave
out, and what the log shows about the run), solves the formula for the one
input it misses when the log shows the pool (``implied``), and assembles the
ledger and the what-if.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from sgtrace.analyses.explain import (
    Explanation,
    explain,
    imply,
    multiplied,
    quantity_of,
    solve,
    statuses,
    value_of,
)
from sgtrace.analyses.figures import card_only
from sgtrace.analyses.inputs import BadInput, Given, check_settings, gather, settable
from sgtrace.analyses.ledger import LedgerRow, WhatIf, ledger, what_if
from sgtrace.analyses.reached import Paths
from sgtrace.analyses.release_args import ReleaseArgs, Text, default_reserve, mentioning, read_args
from sgtrace.model import BudgetSite, Cap, SourceFile
from sgtrace.run.lines import LogError
from sgtrace.run.messages import quote
from sgtrace.run.startups import StartUp, pick, split
from sgtrace.run.stream import DEFAULT_MAX_BYTES, relevant_lines


@dataclass(frozen=True)
class Multiplied:
    """The quantity the budget's complement multiplies in the formula, and its value in this run."""

    #: The statement.
    site: BudgetSite
    #: The quantity, as the code spells it.
    source: str
    #: Its value in this run, GB.
    value: float | None
    #: The log quantity it is (see run.messages.QUANTITIES), None if the name says nothing.
    quantity: str | None


@dataclass(frozen=True)
class Context:
    """The start-ups of the log, the one explained, and what follows from it."""

    #: Every start-up, oldest first (empty without a log).
    runs: tuple[StartUp, ...]
    #: The 1-based start-up explained (0 without a log).
    run: int
    #: Its ledger.
    ledger: tuple[LedgerRow, ...]
    #: The quantity the budget multiplies.
    multiplied: Multiplied | None
    #: The what-if, when a pool was wanted.
    what_if: WhatIf | None
    #: Inputs the log's lines did not give directly -> where their values came from.
    origins: dict[str, str] = field(default_factory=dict)
    #: What the operator should know (a version that differs, the card's size given for free memory, ...).
    notes: tuple[str, ...] = ()
    #: For a start-up that died of its memory: the fraction below which the release's formula gives no pool.
    needed: float | None = None


@dataclass(frozen=True, slots=True)
class Want:
    """What the operator asked for."""

    #: The start-up to explain (1-based), None for the latest complete one.
    run: int | None = None
    #: A wanted KV pool, GB.
    kv_gb: float | None = None
    #: A wanted number of tokens.
    tokens: int | None = None


def read_runs(log: bytes | str | BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES) -> list[StartUp]:
    """The start-ups of a log given as bytes, text or a binary stream (maybe gzip); BadInput if it has none."""
    try:
        runs = split(relevant_lines(log, max_bytes))
    except LogError as exc:
        raise BadInput(str(exc)) from exc
    if not runs:
        raise BadInput("no SGLang start-up in the log (no server_args= line, service start or memory figures)")
    return runs


def build(
    files: Sequence[SourceFile],
    sites: list[BudgetSite],
    caps: list[Cap],
    budget: str,
    runs: list[StartUp],
    settings: Mapping[str, Any],
    want: Want,
    paths: Paths | None = None,
    given: Given | None = None,
) -> tuple[Explanation, Context]:
    """Explain the chosen start-up (or the operator's figures alone) with the release's formula; see the module doc.

    *paths* are the calls that reach the caps' functions (the graph's ``reach``), for the caps' statuses;
    *given* is what the operator gave besides the log (its ``settings`` are *settings*).
    """
    given = dataclasses.replace(given or Given(), settings=settings)
    texts = mentioning(files, budget)  # read once, searched twice
    args = read_args(texts, budget)
    conditions = [g for cap in caps for g in cap.conditions] + (list(paths.conditions()) if paths is not None else [])
    check_settings(settings, args, sites, conditions, budget)
    chosen = _chosen(runs, want.run)
    inputs = gather(chosen, given, args)
    known, origins = inputs.known, dict(inputs.origins)
    result = explain(sites, [], budget, known)
    implied = imply(sites, budget, known, result)
    if implied:
        known = {**known, **implied}
        result = explain(sites, [], budget, known)
        origins.update({name: "implied by the log's pool (no cap bound it)" for name in implied})
    status_facts = {**{k: v for k, v in args.defaults.items() if k not in known}, **known, **_shown(known, chosen)}
    # the formula with what the run shows; the caps' statuses also with the release's defaults
    result = dataclasses.replace(
        result, caps=statuses(caps, status_facts, paths), implied=implied, missing=_hints(result.missing, known)
    )
    found = multiplied(sites, budget)
    product = Multiplied(found[0], found[1], value_of(found[1], known), quantity_of(found[1])) if found else None
    wanted = _want(texts, sites, budget, known, args, chosen, result, want)
    rows = ledger(chosen) if chosen else ()
    notes = inputs.notes + ((CARD_NOTE,) if card_only(known) else ()) + _doubts(chosen)
    needed = _needed(sites, budget, known, chosen)
    context = Context(tuple(runs), chosen.index if chosen else 0, rows, product, wanted, origins, notes, needed)
    return result, context


def _needed(sites: list[BudgetSite], budget: str, known: Mapping[str, Any], run: StartUp | None) -> float | None:
    """For a start-up that died: the budget at which the release's formula gives an empty pool (any more and
    there is one), when the formula can be solved for it."""
    if run is None or run.death is None:
        return None
    facts = {k: v for k, v in known.items() if k != budget}
    value = solve(sites, budget, facts, 0.0)
    return round(value, 3) if value is not None and 0.0 < value < 1.0 else None


def explained(context: Context) -> StartUp | None:
    """The start-up *context* explains, None without a log."""
    return next((run for run in context.runs if run.index == context.run), None)


def _chosen(runs: list[StartUp], wanted: int | None) -> StartUp | None:
    """The start-up to explain: *wanted*, else the latest complete one, else the latest; None without a log."""
    if wanted is not None:
        last = runs[-1].index if runs else 0
        if not 1 <= wanted <= last:
            raise BadInput(f"--run {wanted}: the log has {last} start-up(s)")
        if wanted < runs[0].index:
            raise BadInput(
                f"--run {wanted}: only the latest {len(runs)} start-ups are kept ({runs[0].index} to {last})"
            )
    if not runs:
        return None
    index = pick(runs, wanted)
    return next(run for run in runs if run.index == index)


#: What the card's size is not.
CARD_NOTE = (
    "gpu_gb is the card's size, not the memory free before the weights (CUDA's context, NCCL and other"
    " processes take some of it): give avail_before_weights_gb, or avail_after_weights_gb and weights_gb"
)


def _hints(missing: Mapping[str, str], known: Mapping[str, Any]) -> dict[str, str]:
    """How to supply each missing input; the card's size, when given, is said not to be the free memory."""
    hints = dict(missing)
    for name in missing:
        if quantity_of(name) == "avail_before_weights_gb" and card_only(known):
            hints[name] += f"; {CARD_NOTE}"
    return hints


def _doubts(run: StartUp | None) -> tuple[str, ...]:
    if run is None:
        return ()
    return tuple(f"start-up {run.index}: {doubt}" for doubt in run.doubts)


def _shown(known: Mapping[str, Any], run: StartUp | None) -> dict[str, Any]:
    """What the log shows about the run in the terms SGLang's conditions use: the pool explained is the target's,
    and a draft model loaded means speculative decoding is on."""
    shown: dict[str, Any] = {"is_draft_worker": False}
    if "speculative_algorithm" in known:
        shown["spec_algorithm.is_none()"] = known["speculative_algorithm"] is None
    elif run is not None and run.draft:
        shown["spec_algorithm.is_none()"] = False
    return shown


def _want(
    texts: Sequence[Text],
    sites: list[BudgetSite],
    budget: str,
    known: Mapping[str, Any],
    args: ReleaseArgs,
    chosen: StartUp | None,
    result: Explanation,
    want: Want,
) -> WhatIf | None:
    if want.kv_gb is None and want.tokens is None:
        return None
    per_token = result.bytes_per_token
    if want.kv_gb is not None:
        gb = want.kv_gb
    elif per_token is None:
        raise BadInput(f"--want-tokens needs the bytes per token: a log with {quote('kv')} and its #tokens")
    else:
        gb = float(want.tokens or 0) * per_token / (1 << 30)
    reserve = default_reserve(texts, args, budget, {**args.defaults, **known})
    if result.kv_budget_gb is None:
        needs = ", ".join(f"--set {name}=VALUE" for name in sorted(result.missing))
        return WhatIf(None, gb, None, None, reserve, f"the formula cannot be evaluated: it needs {needs}", "")
    return what_if(chosen, solve(sites, budget, known, gb), gb, per_token, reserve)


def inputs(
    files: Sequence[SourceFile], sites: list[BudgetSite], caps: list[Cap], budget: str, paths: Paths | None = None
) -> frozenset[str]:
    """The names ``--set`` may supply for a release (what :func:`build` accepts: see ``check_settings``)."""
    args = read_args(mentioning(files, budget), budget)
    conditions = [g for cap in caps for g in cap.conditions] + (list(paths.conditions()) if paths is not None else [])
    return frozenset(settable(args, sites, conditions, budget))


__all__ = ["BadInput", "Context", "Given", "Multiplied", "Want", "build", "explained", "inputs", "read_runs"]
