"""The text, Markdown and JSON of ``history``: a timeline, one row per release or commit, the rows whose step
changes something marked, then what each marked step changed."""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate

from sgtrace.analyses.history import Change, History, Stop
from sgtrace.report.diff_parts import counts, flat, pool_sentence, where
from sgtrace.report.diff_report import payload

#: The verdict line names at most this many steps.
_LISTED = 6
#: A marked step lists at most this many caps added, and as many removed.
_LISTED_CAPS = 12
#: A reason a stop was not read, in a table cell: at most this many characters.
_CELL = 70


def render_text(history: History, span: str) -> str:
    """The timeline table, where the first change is, then the marked steps one by one."""
    lines = [*_heading(history, span), ""]
    lines += tabulate(_rows(history, text=True), headers=_headers(history), tablefmt="simple").splitlines()
    lines += ["", *_first(history)] if history.first is not None else []
    lines += _unread(history)
    marked = [change for change in history.changes if change.changes]
    if marked:
        lines += ["", f"the marked steps ({', '.join(history.kinds)} watched; sgtrace diff OLD NEW shows one whole):"]
        for change in marked:
            lines += ["", *_step(history, change)]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(history: History, span: str) -> str:
    """The timeline as a table, the marked steps folded under it (for a pull request or an issue)."""
    title, *rest = _heading(history, span)
    lines = [f"### {title}", "", *(f"{line}  " for line in rest), ""]
    lines += tabulate(_rows(history, text=False), headers=_headers(history), tablefmt="github").splitlines()
    lines += ["", *_first(history)] if history.first is not None else []
    for change in history.changes:
        if change.changes:
            old, new = history.stops[change.old].label, history.stops[change.new].label
            lines += ["", f"<details><summary>{old} → {new}: {change_summary(change)}</summary>", "", "```"]
            lines += [*_step(history, change)[1:], "```", "", "</details>"]
    return "\n".join(lines).rstrip() + "\n"


def render_json(history: History, span: str) -> str:
    """``{"attribute","budget","span","watched","stops":[...],"steps":[...],"first_change"}``; a step is
    ``diff``'s JSON with ``changes`` (whether it changes a kind watched)."""
    found: dict[str, Any] = {
        "attribute": history.attribute,
        "budget": history.budget,
        "span": span,
        "watched": list(history.kinds),
        "stops": [_stop(stop) for stop in history.stops],
        "steps": [
            {
                "changes": change.changes,
                **payload(
                    label(history.stops[change.old]), label(history.stops[change.new]), change.diff, change.verdict
                ),
            }
            for change in history.changes
        ],  # fmt: skip
        "first_change": None,
    }
    if history.first is not None:
        first = history.first
        found["first_change"] = {
            "kinds": list(first.kinds),
            "release": label(history.stops[first.index]) if first.index is not None else None,
            "after": label(history.stops[first.before]),
            "read": first.read,
            "of": len(history.stops),
        }
    return json.dumps(found, indent=2, ensure_ascii=False) + "\n"


def verdict_line(history: History) -> str:
    """One line for a CI log: how many stops were read, and the steps that change what is watched."""
    read = sum(1 for stop in history.stops if stop.read)
    failed = sum(1 for stop in history.stops if stop.error)
    parts = [f"{len(history.stops)} in all, {read} read" + (f", {failed} could not be" if failed else "")]
    marked = [c for c in history.changes if c.changes]
    steps = ", ".join(f"{history.stops[c.old].label} -> {history.stops[c.new].label}" for c in marked[:_LISTED])
    steps += f" and {len(marked) - _LISTED} more" if len(marked) > _LISTED else ""
    parts.append(f"{len(marked)} step(s) change {'/'.join(history.kinds)}" + (f": {steps}" if steps else ""))
    if history.first is not None:
        parts.append(_first(history)[0])
    return "; ".join(parts)


def _heading(history: History, span: str) -> list[str]:
    stops = history.stops
    first, last = label(stops[0]), label(stops[-1])
    lines = [f"the history of .{history.attribute} below the {history.budget} budget: {len(stops)} stops, "
             f"{first} to {last} ({span})"]  # fmt: skip
    pooled = next((c.diff.pool for c in history.changes if c.diff.pool is not None), None)
    if pooled is not None:
        subject = f"start-up {pooled.run} of {pooled.runs} of the log" if pooled.run else "the --set values"
        lines.append(f"KV pool: {subject}, as each release sizes it")
    return lines


def _headers(history: History) -> list[str]:
    pooled = any(stop.pool is not None for stop in history.stops)
    return ["", "release", "caps", "formula", *(["KV pool"] if pooled else []), "step from the row before"]


def _rows(history: History, text: bool) -> list[list[str]]:
    marked = {change.new: change for change in history.changes}
    pooled = any(stop.pool is not None for stop in history.stops)
    rows = []
    for index, stop in enumerate(history.stops):
        change = marked.get(index)
        mark = "*" if change is not None and change.changes else ""
        name = label(stop) if text else f"`{label(stop)}`"
        if not stop.read:
            why = f"not read: {_short(stop.error)}" if stop.error else "not read (not needed)"
            rows.append([mark, name, "", "", *([""] if pooled else []), why])
            continue
        assert stop.caps is not None
        steps = len(stop.formula)
        formula = f"{steps} step{'s' * (steps != 1)}" + (" (changed)" if change and change.diff.budget_changed else "")
        pool = [_gb(stop)] if pooled else []
        rows.append([mark, name, str(len(stop.caps.caps)), formula, *pool, change_summary(change) if change else ""])
    return rows


