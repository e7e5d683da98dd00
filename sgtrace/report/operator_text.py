"""The operator's parts of ``explain``: the answer, the start-ups, the ledger with its bar, the what-if."""

from __future__ import annotations

import textwrap

from sgtrace.analyses.causes import Why, matches
from sgtrace.analyses.explain import Explanation
from sgtrace.analyses.figures import written
from sgtrace.analyses.ledger import LAST_FREE, LEFT, LedgerRow, WhatIf, finished
from sgtrace.analyses.operator import Context, Multiplied, explained
from sgtrace.run.messages import QUANTITIES, quote
from sgtrace.run.startups import StartUp, fraction, weights

#: Columns of the ledger's bar, its two ends included.
BAR_WIDTH = 80
#: A pool within this many GB of the prediction (or 1 %) is the prediction: no cap lowered it.
_MARKS = {
    "weights": "W",
    "KV pool": "K",
    "Mamba state": "M",
    "other pool memory": "o",
    "draft weights": "w",
    "draft KV pool": "k",
    "draft Mamba state": "m",
    "draft other pool memory": "p",
    "CUDA graphs": "G",
    "draft CUDA graphs": "g",
    "pools": "P",
    "draft pools": "q",
    "not shown in the log": "?",
    "not known": "?",
    LEFT: ".",
    LAST_FREE: ".",
    "free after the pools": ",",
}


def answer(budget: str, result: Explanation, context: Context) -> str:
    """One paragraph: the pool the formula gives, its arithmetic beside the usual reading, the cap that binds,
    what is left, and what the lines cannot say."""
    run = explained(context)
    parts: list[str] = []
    if run is not None:
        latest = ""
        if context.run == _latest_complete(context.runs):  # complete: ready, or its pool sized and it did not die
            latest = " (the latest to size its pool; not ready in the log)"
            if run.end.ready:
                latest = " (the latest complete one)"
        parts.append(f"Start-up {context.run} of {len(context.runs)}{latest}:")
    product = context.multiplied
    if result.kv_budget_gb is None:
        parts.append(_unevaluated(budget, result))
        parts.append(_shown(run))
    else:
        where = f" ({product.site.path}:{product.site.line})" if product else ""
        if result.kv_budget_gb <= 0:
            parts.append(
                f"the budget formula{where} gives no pool ({result.kv_budget_gb:.2f} GB per GPU): the weights take"
                " more than the fraction gives weights and pools together"
            )
        elif result.shares:
            parts.append(
                f"the budget formula{where} gives {result.kv_budget_gb:.2f} GB per GPU for the KV pool and for"
                f" {_paid(result)}"
            )
        else:
            parts.append(f"the budget formula{where} gives a KV pool of {result.kv_budget_gb:.2f} GB per GPU")
        if result.observed_kv_gb is not None:
            tokens = f", {result.observed_tokens:.0f} tokens" if result.observed_tokens else ""
            parts[-1] += f"; the log shows {result.observed_kv_gb:.2f} GB{tokens}{_pools_of(run)}{_without(result)}."
        else:
            parts[-1] += "."
    parts.extend(
        f"{name} = {value:g} is implied by the log's own pool:"
        f" {'no server_args= line gives it' if name == budget else 'no line gives it'}, and the release's formula"
        " gives that pool with it (assuming no cap bound the pool)."
        for name, value in sorted(result.implied.items())
    )
    parts.append(_arithmetic(budget, result, context) or _multiplies(budget, result, context))
    parts.append(_tokens(result))
    parts.append(_binding(result, context))
    parts.append(_verdicts(budget, run, context))
    if run is not None and run.left is not None:  # the ledger's last row, where there is a ledger
        parts.append(_left(run, run.left.value, run.left.line))
    if result.assumptions and result.kv_budget_gb is not None:
        count = len(result.assumptions)
        parts.append(
            f"The release's code was read with {count} assumption{'' if count == 1 else 's'} about the model"
            ' that the log does not show (see "assumed"; --model-config PATH decides those about its config).'
        )
    if run is not None and run.doubts:
        parts.append("The log's lines cannot say for sure that all of them belong to this start-up (see the notes).")
    text = " ".join(part for part in parts if part)
    return text[:1].upper() + text[1:]


def _left(run: StartUp, gb: float, line: int) -> str:
    """The memory free at the end: left unused by a start-up that got ready (or whose scheduler sized the pool);
    of one the log shows no end of (cut during its graphs' capture, dead, stopped), the last figure it printed."""
    if finished(run):
        return f"{gb:.2f} GB is left unused at the end (line {line})."
    if run.end.died:
        return f"{gb:.2f} GB was free at its last figure before it died (line {line})."
    if run.end.stopped:
        return f"{gb:.2f} GB was free at its last figure before it was stopped (line {line})."
    return f"{gb:.2f} GB was free at the last figure the log shows (line {line}); the log ends before the start-up did."


