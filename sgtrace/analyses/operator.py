"""What ``explain`` tells an operator beyond the formula: the start-ups, the ledger, the what-if.

``build`` picks the start-up, turns it into the formula's facts (see
:mod:`sgtrace.analyses.inputs`: its server arguments and figures, the server's
configuration, ``--set``; the release's ServerArgs defaults for what they leave
out, and what the log shows about the run), solves the formula for the one
input it misses when the log shows the pool (``implied``), and assembles the
ledger and the what-if.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from sgtrace.analyses.causes import weigh
from sgtrace.analyses.cells import cell_of
from sgtrace.analyses.evaluate import Code, Evaluator, Facts, Known, ModelConfig, Profile, Value
from sgtrace.analyses.explain import (
    AT_SIZING,
    Cell,
    Explanation,
    Missing,
    Observation,
    Reading,
    Resolve,
    bound_by,
    evaluate,
    explain,
    fact,
    holds_for,
    imply,
    multiplied,
    quantity_of,
    solve,
    statuses,
    unreached,
    value_of,
)
from sgtrace.analyses.figures import card_only, number
from sgtrace.analyses.inputs import BadInput, Given, check_settings, gather, settable
from sgtrace.analyses.ledger import LedgerRow, WhatIf, ledger, what_if
from sgtrace.analyses.order import Order, draft_source, loads_before_sizing
from sgtrace.analyses.profile import SGLANG, EngineProfile
from sgtrace.analyses.reached import Paths
from sgtrace.analyses.release_args import ReleaseArgs, Text, default_reserve, mentioning, read_args
from sgtrace.analyses.shares import shares
from sgtrace.model import BudgetSite, Cap, SourceFile
from sgtrace.run.lines import LogError
from sgtrace.run.messages import Kind, quote
from sgtrace.run.startups import Figure, StartUp, pick, split_log
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
    #: The weight loads the release runs before it measures the memory its pool is sized from.
    order: Order | None = None
    #: The draft's weights (GB, line) taken out of the memory the pool is sized from, when the release loads the
    #: draft first and the log shows them.
    draft_before: tuple[float, int] | None = None
    #: ``--env`` names this release's registry does not declare (left out; only when not refused).
    env_unread: tuple[str, ...] = ()
    #: The values of the inputs in *origins* (what decides a cap may be no input of the formula).
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Want:
    """What the operator asked for."""

    #: The start-up to explain (1-based), None for the latest complete one.
    run: int | None = None
    #: A wanted KV pool, GB.
    kv_gb: float | None = None
    #: A wanted number of tokens.
    tokens: int | None = None
    #: Whether each cap's status for the run and the pool's tokens by the release's cell size are worked out (a
    #: history asks for the pools alone).
    statuses: bool = True


def read_runs(log: bytes | str | BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES) -> list[StartUp]:
    """The start-ups of a log given as bytes, text or a binary stream (maybe gzip); BadInput if it has none."""
    try:
        runs, unfiled = split_log(relevant_lines(log, max_bytes))
    except LogError as exc:
        raise BadInput(str(exc)) from exc
    if not runs:
        words = "no SGLang start-up in the log (no server_args= line, service start or memory figures)"
        said = [
            {
                "line": event.line.number,
                "kind": "death" if event.kind is Kind.DEATH else "verdict",
                "text": event.line.text[:160],
                "figures": dict(event.figures),
            }
            for event in unfiled
        ]
        if unfiled:
            telling = max(unfiled, key=lambda event: len(event.figures))  # the verdict with figures, else the first
            first = telling.line
            figures = ", ".join(f"{name} {value:g}" for name, value in telling.figures.items())
            words += (
                f"; line {first.number} is SGLang's {'death' if telling.kind is Kind.DEATH else 'verdict'}"
                f" '{first.text[:160]}'{f' ({figures})' if figures else ''}, but none of its start-up's lines is in"
                " the log (a server run at --log-level warning leaves them out: run it at the default, info)"
            )
        raise BadInput(words, details=_no_start_up(said))
    return runs


def _no_start_up(said: list[dict[str, Any]]) -> dict[str, Any]:
    """What a log with no start-up shows and lacks, for the error's JSON."""
    return {
        "found": {"start_ups": 0, "sglang_said": said},
        "missing": [
            {
                "what": "a start-up's lines: a server_args= line, a service start or a memory figure"
                f" ({quote('load_begin')}, {quote('kv')}, {quote('scheduler')})",
                "supply": "the server's whole log at --log-level info (the default): journalctl -u UNIT, docker logs"
                " CONTAINER, kubectl logs POD, or the file its output went to",
            }
        ],
    }


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
    code: Code | None = None,
    loads: Paths | None = None,
    sized: Paths | None = None,
) -> tuple[Explanation, Context]:
    """Explain the chosen start-up (or the operator's figures alone) with the release's formula; see the module doc.

    *paths* are the calls that reach the caps' functions (the graph's ``reach``), for the caps' statuses;
    *given* is what the operator gave besides the log (its ``settings`` are *settings*); *code* the tree's
    files for the evaluator (read on demand); *loads* the calls that run the weight loads (the graph's
    ``loads``) and *sized* the calls that run the functions sizing the pool (the graph's ``sizing``; else
    *paths*), for the order of start-up.
    """
    given = dataclasses.replace(given or Given(), settings=settings)
    texts = mentioning(files, budget)  # read once, searched twice
    args = read_args(texts, budget, files)
    conditions = [g for cap in caps for g in cap.conditions] + (list(paths.conditions()) if paths is not None else [])
    check_settings(settings, args, sites, conditions, budget)
    chosen = _chosen(runs, want.run)
    inputs = gather(chosen, given, args, budget)
    known, origins = inputs.known, dict(inputs.origins)
    code = code or Code(files)
    # the order of start-up for this run: its conditions (the speculative algorithm) with the facts so far
    early = resolver(code, sites, known, origins, args, chosen, given)
    up = sized if sized is not None else paths
    holds = holds_for(known, up, early) if up is not None else None
    order = loads_before_sizing(code, _functions(code, sites), up, loads, holds)
    draft_before = _draft_before(order, chosen, known)
    if draft_before is not None and AT_SIZING not in known:
        after, (draft, line) = known["avail_after_weights_gb"], draft_before
        assert order is not None
        measured = _free_after_draft(chosen) if line else None
        if measured is not None:  # what the start-up measured itself, the draft's other allocations in it
            known = {**known, AT_SIZING: measured.value}
            origins[AT_SIZING] = (
                f"free after the draft's weights (line {measured.line}): this release loads the draft before it"
                f" sizes the pool ({order.before[-1].where}), as this start-up did"
            )
        else:
            known = {**known, AT_SIZING: round(after - draft, 2)}
            origins[AT_SIZING] = (
                f"{after:g} free after the target's weights - {draft:g} GB of the draft's weights"
                f" ({draft_source(line)}): this release loads the draft before it sizes the pool"
                f" ({order.before[-1].where})"
            )
    env_unread = _unread_env(code, given.env, given.strict_env)
    given = dataclasses.replace(given, env={k: v for k, v in given.env.items() if k not in env_unread})
    shown = {name: value for name, value in _shown(known, chosen).items() if name not in known}
    resolve = resolver(code, sites, {**known, **shown}, {**{n: _SHOWN for n in shown}, **origins}, args, chosen, given)
    reading = Reading(resolve, code.guards)
    way = unreached(known, paths, resolve, functools.partial(_function_at, code)) if paths is not None else None
    result = explain(sites, [], budget, known, resolve=resolve, guards=code.guards, unreached=way)
    # what the log's pool implies, the log's run sized it: in its own order (its draft after its pools or not)
    as_run = known if chosen is None or chosen.draft_first else {k: v for k, v in known.items() if k != AT_SIZING}
    implied = imply(sites, budget, as_run, result, reading)
    if implied:
        known = {**known, **implied}
        result = explain(sites, [], budget, known, resolve=resolve, guards=code.guards, unreached=way)
        origins.update({name: "implied by the log's pool (no cap bound it)" for name in implied})
    status_facts = {**{k: v for k, v in args.defaults.items() if k not in known}, **known, **_shown(known, chosen)}
    # the formula with what the run shows; the caps' statuses also with the release's defaults
    result = dataclasses.replace(
        result,
        caps=statuses(caps, status_facts, paths, resolve, _sized_in(code, result)) if want.statuses else (),
        implied=implied,
        missing=_hints(result.missing, known),
    )
    cell = cell_of(code, result, resolve) if want.statuses else None
    if cell is not None and draft_before is not None and chosen is not None and not chosen.draft_first:
        # the log's run sized its pool before its draft: its tokens are the cell's for the pool without that
        assert result.kv_budget_gb is not None
        own = cell_of(code, dataclasses.replace(result, kv_budget_gb=result.kv_budget_gb + draft_before[0]), resolve)
        cell = dataclasses.replace(cell, as_run=own.tokens if own is not None else None)
    result = dataclasses.replace(
        result,
        cell=_rounded(cell, result.caps, status_facts),
        bound=bound_by(result.caps, status_facts, result.observed_tokens, resolve),
    )
    result = dataclasses.replace(result, shares=shares(result, chosen, resolve))
    result = dataclasses.replace(result, causes=weigh(sites, budget, known, origins, result, chosen, reading))
    found = multiplied(sites, budget)
    product = Multiplied(found[0], found[1], value_of(found[1], known), quantity_of(found[1])) if found else None
    wanted = _want(texts, sites, budget, known, args, chosen, result, want, reading)
    rows = ledger(chosen) if chosen else ()
    notes = inputs.notes + ((CARD_NOTE,) if card_only(known) else ()) + _doubts(chosen)
    needed = _needed(sites, budget, known, chosen, reading)
    context = Context(
        tuple(runs), chosen.index if chosen else 0, rows, product, wanted, origins, notes, needed, order, draft_before,
        env_unread, {name: known[name] for name in origins if name in known},
    )  # fmt: skip
    return result, context