def change_summary(change: Change) -> str:
    """A step in a few words: the pool's change, the formula, the caps' counts."""
    found = change.diff
    parts = []
    if found.pool is not None:
        before, after = found.pool.old.explanation.kv_budget_gb, found.pool.new.explanation.kv_budget_gb
        if before is not None and after is not None and abs(round(after, 2) - round(before, 2)) >= 0.005:
            parts.append(f"pool {round(after, 2) - round(before, 2):+.2f} GB")
        elif (before is None) != (after is None):
            parts.append("pool " + ("no longer evaluated" if after is None else "now evaluated"))
        if found.pool.order_changed():
            parts.append("order of start-up changed")
    if found.budget_changed is not None:
        parts.append("formula changed")
    caps = [f"{n} {kind}" for kind, n in (("added", len(found.added)), ("removed", len(found.removed)),
            ("changed", len(found.changed)), ("moved", len(found.moved))) if n]  # fmt: skip
    if caps:
        parts.append("caps: " + ", ".join(caps))
    return "; ".join(parts) or "same"


def _step(history: History, change: Change) -> list[str]:
    """What one step changed: the pool and why, the formulas, the caps added and removed."""
    old, new = history.stops[change.old], history.stops[change.new]
    found = change.diff
    lines = [f"{label(old)} -> {label(new)}" + (f"  ({new.subject})" if new.subject else "")]
    if found.pool is not None:
        lines.append(f"  {pool_sentence(old.label, new.label, found.pool)}")
    lines.append(f"  {counts(change.verdict)}")
    if found.budget_changed is not None:
        for stop, steps in ((old, found.budget_changed.old), (new, found.budget_changed.new)):
            lines.append(f"  formula of {stop.label}:")
            lines += [f"    {n}. {step.path}:{step.line}  {_short(flat(step.code), 100)}" for n, step in
                      enumerate(steps, 1)]  # fmt: skip
    for title, caps in (("added", found.added), ("removed", found.removed)):
        lines += [f"  {title}: {cap.category}  {where(cap)}  {_short(flat(cap.code), 100) or '(declared, no value)'}"
                  for cap in caps[:_LISTED_CAPS]]  # fmt: skip
        if len(caps) > _LISTED_CAPS:
            lines.append(f"  {title}: and {len(caps) - _LISTED_CAPS} more")
    for pair in found.changed:
        lines.append(f"  changed: {pair.new.category}  {where(pair.old)} -> {where(pair.new)} "
                     f"({', '.join(pair.differences)})")  # fmt: skip
    if found.moved:
        lines.append(f"  moved: {len(found.moved)} (the same code elsewhere)")
    return lines


def _first(history: History) -> list[str]:
    first = history.first
    assert first is not None
    kinds, stops = ", ".join(first.kinds), history.stops
    read = f"read {first.read} of {len(stops)}"
    if first.index is None:
        return [f"first change ({kinds}): none from {label(stops[0])} to {label(stops[first.before])} ({read})"]
    between = first.index - first.before > 1
    where_ = f"between {label(stops[first.before])} and " if between else ""
    after = "" if between else f", the step from {label(stops[first.before])}"
    return [f"first change ({kinds}): {where_}{label(stops[first.index])}{after} ({read})"]


def _unread(history: History) -> list[str]:
    long = [stop for stop in history.stops if stop.error and len(stop.error) > _CELL]
    return ["", "not read:", *(f"  {stop.label}: {stop.error}" for stop in long)] if long else []


def _stop(stop: Stop) -> dict[str, Any]:
    found: dict[str, Any] = {
        "label": stop.label, "spec": stop.text, "tags": list(stop.tags), "subject": stop.subject,
        "read": stop.read, "error": stop.error or None, "caps": None, "formula": [], "kv_budget_gb": None,
    }  # fmt: skip
    if stop.caps is not None:
        found["caps"] = len(stop.caps.caps)
        found["formula"] = [{"path": s.path, "line": s.line, "code": s.code, "target": s.target} for s in stop.formula]
    if stop.pool is not None:
        explanation = stop.pool.explanation
        found["kv_budget_gb"] = explanation.kv_budget_gb
        found["missing"] = dict(explanation.missing)
    return found


def label(stop: Stop) -> str:
    """How a row names a stop: its label, and its tags."""
    return f"{stop.label} ({', '.join(stop.tags)})" if stop.tags else stop.label


def _gb(stop: Stop) -> str:
    value = stop.pool.explanation.kv_budget_gb if stop.pool is not None else None
    if value is not None:
        return f"{value:.2f} GB"
    missing = stop.pool.explanation.missing if stop.pool is not None else {}
    return "needs " + ", ".join(sorted(missing)) if missing else "-"


def _short(text: str, most: int = _CELL) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."