def _tokens(result: Explanation) -> str:
    """The pool in tokens by the release's own cell size for the model, beside the log's tokens and its own bytes
    per token when they differ."""
    cell = result.cell
    if cell is None or cell.tokens is None or result.kv_budget_gb is None or result.kv_budget_gb <= 0:
        return ""
    said = (
        f"At {cell.per_token:,} bytes a token (the release's cell size for this model, {cell.path}:{cell.line}),"
        f" that is {cell.tokens:,} tokens"
    )
    if cell.rounded is not None and cell.rounded != cell.tokens:
        said += f" ({cell.rounded:,} in pages of {cell.page})"
    if result.observed_tokens and cell.as_run is not None:
        apart = abs(cell.as_run - result.observed_tokens) / result.observed_tokens * 100
        said += (
            f" on this release; for the pool of the log's own order (sized before its draft) the cell gives"
            f" {cell.as_run:,}, and the log shows {result.observed_tokens:,.0f} ({apart:.2g} % apart)"
        )
    elif result.observed_tokens:
        apart = abs(cell.tokens - result.observed_tokens) / result.observed_tokens * 100
        said += f"; the log shows {result.observed_tokens:,.0f} ({apart:.2g} % apart)"
        per_token = result.bytes_per_token
        if per_token and abs(per_token - cell.per_token) > 0.01 * cell.per_token:
            said += f", and its pool holds {per_token:,.0f} bytes a token: the log's model or KV type is another"
    return said + "."


def _pools_of(run: StartUp | None) -> str:
    """The pools the log's figure adds up, when it is more than one KV pool (a state pool, a window pool)."""
    if run is None:
        return ""
    parts = [(what, gb) for model, what, gb, _, _ in run.pools if model == "target"]
    if len(parts) < 2 and "swa_pool_gb" not in run.target:
        return ""
    if "swa_pool_gb" in run.target:
        state = [f"{gb:.2f} GB of Mamba state" for what, gb in parts if what == "mamba"]
        return " (a sliding-window model's two KV pools, as SGLang sums them" + "".join(f", {s}" for s in state) + ")"
    names = {"kv": "KV", "mamba": "Mamba state"}
    return " (" + " + ".join(f"{gb:.2f} GB of {names.get(what, what)}" for what, gb in parts) + ")"


def _paid(result: Explanation) -> str:
    """The shares the budget pays for besides the KV pool: what the release's code takes out of it first, where,
    and the log's line of each, or that it has none."""
    said = []
    for share in result.shares:
        by = f"{share.function} ({share.path}:{share.line})" if share.function else f"{share.path}:{share.line}"
        line = quote(share.pool.value) if share.pool is not None else ""
        if share.shown is not None and share.gb is not None:
            seen = f"the log's {line} line shows {share.gb:.2f} GB, line {share.shown}"
        else:
            seen = f"the log has no {line} line" if line else "the log has no line of it"
        said.append(f"{share.what}, which {by} takes out of it first ({seen})")
    return "; and ".join(said)


def _without(result: Explanation) -> str:
    """What the log's pool leaves out of what the budget pays for: the shares it shows no line of."""
    unshown = [share.what for share in result.shares if share.shown is None]
    return f", and no line of {' or '.join(unshown)}" if unshown else ""


def _verdicts(budget: str, run: StartUp | None, context: Context) -> str:
    """SGLang's own verdicts on this start-up's memory, and why it died (with the fraction that would have fitted)."""
    if run is None:
        return ""
    said = []
    chosen = run.verdicts.get("mem_fraction_static")
    if chosen is not None and run.death is None:
        said.append(f"SGLang chose {budget} = {chosen.value:g} itself (line {chosen.line}).")
    profiled, cap = run.verdicts.get("profiled_tokens"), run.verdicts.get("cap_tokens")
    if profiled is not None:
        also = f" than the {cap.value:.0f} tokens --max-total-tokens asks for" if cap is not None else ""
        empty = ": the memory the fraction leaves for the pool is below zero" if profiled.value <= 0 else ""
        gave = f"SGLang's profile of the pool gave {profiled.value:.0f} tokens (line {profiled.line})"
        said.append(f"{gave}, fewer{also}{empty}.")
    if run.death is not None:
        line, words = run.death
        said.append(f"It died at line {line}: {_short(words)}")
        needed = run.verdicts.get("fraction_needed")
        asked = run.verdicts.get("mem_fraction_static")
        if needed is not None:
            said.append(f"SGLang's message says a {budget} above {needed.value:g} leaves memory for the pool.")
        elif context.needed is not None and (asked is None or context.needed > asked.value):
            said.append(
                f"By the release's formula the pool is empty at {budget} = {context.needed:.3f}"
                f"{f' (it was {asked.value:g})' if asked is not None else ''}: a larger one leaves memory for it."
            )
    return " ".join(said)


