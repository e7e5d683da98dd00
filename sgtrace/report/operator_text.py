"""The operator's parts of ``explain``: the answer, the start-ups, the ledger with its bar, the what-if."""

from __future__ import annotations

import textwrap

from sgtrace.analyses.explain import Explanation
from sgtrace.analyses.ledger import LedgerRow, WhatIf
from sgtrace.analyses.logs import QUANTITIES
from sgtrace.analyses.operator import Context
from sgtrace.analyses.startups import StartUp

#: Columns of the ledger's bar, its two ends included.
BAR_WIDTH = 80
#: A pool within this many GB of the prediction (or 1 %) is the prediction: no cap lowered it.
_MATCH_GB = 0.05
_MARKS = {
    "weights": "W",
    "KV pool": "K",
    "other pool memory": "o",
    "draft weights": "w",
    "draft KV pool": "k",
    "draft other pool memory": "p",
    "CUDA graphs": "G",
    "draft CUDA graphs": "g",
    "not shown in the log": "?",
    "left at the end": ".",
}


def answer(budget: str, result: Explanation, context: Context) -> str:
    """One paragraph: the pool the formula gives, what the budget multiplies, the cap that binds, what is left."""
    parts: list[str] = []
    if context.runs:
        latest = " (the latest complete one)" if context.run == _latest_complete(context.runs) else ""
        parts.append(f"Start-up {context.run} of {len(context.runs)}{latest}:")
    product = context.multiplied
    if result.kv_budget_gb is None:
        parts.append(f"the formula cannot be evaluated: it needs {', '.join(sorted(result.missing))}.")
    else:
        where = f" ({product.site.path}:{product.site.line})" if product else ""
        parts.append(f"the budget formula{where} gives a KV pool of {result.kv_budget_gb:.2f} GB per GPU")
        if result.observed_kv_gb is not None:
            tokens = f", {result.observed_tokens:.0f} tokens" if result.observed_tokens else ""
            parts[-1] += f"; the log shows {result.observed_kv_gb:.2f} GB{tokens}."
        else:
            parts[-1] += "."
    if product and product.value is not None:
        what = QUANTITIES[product.quantity].split(" (")[0] if product.quantity else "a quantity the log does not name"
        value = result.inputs.get(budget)
        parts.append(
            f"{budget}{'' if value is None else f' = {value:g}'} multiplies {product.source},"
            f" {product.value:.2f} GB here:"
            f" the {what}{_ranks_note(context)}."
        )
    parts.append(_binding(result))
    left = next((row for row in context.ledger if row.item == "left at the end"), None)
    if left is not None:
        parts.append(f"{left.gb:.2f} GB is left unused at the end (line {left.line}).")
    return " ".join(parts)


def runs_table(context: Context) -> list[str]:
    """The start-ups, oldest first, the explained one marked."""
    lines = [f"start-ups in the log ({len(context.runs)}; --run N explains another):"]
    lines.append("     run  started            fraction  weights GB  KV pool GB   tokens  ended")
    for run in context.runs:
        mark = "*" if run.index == context.run else " "
        fraction = run.server_args.get("mem_fraction_static")
        lines.append(
            f"  {mark} {run.index:>3}  {run.started:<18} {_show(fraction):>8}  {_gb(run, 'weights_gb'):>10}"
            f"  {_gb(run, 'kv_gb'):>10}  {_gb(run, 'kv_tokens', '.0f'):>7}  {run.ended}"
        )
    return lines


def run_details(run: StartUp) -> list[str]:
    """Models, ranks and the ranks that disagree."""
    lines = [f"ranks: {len(run.ranks)} ({', '.join(run.ranks) or 'no rank prefix'})"]
    if run.model_types:
        lines.append(f"target model: {run.model_types[0]}")
    if run.draft:
        draft = run.model_types[1] if len(run.model_types) > 1 else "unnamed"
        kv = run.draft.get("kv_gb")
        pool = f", its own KV pool {kv.value:.2f} GB (line {kv.line}), not the target's" if kv else ""
        lines.append(f"draft model:  {draft}{pool}")
    for name, values in run.disagreements:
        shown = ", ".join(f"{rank} {value:g}" for rank, value in values)
        lines.append(f"ranks disagree on {name}: {shown}")
    return lines


def ledger_lines(run: StartUp, rows: tuple[LedgerRow, ...]) -> list[str]:
    """The stacked bar (80 columns) above the table of rows."""
    if not rows:
        return []
    rank = next((f.rank for f in run.target.values() if f.rank), "")
    lines = [f"memory of one GPU{f' ({rank}, the one with the least free)' if rank else ''}:", bar(rows)]
    for row in rows:
        mark = _MARKS.get(row.item, " ")
        line = f"line {row.line}" if row.line is not None else ""
        lines.append(f"  {mark} {row.item:<26} {row.gb:>7.2f} GB  {line}")
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


def _binding(result: Explanation) -> str:
    predicted, observed = result.kv_budget_gb, result.observed_kv_gb
    if predicted is None or observed is None:
        return "Without both the prediction and the log's pool, which cap binds is not known."
    if abs(predicted - observed) <= max(_MATCH_GB, predicted * 0.01):
        return "The log's pool is the formula's: no cap lowered it."
    if observed > predicted:
        return f"The log's pool is {observed - predicted:.2f} GB larger than the formula's: another path sized it."
    candidates = [f"{c.path}:{c.line} ({c.category})" for c, s, _ in result.caps if s in ("applies", "unknown")]
    named = f"; it can be {', '.join(candidates[:3])}" if candidates else ""
    return f"The log's pool is {predicted - observed:.2f} GB below the formula's: a cap bound{named}."


def _ranks_note(context: Context) -> str:
    run = context.runs[context.run - 1] if context.runs else None
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
    return f"{value:g}" if isinstance(value, float) else ("-" if value is None else str(value))
