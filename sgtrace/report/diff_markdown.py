"""Markdown of ``diff`` and ``check`` for a pull-request comment: the verdict, what matters, the rest folded."""

from __future__ import annotations

from sgtrace.analyses.diff import CapDiff, CapPair
from sgtrace.analyses.explain import Step
from sgtrace.analyses.figures import written
from sgtrace.analyses.verdict import Verdict
from sgtrace.model import Cap
from sgtrace.report.diff_parts import (
    Statuses,
    code_diff,
    conditions,
    counts,
    flat,
    gate,
    gb,
    pool_sentence,
    statuses,
    step_value,
    where,
    why_not,
)
from sgtrace.report.provenance import described, order_line


def render(old: str, new: str, attribute: str, budget: str, result: CapDiff, verdict: Verdict) -> str:
    """Verdict, summary table, changed caps in full, moved caps in a table; added, removed, formula folded."""
    mark = "❌" if verdict.failed else "✅"
    lines = [f"## sgtrace: `{attribute}` below the `{budget}` budget, {old} → {new}", ""]
    lines += _trees(old, new, result)
    if result.pool is not None:
        lines += [f"**{pool_sentence(old, new, result.pool)}**", ""]
    lines += [f"{mark} {counts(verdict)}; {gate(verdict)}.", ""]
    lines += _summary(old, new, result)
    before, after = statuses(result.pool)
    if result.unreadable:
        lines += [f"### Caps in files the new tree could not analyse ({len(result.unreadable)})", ""]
        lines += [f"- `{where(c)}` {c.category}: {e.message} (line {e.line})" for c, e in result.unreadable] + [""]
    if result.changed:
        lines += [f"### Changed caps ({len(result.changed)})", ""]
        for pair in result.changed:
            lines += _changed(pair, before, after)
    if result.moved:
        lines += [f"### Moved caps ({len(result.moved)}): the same code, conditions and knobs elsewhere", ""]
        lines += _moved_table(result.moved, before, after)
    lines += _folded(f"Added caps ({len(result.added)})", _cap_table(result.added, after))
    lines += _folded(f"Removed caps ({len(result.removed)})", _cap_table(result.removed, before))
    if result.budget_changed is not None:
        pool = result.pool
        formula = _steps(old, result.budget_changed.old, pool.old.explanation.steps if pool else ())
        formula += _steps(new, result.budget_changed.new, pool.new.explanation.steps if pool else ())
        lines += _folded("Budget formula, old and new (the steps explain evaluates)", formula)
    return "\n".join(lines).rstrip() + "\n"


def _summary(old: str, new: str, result: CapDiff) -> list[str]:
    """The few figures that decide: pool, formula steps, inputs only the new release needs."""
    rows = []
    pool = result.pool
    if pool is not None:
        before, after = pool.old.explanation.kv_budget_gb, pool.new.explanation.kv_budget_gb
        left, right = gb(before), gb(after)
        left += f" ({why_not(pool, 'old')})" if before is None else ""
        right += f" ({why_not(pool, 'new')})" if after is None else ""
        rows.append(("KV pool for this start-up", left, right))
        whole = after is not None
        for item in pool.new_inputs:
            given = f"`{written(item.value)}` (--set)" if item.value is not None else "not given"
            given += " (the prediction is whole without it)" if item.value is None and whole else ""
            where = item.where.split(": ", 1)[0]
            rows.append((f"`{item.name}`", "not an input", f"{given}; computed at `{where}`" if where else given))
    if result.budget_changed is not None:
        rows.append(("budget formula", _chain(result.budget_changed.old), _chain(result.budget_changed.new)))
    if not rows:
        return []
    return [f"| | {old} | {new} |", "|---|---|---|", *(f"| {a} | {b} | {c} |" for a, b, c in rows), ""]


def _chain(steps: tuple[Step, ...]) -> str:
    return " → ".join(f"`{step.target or 'result'}`" for step in steps) or "none found"