def _rounded(cell: Cell | None, found: Sequence[tuple[Cap, str, str]], facts: Mapping[str, Any]) -> Cell | None:
    """*cell* with its tokens after the page rounding that applies to the run: each round cap whose status is
    ``applies`` (``x = x // page_size * page_size``), its statement evaluated with the tokens for what it
    rounds and the run's facts for the rest (the page size)."""
    if cell is None or cell.tokens is None:
        return cell
    tokens, page = cell.tokens, None
    for cap, status, _ in found:
        if cap.category != "round" or status != "applies":
            continue
        try:
            parsed = ast.parse(cap.code.strip()).body[0]
        except (SyntaxError, IndexError):
            continue
        node = parsed.value if isinstance(parsed, (ast.Assign, ast.AnnAssign)) else None
        if node is None:
            continue
        sizes = [n for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv)]
        if not sizes:
            continue
        lookup = functools.partial(_one, cap.target.rsplit(".", 1)[-1], tokens, facts)
        try:
            value = evaluate(node, lookup)
            size = evaluate(sizes[0].right, lookup)
        except (Missing, TypeError, ValueError, ArithmeticError):
            return cell
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, size))
        if numbers and size > 0:
            tokens, page = int(value), int(size)  # --set gives 64.0 for a page of 64
    return dataclasses.replace(cell, rounded=tokens, page=page) if page is not None else cell


