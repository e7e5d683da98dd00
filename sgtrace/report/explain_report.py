"""Text and JSON renderers of ``explain``."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict
from typing import Any

from sgtrace.analyses.explain import Explanation
from sgtrace.analyses.figures import written
from sgtrace.analyses.operator import Context, explained
from sgtrace.model import CapsResult
from sgtrace.report.operator_text import answer, ledger_lines, run_details, runs_table, what_if_lines
from sgtrace.report.provenance import named
from sgtrace.report.provenance import payload as payload_of
from sgtrace.run.startups import StartUp


def render_runs(context: Context) -> str:
    """Only the start-ups of the log (``--runs``)."""
    return "\n".join(runs_table(context)) + "\n"


def render(found: CapsResult, result: Explanation, context: Context) -> str:
    """The answer first; the start-ups, the ledger and the what-if; then each step, the prediction, the caps."""
    lines = [f"the {found.budget} budget of .{found.attribute} in {named(found.root, found.tree)}", ""]
    lines.extend(_wrapped(answer(found.budget, result, context)))
    run = explained(context)
    if run is not None:
        lines += ["", *runs_table(context), "", *run_details(run)]
        if context.ledger:
            lines += ["", *ledger_lines(run, context.ledger)]
    if context.what_if is not None:
        lines += ["", *what_if_lines(found.budget, context.what_if)]
    lines += ["", "inputs:"]
    for name, value in sorted(result.inputs.items()):
        how = context.origins.get(name) or (f"worked out: {result.worked[name]}" if name in result.worked else "")
        origin = f"  ({how})" if how else ""
        lines.append(f"  {name} = {_show(value)}{origin}")
    for name, value in sorted(context.values.items()):  # not the formula's: a cap's (pp_size from PP ranks)
        if name not in result.inputs:
            lines.append(f"  {name} = {_show(value)}  ({context.origins[name]})")
    lines.append("")
    lines.append("formula:")
    for step in result.steps:
        if step.skipped:
            value = f"not applied: {step.skipped}"
        else:
            value = f"= {step.value:.4g}" if step.value is not None else f"(needs {', '.join(step.missing)})"
            value += f" (if {' and '.join(step.when)})" if step.when else ""
        lines.append(f"  {step.path}:{step.line}  {step.code}")
        lines.append(f"      {step.target or 'result'} {value}")
    lines.append("")
    if result.kv_budget_gb is not None:
        lines.append(f"predicted KV budget: {result.kv_budget_gb:.2f} GB")
        if result.cell is not None and result.cell.tokens is not None:
            cell = result.cell
            lines.append(
                f"predicted tokens:    {cell.tokens} (at {cell.per_token} bytes per token, the release's cell size"
                f" for this model: {cell.path}:{cell.line}  {cell.code})"
            )
            if cell.rounded is not None and cell.rounded != cell.tokens:
                lines.append(f"  in pages of {cell.page}: {cell.rounded} tokens")
            if cell.as_run is not None:
                lines.append(f"  for the pool of the log's own order (before its draft): {cell.as_run} tokens")
        elif result.predicted_tokens is not None:
            lines.append(f"predicted tokens:    {result.predicted_tokens} (at the log's own bytes per token)")
        for share in result.shares:  # what the budget pays for besides the KV pool
            seen = f"the log's line {share.shown}: {share.gb:.2f} GB" if share.gb is not None else "no line in the log"
            status = (
                share.status if share.status == "applies" else f"{share.status} by the facts, run by the log's line"
            )
            lines.append(f"  it pays for {share.what} too: {share.path}:{share.line} ({status}; {seen})")
    if result.observed_kv_gb is not None:
        lines.append(f"observed KV cache:   {result.observed_kv_gb:.2f} GB")
    if result.observed_tokens is not None:
        lines.append(f"observed tokens:     {result.observed_tokens:.0f}")
    if result.bytes_per_token is not None:
        lines.append(f"implied bytes/token: {result.bytes_per_token:.0f}")
    if result.caps:
        lines.append("")
        lines.append("caps:")
        for cap, status, why in result.caps:
            binds = f"; it bound the pool: {bound}" if (bound := result.binding(cap)) else ""
            lines.append(f"  {cap.path}:{cap.line}  {cap.category:<8} {status}: {why}{binds}")
    if result.assumptions:
        lines += [
            "",
            "assumed (neither the log nor the model's config shows it; --model-config PATH reads a config.json):",
        ]
        lines.extend(f"  {text}" for text in result.assumptions)
    if result.missing:
        lines.append("")
        needed = "" if result.kv_budget_gb is None else " (for the other statements; the prediction above is whole)"
        lines.append(f"missing inputs, not guessed{needed}:")
        lines.extend(f"  {name}: {how}" for name, how in sorted(result.missing.items()))
    if context.notes:
        lines += ["", "notes:"]
        for note in context.notes:
            lines.extend(textwrap.wrap(note, 100, initial_indent="  ", subsequent_indent="    "))
    return "\n".join(lines) + "\n"


def render_json(found: CapsResult, result: Explanation, context: Context) -> str:
    """``{"kv_budget_gb",...,"caps","missing","runs","run","ledger","answer","implied","assumed","origins","notes"}``,
    and ``"what_if"`` when asked; a cap that bound the pool carries ``"bound"`` (why)."""
    payload: dict[str, Any] = {
        "attribute": found.attribute,
        "budget": found.budget,
        "root": found.root,
        "tree": payload_of(found.tree),
        "kv_budget_gb": result.kv_budget_gb,
        "predicted_tokens": result.predicted_tokens,
        "observed_kv_gb": result.observed_kv_gb,
        "observed_tokens": result.observed_tokens,
        "bytes_per_token": result.bytes_per_token,
        "cell": (
            {
                "bytes_per_token": result.cell.per_token,
                "tokens": result.cell.tokens,
                "path": result.cell.path,
                "line": result.cell.line,
                "code": result.cell.code,
                "why": list(result.cell.why),
                "rounded": result.cell.rounded,
                "page_size": result.cell.page,
                "as_run_tokens": result.cell.as_run,
            }
            if result.cell is not None
            else None
        ),
        "inputs": result.inputs,
        "steps": [
            {
                "path": s.path,
                "line": s.line,
                "code": s.code,
                "target": s.target,
                "value": s.value,
                "missing": list(s.missing),
                "skipped": s.skipped,
                "when": list(s.when),
            }
            for s in result.steps
        ],
        "caps": [
            {"path": c.path, "line": c.line, "category": c.category, "status": status, "why": why}
            | ({"bound": how} if (how := result.binding(c)) else {})
            for c, status, why in result.caps
        ],
        "missing": result.missing,
        "runs": [_run(run) for run in context.runs],
        "run": context.run or None,
        "ledger": [{"item": row.item, "gb": row.gb, "line": row.line, "rank": row.rank} for row in context.ledger],
        "answer": answer(found.budget, result, context),
        "implied": result.implied,
        "causes": [
            {"why": c.why.value, "number": c.number, "words": c.words, "supported": c.supported} for c in result.causes
        ],
        "shares": [
            {
                "what": share.what,
                "path": share.path,
                "line": share.line,
                "function": share.function,
                "status": share.status,
                "pool": share.pool.value if share.pool is not None else None,
                "shown": share.shown,
                "gb": share.gb,
            }
            for share in result.shares
        ],
        "assumed": list(result.assumptions),
        "origins": {**{name: f"worked out: {how}" for name, how in result.worked.items()}, **context.origins},
        "notes": list(context.notes),
        # the release's order of start-up for this run: the weight loads before the pool is sized
        "order": None
        if context.order is None
        else {
            "sizing": context.order.sizing,
            "loads_before": [load.where for load in context.order.before],
            "draft_first": context.order.draft_first,
        },
    }
    if context.what_if is not None:
        wanted = context.what_if
        payload["what_if"] = {
            "mem_fraction_static": wanted.mem_fraction_static,
            "kv_gb": wanted.kv_gb,
            "tokens": wanted.tokens,
            "left_gb": wanted.left_gb,
            "warning": wanted.warning or None,
            "basis": wanted.basis,
            "reserve_gb": wanted.reserve.gb,
            "reserve_where": wanted.reserve.where,
            "reserve_inputs": wanted.reserve.used,
        }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _run(run: StartUp) -> dict[str, Any]:
    return {
        "index": run.index,
        "started": run.started,
        "first_line": run.first_line,
        "complete": run.complete,
        "ended": run.ended,
        "mem_fraction_static": run.server_args.get("mem_fraction_static"),
        "ranks": list(run.ranks),
        "model_types": list(run.model_types),
        "target": {name: asdict(figure) for name, figure in sorted(run.target.items())},
        "draft": {name: asdict(figure) for name, figure in sorted(run.draft.items())},
        "left": asdict(run.left) if run.left else None,
        "disagreements": {name: dict(values) for name, values in run.disagreements},
        "max_total_num_tokens": asdict(run.max_total_num_tokens) if run.max_total_num_tokens else None,
        "begun_by": run.begun_by,
        "derived": list(run.derived),
        "doubts": list(run.doubts),
        "cautions": list(run.cautions),
        "version": list(run.version) if run.version else None,
        "end": run.end.name.lower(),
        "death": {"line": run.death[0], "text": run.death[1]} if run.death else None,
        "verdicts": {name: asdict(figure) for name, figure in sorted(run.verdicts.items())},
        "pools": [
            {"model": model, "what": what, "gb": gb, "tokens": tokens, "line": line}
            for model, what, gb, tokens, line in run.pools
        ],
        "draft_first": run.draft_first,
    }


def _wrapped(paragraph: str) -> list[str]:
    """The paragraph in lines of 100 columns, a product (``0.88 x 94.04``) never cut across two."""
    kept = paragraph.replace(" x ", "\u00a0x\u00a0")
    return [line.replace("\u00a0", " ") for line in textwrap.wrap(kept, 100)]


def _show(given: Any) -> str:
    return written(given) if isinstance(given, float) else repr(given)
