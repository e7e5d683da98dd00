"""What ``explain`` tells an operator beyond the formula: the start-ups, the ledger, the what-if.

``build`` picks the start-up, turns it into the formula's facts (its server
arguments, the target's figures, the release's ServerArgs defaults for what the
log leaves out, and what the log shows about the run), checks ``--set``, and
assembles the ledger and the what-if.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from sgtrace.analyses.explain import Explanation, explain, multiplied, quantity_of, solve, statuses, value_of
from sgtrace.analyses.ledger import LedgerRow, WhatIf, ledger, what_if
from sgtrace.analyses.logs import QUANTITIES, LogError
from sgtrace.analyses.logstream import DEFAULT_MAX_BYTES, relevant_lines
from sgtrace.analyses.reached import Paths
from sgtrace.analyses.release_args import ReleaseArgs, Text, default_reserve, mentioning, read_args
from sgtrace.analyses.startups import StartUp, facts, pick, split
from sgtrace.model import BudgetSite, Cap, SourceFile


class BadInput(Exception):
    """A log or a ``--set`` that cannot be used (exit code 2)."""


@dataclass(frozen=True)
class Multiplied:
    """The quantity the budget's complement multiplies in the formula, and its value in this run."""

    #: The statement.
    site: BudgetSite
    #: The quantity, as the code spells it.
    source: str
    #: Its value in this run, GB.
    value: float | None
    #: The log quantity it is (see logs.QUANTITIES), None if the name says nothing.
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
) -> tuple[Explanation, Context]:
    """Explain the chosen start-up (or --set values alone) with the release's formula; see the module doc.

    *paths* are the calls that reach the caps' functions (the graph's ``reach``), for the caps' statuses.
    """
    texts = mentioning(files, budget)  # read once, searched twice
    args = read_args(texts, budget)
    conditions = [g for cap in caps for g in cap.conditions] + (list(paths.conditions()) if paths is not None else [])
    _check_settings(settings, args, sites, conditions, budget)
    if want.run is not None and not 1 <= want.run <= len(runs):
        raise BadInput(f"--run {want.run}: the log has {len(runs)} start-up(s)")
    chosen = next((run for run in runs if run.index == pick(runs, want.run)), None) if runs else None
    known: dict[str, Any] = dict(facts(chosen)) if chosen else {}
    known.update(settings)
    status_facts = {**{k: v for k, v in args.defaults.items() if k not in known}, **known, **_shown(known)}
    # the formula with what the run shows; the caps' statuses also with the release's defaults
    result = dataclasses.replace(explain(sites, [], budget, known), caps=statuses(caps, status_facts, paths))
    found = multiplied(sites, budget)
    product = Multiplied(found[0], found[1], value_of(found[1], known), quantity_of(found[1])) if found else None
    wanted = _want(texts, sites, budget, known, args, chosen, result, want)
    rows = ledger(chosen) if chosen else ()
    return result, Context(tuple(runs), chosen.index if chosen else 0, rows, product, wanted)


def _shown(known: Mapping[str, Any]) -> dict[str, Any]:
    """What the log shows about the run in the terms SGLang's conditions use: the pool explained is the target's."""
    shown: dict[str, Any] = {"is_draft_worker": False}
    if "speculative_algorithm" in known:
        shown["spec_algorithm.is_none()"] = known["speculative_algorithm"] is None
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
        raise BadInput("--want-tokens needs the bytes per token: a log with 'KV Cache is allocated. #tokens: N'")
    else:
        gb = float(want.tokens or 0) * per_token / (1 << 30)
    if chosen is None:
        raise BadInput("--want-kv-gb and --want-tokens need a log (what the run used after the pool)")
    reserve = default_reserve(texts, args, budget, {**args.defaults, **known})
    if result.kv_budget_gb is None:
        needs = ", ".join(f"--set {name}=VALUE" for name in sorted(result.missing))
        return WhatIf(None, gb, None, None, reserve, f"the formula cannot be evaluated: it needs {needs}", "")
    return what_if(chosen, solve(sites, budget, known, gb), gb, per_token, reserve)


def _check_settings(
    settings: Mapping[str, Any], args: ReleaseArgs, sites: list[BudgetSite], conditions: list[str], budget: str
) -> None:
    """Every --set names something the formula, a condition on the caps' way, ServerArgs or the log knows.

    Numbers where numeric.
    """
    words = {budget, "gpu_mem", *QUANTITIES, *args.fields}
    for text in [site.code for site in sites] + conditions:
        words.update(_identifiers(text))
    numeric = {budget, "gpu_mem", *QUANTITIES, *args.numeric}
    for name, value in settings.items():
        if name not in words:
            raise BadInput(f"--set {name}: not an input of this release's formula, caps or ServerArgs")
        if name in numeric and value is not None and (isinstance(value, (str, bool))):
            raise BadInput(f"--set {name}={value}: not a number")


def _identifiers(code: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", code))