def _one(target: str, value: Any, facts: Mapping[str, Any], name: str) -> Any:
    """*value* for *target*, else the run's *facts*: a statement evaluated with one value of the run's."""
    if name == target and value is not None:
        return value
    return fact(name, facts)


def _sized_in(code: Code, result: Explanation) -> list[tuple[str, str]]:
    """(path, qualname) of the functions that hold the statements of the formula that predicted the pool: the
    run went through them (none without a prediction)."""
    return _enclosing(code, result.sized_at)


def _functions(code: Code, sites: Sequence[BudgetSite]) -> list[tuple[str, str]]:
    """(path, qualname) of the functions of the formula's statements, in their order."""
    return _enclosing(code, sorted((s.path, s.line) for s in sites))


def _function_at(code: Code, path: str, line: int) -> tuple[str, str] | None:
    """(path, qualname) of the function that holds *path*:*line*, None outside any."""
    return next(iter(_enclosing(code, [(path, line)])), None)


def _enclosing(code: Code, places: Iterable[tuple[str, int]]) -> list[tuple[str, str]]:
    """(path, qualname) of the function that holds each (path, line), in their order (a place outside any
    function: none)."""
    found = []
    for path, line in places:
        function, cls = code.enclosing(path, line)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((path, f"{cls.name}.{function.name}" if cls is not None else function.name))
    return found