def _short(text: str, most: int = 160) -> str:
    flat = " ".join(text.split())
    flat = flat if len(flat) <= most else flat[: most - 3].rstrip() + "..."
    return flat if flat.endswith((".", "!", ")")) else flat + "."


def _unevaluated(budget: str, result: Explanation) -> str:
    """Why the formula gives no pool: the inputs it needs, or no statement of it that was found or that runs."""
    if result.missing:
        return f"the formula cannot be evaluated: it needs {', '.join(sorted(result.missing))}."
    if not result.steps:
        return f"no budget formula was found: no statement computes the pool from {budget}."
    return "the formula cannot be evaluated: none of its statements runs for this start-up."


def _shown(run: StartUp | None) -> str:
    """What the start-up's lines show, when the formula cannot use them all."""
    if run is None:
        return ""
    shown = []
    for name, label in (("weights_gb", "of weights"), ("avail_before_weights_gb", "free before them")):
        if name in run.target:
            shown.append(f"{run.target[name].value:.2f} GB {label}")
    if "kv_gb" in run.target:
        swa = " (a sliding-window model's two pools)" if "swa_pool_gb" in run.target else ""
        shown.append(f"a KV pool of {run.target['kv_gb'].value:.2f} GB{swa}")
    if "mamba_gb" in run.target:
        shown.append(f"{run.target['mamba_gb'].value:.2f} GB of Mamba state")
    tokens = run.target.get("kv_tokens") or run.max_total_num_tokens
    if tokens is not None:
        shown.append(f"{tokens.value:.0f} tokens")
    return f"Its lines show {', '.join(shown)}." if shown else ""


def _multiplies(budget: str, result: Explanation, context: Context) -> str:
    product = context.multiplied
    if product is None or product.value is None:
        return ""
    value = result.inputs.get(budget)
    return (
        f"{budget}{'' if value is None else f' = {value:g}'} multiplies {product.source},"
        f" {product.value:.2f} GB here: {_what(product)}{_ranks_note(context)}."
    )


def _what(product: Multiplied) -> str:
    """What the budget multiplies, with its article ("the GPU memory free before...", "a quantity ...")."""
    return (
        f"the {QUANTITIES[product.quantity].split(' (')[0]}" if product.quantity else "a quantity the log does not name"
    )


def _arithmetic(budget: str, result: Explanation, context: Context) -> str:
    """The formula's arithmetic with this run's figures, beside the reading operators start from."""
    product, fraction, pool = context.multiplied, result.inputs.get(budget), result.kv_budget_gb
    if product is None or product.value is None or pool is None or not isinstance(fraction, (int, float)):
        return ""
    static = fraction * product.value
    used = static - pool
    if used < 0:
        return ""
    weights = result.inputs.get("weights_gb")
    draft = context.draft_before[0] if context.draft_before is not None else None
    of = " (estimated from the model's weight files)" if context.origins.get("weights_gb", "").startswith(
        "estimated"
    ) else ""  # fmt: skip
    where = f" ({context.order.before[-1].where})" if context.order is not None else ""
    if isinstance(weights, (int, float)) and draft is not None and abs(used - weights - draft) <= 0.05:
        taken = (
            f"{weights:.2f} GB of weights{of} and the draft's {draft:.2f} GB, which this release loads before it"
            f" sizes the pool{where}"
        )
    elif isinstance(weights, (int, float)) and draft is not None and used - weights - draft > 0:
        taken = (
            f"{used:.2f} GB in use before the pool ({weights:.2f} GB of weights{of}, the draft's {draft:.2f} GB,"
            f" which this release loads before it sizes the pool{where}, and {used - weights - draft:.2f} GB more)"
        )
    elif isinstance(weights, (int, float)) and f"{weights:.2f}" == f"{used:.2f}":
        taken = f"{used:.2f} GB of weights{of}"
    elif isinstance(weights, (int, float)) and abs(used - weights) <= 0.05:  # each of the log's figures rounded
        taken = f"{used:.2f} GB in use before the pool (the weights{of}, {weights:.2f} GB as the log rounds them)"
    elif isinstance(weights, (int, float)):
        taken = (
            f"{used:.2f} GB in use before the pool ({weights:.2f} GB of weights{of} and {used - weights:.2f} GB more)"
        )
    else:
        taken = f"{used:.2f} GB in use before the pool"
    text = (
        f"{budget} multiplies {product.source}, {_what(product)}{_ranks_note(context)}:"
        f" {fraction:g} x {product.value:.2f} = {static:.2f} GB for weights and"
        f" {'the pools' if result.shares else 'KV'} together;"
        f" minus {taken} = {pool:.2f} GB."
    )
    after = result.inputs.get("avail_after_weights_gb")
    if product.quantity != "avail_after_weights_gb" and isinstance(after, (int, float)):
        text += (
            f" Not {fraction:g} x {after:.2f} = {fraction * after:.2f} GB: the fraction is of the memory"
            f" {'free before the weights' if product.quantity == 'avail_before_weights_gb' else product.source},"
            " not of what is free after them."
        )
    return text