def _changed(pair: CapPair, before: Statuses, after: Statuses) -> list[str]:
    old, new = pair.old, pair.new
    moved = f", moved from `{where(old)}` ({old.function})" if "place" in pair.differences else ""
    lines = [f"**{new.category}** `{where(new)}` ({new.function}){moved}", ""]
    if "guard" in pair.differences:
        lines += [f"- when, before: `{_tick(conditions(old))}`", f"- when, after: `{_tick(conditions(new))}`"]
    if "knobs" in pair.differences:
        lines.append(f"- knobs: {_knobs(old)} → {_knobs(new)}")
    if pair.renamed:
        lines.append("- renamed: " + ", ".join(f"`{a}` → `{b}`" for a, b in pair.renamed))
    if pair.copies:
        lines.append(f"- the same code is also added at {', '.join(f'`{where(c)}`' for c in pair.copies)}")
    if old in before or new in after:
        lines.append(f"- this start-up: {before.get(old, ('-', ''))[0]} → {after.get(new, ('-', ''))[0]}")
    if lines[-1]:  # after the bullets, a blank line before the code
        lines.append("")
    if "code" in pair.differences:
        lines += ["```diff", *code_diff(pair), "```"]
    else:
        lines.append(f"`{_tick(flat(new.code))}`")
    return [*lines, ""]


def _moved_table(pairs: tuple[CapPair, ...], before: Statuses, after: Statuses) -> list[str]:
    header = "| category | from | to | code | renamed |"
    run = bool(before or after)
    lines = [header + (" this start-up |" if run else ""), "|---" * (6 if run else 5) + "|"]
    for p in pairs:
        renamed = ", ".join(f"`{a}` → `{b}`" for a, b in p.renamed)
        row = f"| {p.new.category} | `{where(p.old)}` | `{where(p.new)}` | {_cell(flat(p.new.code))} | {renamed} |"
        if run:
            row += f" {before.get(p.old, ('-', ''))[0]} → {after.get(p.new, ('-', ''))[0]} |"
        lines.append(row)
    return [*lines, ""]


def _cap_table(caps: tuple[Cap, ...], found: Statuses) -> list[str]:
    if not caps:
        return []
    run = bool(found)
    lines = ["| category | where | code | when |" + (" this start-up |" if run else ""),
             "|---" * (5 if run else 4) + "|"]  # fmt: skip
    for c in caps:
        row = f"| {c.category} | `{where(c)}` | {_cell(flat(c.code))} | {_cell(conditions(c))} |"
        lines.append(row + (f" {found.get(c, ('-', ''))[0]} |" if run else ""))
    return lines


def _steps(name: str, steps: tuple[Step, ...], evaluated: tuple[Step, ...]) -> list[str]:
    values = {(s.path, s.line): s for s in evaluated}
    lines = [f"{name}:", ""]
    for index, step in enumerate(steps, 1):
        done = values.get((step.path, step.line))
        value = ""
        if done is not None:
            value = f" {step_value(done)}"
        lines.append(f"{index}. `{step.path}:{step.line}` {_cell(flat(step.code))}{value}")
    return [*lines, ""]


def _folded(summary: str, body: list[str]) -> list[str]:
    if not body:
        return []
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _knobs(cap: Cap) -> str:
    return ", ".join(f"`{k}`" for k in cap.knobs) or "none"


def _tick(text: str) -> str:
    return text.replace("`", "'")


def _cell(text: str) -> str:
    escaped = _tick(text).replace("|", "\\|")
    return f"`{escaped}`" if text else ""


def _trees(old: str, new: str, result: CapDiff) -> list[str]:
    """Which code each side is (its commit, tag, version, local changes), and a warning when NEW is the older."""
    sides = (("old", old, result.trees[0]), ("new", new, result.trees[1]))
    lines = [f"- {side}: `{name}` ({said})" for side, name, tree in sides if (said := described(tree))]
    if note := order_line(result.order, old, new):
        lines.append(f"- ⚠️ {note.removeprefix('note: ')}")
    return [*lines, ""] if lines else []