def _unread_env(code: Code, env: Mapping[str, str], strict: bool) -> tuple[str, ...]:
    """The ``--env`` names the release neither declares in its registry nor reads by name; with *strict*,
    BadInput for the first (a typo would change nothing and be answered with confidence), with a did-you-mean
    among the names its registry files declare."""
    evaluator = Evaluator(code, Facts())
    unread = tuple(name for name in sorted(env) if evaluator.registry(name) is None and not evaluator.reads_env(name))
    if unread and strict:
        raise BadInput(_unknown_env(code, unread[0]))
    return unread


def _unknown_env(code: Code, name: str) -> str:
    """The message for an ``--env`` name the release does not declare, with a did-you-mean (the class-body
    names of the files that read the environment: read only on this error's way)."""
    declared = re.compile(rb"^[ \t]+([A-Z][A-Z0-9_]{2,})\s*(?::[^=\n]*)?=\s*[A-Za-z_][\w.]*\(", re.M)
    names = {
        m.group(1).decode()
        for path in code.by_path
        if b"environ" in (text := code.text(path))
        for m in declared.finditer(text)
    }
    close = difflib.get_close_matches(name, sorted(names), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"--env {name}: no environment variable this release's registry declares or its code reads{hint}"


def _draft_before(order: Order | None, run: StartUp | None, known: Mapping[str, Any]) -> tuple[float, int] | None:
    """The draft's weights (GB, line; line 0: ``--set draft_weights_gb``) the release takes out before it sizes
    the pool: when it loads the draft first, the memory after the target's weights is known, and the draft's
    weights are given or the start-up's lines show them."""
    if order is None or not order.draft_first or not isinstance(known.get("avail_after_weights_gb"), (int, float)):
        return None
    given = number(known.get("draft_weights_gb"))
    if given is not None:
        return given, 0
    if run is None or "weights_gb" not in run.draft:
        return None
    figure = run.draft["weights_gb"]
    return float(figure.value), figure.line


def _free_after_draft(run: StartUp | None) -> Figure | None:
    """The memory free after the draft's weights, when the start-up's lines show it loaded its draft before it sized
    its pool (the free memory its sizing measured: the draft's weights and whatever the draft took besides them
    out). The target's pool line must follow the draft's: a log filtered of its pool lines does not show the order,
    and a draft loaded after the pool measures what the pool left."""
    if run is None or not run.draft_first:
        return None
    measured, pool = run.draft.get("avail_after_weights_gb"), run.target.get("kv_gb")
    return measured if measured is not None and pool is not None and pool.line > measured.line else None


def resolver(
    code: Code,
    sites: Sequence[BudgetSite],
    known: Mapping[str, Any],
    origins: Mapping[str, str],
    args: ReleaseArgs,
    run: StartUp | None,
    given: Given,
    profile: EngineProfile = SGLANG,
) -> Resolve:
    """The release's code evaluated for this run (:mod:`sgtrace.analyses.evaluate`): the facts with their
    origins, the release's ServerArgs defaults, the model's config (``--model-config``, else the architecture
    the log names), ``--env``; a call that measures free memory in a function of the formula is the free
    memory the log shows when the pool is sized."""
    sizing = {id(f) for site in sites if (f := code.enclosing(site.path, site.line)[0]) is not None}

    def observe(name: str, path: str, line: int) -> Value | None:
        if name not in profile.measures_free_memory or id(code.enclosing(path, line)[0]) not in sizing:
            return None
        return Known(Observation("avail_after_weights_gb", f"{name}() at {path}:{line}"))

    facts = Facts(
        known, {**{n: "the log" for n in known}, **origins}, args.defaults, "the release's ServerArgs default",
        _model(given, run), given.env, frozenset(given.settings),
    )  # fmt: skip
    evaluator = Evaluator(code, facts, evaluator_profile(profile, observe))
    memo: dict[tuple[str, str, int], Value] = {}

    def resolve(name: str, path: str, line: int) -> Value:
        key = (name, path, line)
        if key not in memo:
            # a question the parse allowance cut short is asked again (with an allowance of its own, and the
            # files the first asking parsed), a few times at most
            for _ in range(ASKED):
                refused = code.refused
                memo[key] = evaluator.at(name, path, line)
                if isinstance(memo[key], Known) or code.refused == refused:
                    break
        return memo[key]

    return resolve


#: Times one question is asked while the parse allowance cuts it short.
ASKED = 3


def evaluator_profile(
    profile: EngineProfile, observe: Callable[[str, str, int], Value | None] | None = None
) -> Profile:
    """What the evaluator is told of the engine (*observe*: the calls that stand for a measurement)."""
    return Profile(profile.words, observe or Profile().observe)


def _model(given: Given, run: StartUp | None) -> ModelConfig | None:
    """The model's config: the operator's ``config.json``, else the architecture the log's weights line names."""
    if given.model_config is not None:
        return ModelConfig(dict(given.model_config), True, given.model_config_origin or "--model-config")
    if run is not None and run.model_types:
        return ModelConfig({"architectures": [run.model_types[0]]}, False, "the log's weights line")
    return None


def _needed(
    sites: list[BudgetSite], budget: str, known: Mapping[str, Any], run: StartUp | None, reading: Reading
) -> float | None:
    """For a start-up that died: the budget at which the release's formula gives an empty pool (any more and
    there is one), when the formula can be solved for it."""
    if run is None or run.death is None:
        return None
    facts = {k: v for k, v in known.items() if k != budget}
    value = solve(sites, budget, facts, 0.0, reading=reading)
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
    return tuple(f"start-up {run.index}: {doubt}" for doubt in (*run.doubts, *run.cautions))


#: Where what the log shows about the run in SGLang's terms comes from.
_SHOWN = "the log: the pool explained is the target's"


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
    reading: Reading,
) -> WhatIf | None:
    if want.kv_gb is None and want.tokens is None:
        return None
    # the log's own bytes per token, else the release's cell size for the model (before launch)
    per_token = result.bytes_per_token or (float(result.cell.per_token) if result.cell is not None else None)
    if want.kv_gb is not None:
        gb = want.kv_gb
    elif per_token is None:
        raise BadInput(
            f"--want-tokens needs the bytes per token: a log with {quote('kv')} and its #tokens, or the model's"
            " config.json (--model-config) where the release's cell size can be evaluated"
        )
    else:
        gb = float(want.tokens or 0) * per_token / (1 << 30)
    reserve = default_reserve(texts, args, budget, {**args.defaults, **known})
    if result.kv_budget_gb is None:
        needs = ", ".join(f"--set {name}=VALUE" for name in sorted(result.missing))
        return WhatIf(None, gb, None, None, reserve, f"the formula cannot be evaluated: it needs {needs}", "")
    return what_if(chosen, solve(sites, budget, known, gb, reading=reading), gb, per_token, reserve)


def inputs(
    files: Sequence[SourceFile], sites: list[BudgetSite], caps: list[Cap], budget: str, paths: Paths | None = None
) -> frozenset[str]:
    """The names ``--set`` may supply for a release (what :func:`build` accepts: see ``check_settings``)."""
    args = read_args(mentioning(files, budget), budget, files)
    conditions = [g for cap in caps for g in cap.conditions] + (list(paths.conditions()) if paths is not None else [])
    return frozenset(settable(args, sites, conditions, budget))


__all__ = ["BadInput", "Context", "Given", "Multiplied", "Want", "build", "explained", "inputs", "read_runs"]