def runs_table(context: Context) -> list[str]:
    """The start-ups, oldest first, the explained one marked."""
    lines = [f"start-ups in the log ({len(context.runs)}; --run N explains another):"]
    lines.append("     run  started              fraction  weights GB  KV pool GB   tokens  ended")
    for run in context.runs:
        mark = "*" if run.index == context.run else " "
        tokens = run.target.get("kv_tokens") or run.max_total_num_tokens
        loaded = weights(run.target)
        lines.append(
            f"  {mark} {run.index:>3}  {run.started:<20} {_show(fraction(run)):>8}"
            f"  {format(loaded.value, '.2f') if loaded else '-':>10}"
            f"  {_gb(run, 'kv_gb'):>10}  {format(tokens.value, '.0f') if tokens else '-':>7}  {run.ended}"
        )
    if context.runs and context.runs[0].index > 1:
        lines.append(f"  ({context.runs[0].index - 1} older start-ups are not kept)")
    return lines


def run_details(run: StartUp) -> list[str]:
    """How it was told from the one before, models, ranks and the ranks that disagree."""
    lines = [f"begun by: {run.begun_by} (line {run.first_line})"] if run.begun_by else []
    named = f"{len(run.ranks)} ({', '.join(run.ranks) or 'no rank prefix'})" if run.ranks else "none"
    lines.append(f"ranks with memory lines: {named}")
    if run.model_types:
        lines.append(f"target model: {run.model_types[0]}")
    if run.draft:
        draft = run.model_types[1] if len(run.model_types) > 1 else "unnamed"
        kv = run.draft.get("kv_gb")
        pool = f", its own KV pool {kv.value:.2f} GB (line {kv.line}), not the target's" if kv else ""
        lines.append(f"draft model:  {draft}{pool}")
    for name, values in run.disagreements:
        shown = ", ".join(f"{rank} {written(value)}" for rank, value in values)
        lines.append(f"ranks disagree on {name}: {shown}")
    return lines


def ledger_lines(run: StartUp, rows: tuple[LedgerRow, ...]) -> list[str]:
    """The stacked bar (80 columns) above the table of rows."""
    if not rows:
        return []
    # the rank the figures after the weights are of (the binding one); without them no rank is known to be it
    after = [run.target[n].rank for n in ("avail_after_weights_gb", "weights_gb") if n in run.target]
    rank = next((r for r in after if r), "")
    ranks = list(dict.fromkeys(row.rank for row in rows if row.rank))
    named = rank or (ranks[0] if len(ranks) == 1 else "")  # the rank the bar is of, when one is
    if rank:
        head = f" ({rank}, the one with the least free)"
    elif named:
        head = f" ({named})"
    else:
        head = f" (figures of {', '.join(ranks)}: the log shows no rank's whole start-up)" if ranks else ""
    lines = [f"memory of one GPU{head}:", bar(rows)]
    for row in rows:
        mark = _MARKS.get(row.item, " ")
        line = f"line {row.line}" if row.line is not None else ""
        if row.rank and row.rank != named and row.line is not None:
            line += f" ({row.rank})"
        if row.item == "free before the weights" and "avail_before_weights_gb" in run.derived:
            line += f" (the free and the used memory of its {quote('load_end')})"
        lines.append(f"  {mark} {row.item:<26} {row.gb:>7.2f} GB  {line}".rstrip())
    return lines


