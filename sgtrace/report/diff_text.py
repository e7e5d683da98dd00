"""The terminal text of ``diff`` and ``check``: the pool and counts first, then only what differs."""

from __future__ import annotations

from sgtrace.analyses.diff import CapDiff, CapPair
from sgtrace.analyses.explain import Step
from sgtrace.analyses.figures import written
from sgtrace.analyses.upgrade import PoolChange
from sgtrace.analyses.verdict import Verdict
from sgtrace.model import Cap
from sgtrace.report.diff_parts import (
    Statuses,
    code_diff,
    conditions,
    counts,
    flat,
    gate,
    place,
    pool_sentence,
    statuses,
    step_value,
    where,
)
from sgtrace.report.provenance import named, order_line


def render(old: str, new: str, attribute: str, budget: str, result: CapDiff, verdict: Verdict) -> str:
    """The verdict's parts, the formulas, then changed, moved, added, removed and unreadable caps."""
    sides = f"{named(old, result.trees[0])} -> {named(new, result.trees[1])}"
    lines = [f"the caps of .{attribute} below the {budget} budget: {sides}"]
    lines += [note, ""] if (note := order_line(result.order, old, new)) else [""]
    if result.pool is not None:
        lines += [pool_sentence(old, new, result.pool), *_inputs(new, result.pool)]
    lines += [f"{counts(verdict)}; {gate(verdict)}", ""]
    lines += _formula(old, new, result)
    before, after = statuses(result.pool)
    lines += _section("changed caps", [_changed(p, before, after) for p in result.changed])
    lines += _section("moved caps (the same code, conditions and knobs elsewhere)", [
        _moved(p, before, after) for p in result.moved
    ])  # fmt: skip
    lines += _section("added caps", [_single(c, after) for c in result.added])
    lines += _section("removed caps", [_single(c, before) for c in result.removed])
    lines += _section("caps in files the new tree could not analyse (not counted as removed)", [
        [f"  {c.category}  {where(c)}  {flat(c.code)}", f"      {e.path}:{e.line}: {e.message}"]
        for c, e in result.unreadable
    ])  # fmt: skip
    return "\n".join(lines).rstrip() + "\n"


def _inputs(new: str, pool: PoolChange) -> list[str]:
    lines = []
    whole = pool.new.explanation.kv_budget_gb is not None
    for item in pool.new_inputs:
        if item.value is not None:
            given = f" = {written(item.value)} (--set)"
        else:
            given = f" not given (--set {item.name}=VALUE" + ("; the prediction is whole without it)" if whole else ")")
        where = f"; computed at {item.where}" if item.where else ""
        lines.append(f"  an input only {new} has: {item.name}{given}{where}")
    if pool.old.explanation.observed_kv_gb is not None:
        lines.append(f"  the log shows {pool.old.explanation.observed_kv_gb:.2f} GB")
    return lines


def _formula(old: str, new: str, result: CapDiff) -> list[str]:
    if result.budget_changed is None:
        return []
    pool = result.pool
    lines = ["budget formula changed (each as the chain of steps explain evaluates):"]
    for name, steps, evaluated in (
        (old, result.budget_changed.old, pool.old.explanation.steps if pool else ()),
        (new, result.budget_changed.new, pool.new.explanation.steps if pool else ()),
    ):
        lines.append(f"  {name}:")
        lines += [f"    {i}. {step.path}:{step.line}  {flat(step.code)}" + _value(step, evaluated) for i, step in
                  enumerate(steps, 1)]  # fmt: skip
    return [*lines, ""]


def _value(step: Step, evaluated: tuple[Step, ...]) -> str:
    for done in evaluated:
        if (done.path, done.line) == (step.path, step.line):
            return f"  {step_value(done)}"
    return ""


def _section(title: str, entries: list[list[str]]) -> list[str]:
    if not entries:
        return []
    return [f"{title} ({len(entries)}):", *(line for entry in entries for line in entry), ""]


def _changed(pair: CapPair, before: Statuses, after: Statuses) -> list[str]:
    old, new = pair.old, pair.new
    lines = [f"  {old.category}  {place(old)}", f"      -> {place(new)}" + ("  (moved too)" if "place" in
             pair.differences else "")]  # fmt: skip
    if "guard" in pair.differences:
        lines += [f"    when: {conditions(old)}", f"      ->  {conditions(new)}"]
    if "knobs" in pair.differences:
        lines.append(f"    knobs: {', '.join(old.knobs) or 'none'} -> {', '.join(new.knobs) or 'none'}")
    if "code" in pair.differences:
        lines += ["    code:", *(f"      {line}" for line in code_diff(pair))]
    else:
        lines.append(f"    code: {flat(new.code)}")
    lines += _renamed(pair) + _copies(pair) + _status(old, new, before, after)
    return lines


def _copies(pair: CapPair) -> list[str]:
    if not pair.copies:
        return []
    return [f"    the same code is also added at {', '.join(where(c) for c in pair.copies)} (under other conditions)"]


def _moved(pair: CapPair, before: Statuses, after: Statuses) -> list[str]:
    old, new = pair.old, pair.new
    lines = [f"  {old.category}  {place(old)}", f"      -> {place(new)}", f"    {flat(new.code)}"]
    if new.conditions:
        lines.append(f"    when: {conditions(new)}")
    return lines + _renamed(pair) + _copies(pair) + _status(old, new, before, after)


def _renamed(pair: CapPair) -> list[str]:
    return [f"    renamed: {', '.join(f'{a} -> {b}' for a, b in pair.renamed)}"] if pair.renamed else []


def _status(old: Cap, new: Cap, before: Statuses, after: Statuses) -> list[str]:
    if not before and not after:
        return []
    return [f"    this start-up: {before.get(old, ('-', ''))[0]} -> {after.get(new, ('-', ''))[0]}"]


def _single(cap: Cap, found: Statuses) -> list[str]:
    lines = [f"  {cap.category}  {place(cap)}", f"    {flat(cap.code)}"]
    if cap.conditions:
        lines.append(f"    when: {conditions(cap)}")
    if cap in found:
        lines.append(f"    this start-up: {found[cap][0]}")
    return lines
