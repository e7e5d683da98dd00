"""What the text and Markdown renderers of ``diff`` and ``check`` both say: the verdict, places, code diffs."""

from __future__ import annotations

import difflib
import textwrap

from sgtrace.analyses.diff import CapDiff, CapPair
from sgtrace.analyses.explain import Step
from sgtrace.analyses.figures import written
from sgtrace.analyses.upgrade import PoolChange
from sgtrace.analyses.verdict import Verdict
from sgtrace.model import Cap

#: A cap's status for the start-up, by cap, under one release.
Statuses = dict[Cap, tuple[str, str]]


def step_value(done: Step) -> str:
    """What a formula statement evaluated to for the start-up: ``= 10.43``, ``(needs x)``, or why it is not
    applied (its first clause: ``(not applied: not reached: ... is false)``)."""
    if done.skipped:
        return f"(not applied: {done.skipped.split(': decided by')[0]})"
    return f"= {done.value:.4g}" if done.value is not None else f"(needs {', '.join(done.missing)})"


def verdict_line(old: str, new: str, verdict: Verdict, result: CapDiff) -> str:
    """One line for a CI log: the pool of the start-up, the counts, and whether the gate failed and why."""
    parts = [f"{old} -> {new}"]
    if result.pool is not None:
        parts.append(pool_sentence(old, new, result.pool))
    parts.append(counts(verdict))
    if verdict.unreadable:
        parts.append(f"{verdict.unreadable} cap(s) in files the new tree could not analyse")
    parts.append(gate(verdict))
    return "; ".join(parts)


def counts(verdict: Verdict) -> str:
    """``caps: 3 changed, 5 moved, ...; budget formula changed``."""
    found = [
        f"{number} {kind}"
        for kind, number in (
            ("changed", verdict.changed),
            ("moved", verdict.moved),
            ("added", verdict.added),
            ("removed", verdict.removed),
            ("unchanged", verdict.unchanged),
        )
        if number or kind == "unchanged"
    ]
    formula = "budget formula changed" if verdict.budget_changed else "budget formula unchanged"
    return f"caps: {', '.join(found)}; {formula}"


def gate(verdict: Verdict) -> str:
    """Whether the gate fails, and on what."""
    reasons = list(verdict.failing) + (["unreadable files held caps"] if verdict.unreadable else [])
    if verdict.failed:
        return f"gate failed ({', '.join(reasons)})"
    if reasons:
        return f"gate passed (--exit-zero; it would fail on {', '.join(reasons)})"
    return "gate passed"


def pool_sentence(old: str, new: str, pool: PoolChange) -> str:
    """``KV pool for start-up 3 of 3: 10.43 GB on OLD, 10.43 GB on NEW (same)``, and what the answer rests on."""
    before, after = pool.old.explanation.kv_budget_gb, pool.new.explanation.kv_budget_gb
    subject = f"start-up {pool.run} of {pool.runs}" if pool.run else "the --set values"
    notes = []
    if before is not None and after is not None:
        change = round(after, 2) - round(before, 2)
        notes.append("same" if abs(change) < 0.005 else f"{change:+.2f} GB")
    if order := pool.order_changed():
        notes.append(order)
    for side, names in ((new, [n.name for n in pool.new_inputs if n.value is not None]), (old, pool.new.left_out)):
        if names:
            given = ", ".join(f"{name} = {written(pool.settings[name])}" for name in names)
            notes.append(f"{given} by --set, {'an input' if len(names) == 1 else 'inputs'} only {side} has")
    text = f"KV pool for {subject}: {gb(before)} on {old}, {gb(after)} on {new}"
    text += f" ({'; '.join(notes)})" if notes else ""
    for name, explanation in ((old, pool.old.explanation), (new, pool.new.explanation)):
        if explanation.kv_budget_gb is None and explanation.missing:
            text += f"; {name} needs {', '.join(sorted(explanation.missing))} (--set)"
    return text


def gb(value: float | None) -> str:
    return "not evaluated" if value is None else f"{value:.2f} GB"


def why_not(pool: PoolChange, side: str) -> str:
    """What one release's evaluation lacks, in one phrase ("" when it gave a pool)."""
    explanation = (pool.old if side == "old" else pool.new).explanation
    if explanation.kv_budget_gb is not None:
        return ""
    return "needs " + ", ".join(sorted(explanation.missing)) if explanation.missing else "no whole formula"


def statuses(pool: PoolChange | None) -> tuple[Statuses, Statuses]:
    """Each cap's status for the start-up under the old and the new release (empty without one)."""
    if pool is None:
        return {}, {}
    return (
        {cap: (status, why) for cap, status, why in pool.old.explanation.caps},
        {cap: (status, why) for cap, status, why in pool.new.explanation.caps},
    )


def where(cap: Cap) -> str:
    """``path:line``."""
    return f"{cap.path}:{cap.line}"


def place(cap: Cap) -> str:
    """``path:line (Class.method)``."""
    return f"{where(cap)} ({cap.function})" if cap.function else where(cap)


def flat(code: str) -> str:
    """A statement on one line."""
    return " ".join(code.split())


def conditions(cap: Cap) -> str:
    """Its guard and exits joined with ``and`` ("always" when it has none)."""
    return " and ".join(flat(c) for c in cap.conditions) or "always"


def code_diff(pair: CapPair) -> list[str]:
    """A unified diff of the two statements, each laid out as written (continuation lines dedented)."""
    before, after = _lines(pair.old.code), _lines(pair.new.code)
    return list(difflib.unified_diff(before, after, where(pair.old), where(pair.new), lineterm="", n=2))


def _lines(code: str) -> list[str]:
    first, *rest = code.strip().splitlines() or [""]
    return [first, *textwrap.indent(textwrap.dedent("\n".join(rest)), "    ").splitlines()]