def bar(rows: tuple[LedgerRow, ...]) -> str:
    """``|WWWW…KK…G.|``: the rows after the first (the total) as shares of BAR_WIDTH - 2 columns."""
    width = BAR_WIDTH - 2
    parts = [row for row in rows[1:] if row.gb > 0]
    total = sum(row.gb for row in parts) or 1.0
    cells = [max(1, round(row.gb / total * width)) for row in parts]
    while sum(cells) > width:
        cells[cells.index(max(cells))] -= 1
    if cells:
        cells[cells.index(max(cells))] += width - sum(cells)
    return "|" + "".join(_MARKS.get(row.item, "#") * n for row, n in zip(parts, cells, strict=True)) + "|"


def what_if_lines(budget: str, wanted: WhatIf) -> list[str]:
    """The budget that gives the wanted pool, and what it would leave."""
    tokens = f" ({wanted.tokens} tokens)" if wanted.tokens is not None else ""
    lines = [f"what-if: a KV pool of {wanted.kv_gb:.2f} GB{tokens}"]
    if wanted.mem_fraction_static is None:
        lines.append(f"  {wanted.warning or f'no {budget} in [0, 1] gives it with this run figures'}")
        return lines
    lines.append(f"  {budget} = {wanted.mem_fraction_static:.4f} (the release's formula, solved)")
    if wanted.left_gb is not None:
        lines.append(f"  left at the end: {wanted.left_gb:.2f} GB = {wanted.basis}")
    reserve = wanted.reserve
    if reserve.gb is not None:
        lines.append(f"  the release's default reserve: {reserve.gb:.2f} GB ({reserve.where})")
    else:
        where = reserve.where or "not found"
        lines.append(f"  the release's default reserve: unknown ({where}; needs {reserve.missing})")
    if wanted.warning:
        lines.extend(textwrap.wrap(f"warning: {wanted.warning}", 100, initial_indent="  ", subsequent_indent="    "))
    return lines


def _binding(result: Explanation, context: Context) -> str:
    predicted, observed = result.kv_budget_gb, result.observed_kv_gb
    if result.implied:
        return f"Which cap binds is not known: {', '.join(sorted(result.implied))} was worked out from the pool itself."
    if predicted is None:
        return "Which cap binds is not known without the prediction."
    if observed is None:
        count = result.observed_tokens
        tokens = f": the log gives its {count:.0f} tokens, not its size" if count else ""
        return (
            f"Which cap binds is not known without the pool the server allocated{tokens} (its {quote('kv')}"
            " line, or --set kv_gb=...)."
        )
    run = explained(context)
    if context.draft_before is not None and run is not None and not run.draft_first:
        draft, _ = context.draft_before
        before = predicted + draft
        same = matches(before, observed)
        return (
            f"The log's run loaded its draft after sizing the pool (its release's order), so its pool"
            f" ({observed:.2f} GB) is {'the formula' if same else 'not the formula'}'s without the draft's weights"
            f" ({before:.2f} GB); this release loads the draft first: the same start-up gets {predicted:.2f} GB on it."
        )
    if matches(predicted, observed):
        return "The log's pool is the formula's: no cap lowered it."
    gap = observed - predicted
    apart = f"The log's pool is {abs(gap):.2f} GB {'larger than' if gap > 0 else 'below'} the formula's"
    if len(result.causes) == 1 and result.causes[0].why is Why.CAP and result.causes[0].supported:
        return f"{apart}: {result.causes[0].words}."  # a min that bound it, and nothing else the numbers allow
    if result.causes:
        allowed = "; ".join(f"{c.words}{' (the log supports this)' if c.supported else ''}" for c in result.causes)
        return f"{apart}; what the numbers allow: {allowed}."
    # weigh found nothing: a statement of the formula's own is never its cap, nor its base write or a rounding
    return (
        f"{apart}, and nothing the numbers allow explains it: no cap that takes memory off the pool applies or may"
        " outside the formula's own statements, and the log shows no other fraction and no memory that moved."
    )


def _ranks_note(context: Context) -> str:
    run = explained(context)
    if run is None or len(run.ranks) < 2:
        return ""
    figure = run.target.get("avail_before_weights_gb")
    line = f", line {figure.line}" if figure else ""
    return f" (the least over {len(run.ranks)} ranks, as SGLang takes it{line})"


def _latest_complete(runs: tuple[StartUp, ...]) -> int:
    complete = [run.index for run in runs if run.complete]
    return complete[-1] if complete else 0


def _gb(run: StartUp, name: str, spec: str = ".2f") -> str:
    figure = run.target.get(name)
    return format(figure.value, spec) if figure else "-"


def _show(value: object) -> str:
    return "-" if value is None else written(value)
