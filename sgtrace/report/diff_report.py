"""JSON and SARIF 2.1.0 of ``diff`` and ``check`` (text: diff_text; Markdown: diff_markdown)."""

from __future__ import annotations

import json
from typing import Any

from sgtrace.analyses.diff import CapDiff, CapPair, fingerprint
from sgtrace.analyses.explain import Explanation, Step
from sgtrace.analyses.upgrade import PoolChange
from sgtrace.analyses.verdict import Verdict
from sgtrace.model import Cap, FileError
from sgtrace.report import provenance, sarif


def render_json(old: str, new: str, result: CapDiff, verdict: Verdict) -> str:
    """``{"old","new","verdict","kv_budget_gb","added","removed","changed","moved","unreadable",...,"trees",
    "order"}``: ``trees`` is which code each side is, ``order`` whether NEW is older than OLD (null: not known)."""
    return json.dumps(payload(old, new, result, verdict), indent=2, ensure_ascii=False) + "\n"


def payload(old: str, new: str, result: CapDiff, verdict: Verdict) -> dict[str, Any]:
    """What :func:`render_json` writes, as a dictionary (a history's steps are these)."""
    found: dict[str, Any] = {
        "old": old,
        "new": new,
        "verdict": {
            "added": verdict.added,
            "removed": verdict.removed,
            "changed": verdict.changed,
            "moved": verdict.moved,
            "unchanged": verdict.unchanged,
            "budget_changed": verdict.budget_changed,
            "unreadable": verdict.unreadable,
            "failing": list(verdict.failing),
            "failed": verdict.failed,
        },
        "kv_budget_gb": None,
        "added": [_cap(c) for c in result.added],
        "removed": [_cap(c) for c in result.removed],
        "changed": [_pair(p) for p in result.changed],
        "moved": [_pair(p) for p in result.moved],
        "unreadable": [{"cap": _cap(c), "error": _error(e)} for c, e in result.unreadable],
        "budget_changed": (
            {"old": [_step(s) for s in result.budget_changed.old], "new": [_step(s) for s in result.budget_changed.new]}
            if result.budget_changed
            else None
        ),
    }
    if result.pool is not None:
        found.update(_pool(result.pool))
    if result.trees != (None, None):  # a history's steps compare stops, named by its own rows
        found["trees"] = {"old": provenance.payload(result.trees[0]), "new": provenance.payload(result.trees[1])}
        found["order"] = provenance.order_payload(result.order)
    return found


def _pool(pool: PoolChange) -> dict[str, Any]:
    """``kv_budget_gb`` old/new (null with the reason in ``missing``), and the start-up under each release."""
    old, new = pool.old.explanation, pool.new.explanation
    return {
        "kv_budget_gb": {"old": old.kv_budget_gb, "new": new.kv_budget_gb},
        "run": {
            "index": pool.run or None,
            "runs": pool.runs,
            "observed_kv_gb": old.observed_kv_gb,
            "settings": dict(pool.settings),
            "left_out": {"old": list(pool.old.left_out), "new": list(pool.new.left_out)},
            "new_inputs": [{"name": i.name, "value": i.value, "computed_at": i.where} for i in pool.new_inputs],
            "missing": {"old": old.missing, "new": new.missing},
            "steps": {"old": [_evaluated(s) for s in old.steps], "new": [_evaluated(s) for s in new.steps]},
            "caps": {"old": _statuses(old), "new": _statuses(new)},
        },
    }


def _statuses(explanation: Explanation) -> list[dict[str, Any]]:
    return [
        {"fingerprint": fingerprint(c), "path": c.path, "line": c.line, "category": c.category, "status": s, "why": w}
        for c, s, w in explanation.caps
    ]


def render_sarif(result: CapDiff, errors: tuple[FileError, ...] = ()) -> str:
    """SARIF 2.1.0 for code scanning: one rule per category, results located in NEW.

    A cap of the old tree in a file the new tree could not analyse is an error notification of the
    run's invocation (which then did not succeed); the new tree's other per-file errors are warnings.
    """
    changes = [(c, "added") for c in result.added] + [(p.new, "changed") for p in result.changed]
    results = [
        sarif.result(c, "warning", f"{change} cap ({c.category}) of {c.target}: {c.code}", fingerprint(c))
        for c, change in changes
    ]
    held = {e for _, e in result.unreadable}
    notes = [
        sarif.notification(e.path, e.line, f"a cap ({c.category}: {' '.join(c.code.split())}) was in this file "
                           f"and it cannot be analysed now: {e.message}", "error")
        for c, e in result.unreadable
    ]  # fmt: skip
    notes += [sarif.notification(e.path, e.line, e.message, "warning") for e in errors if e not in held]
    located = provenance.version_control(result.trees[1])
    return sarif.render(results, notifications=notes, succeeded=not result.unreadable, provenance=located)


def _pair(pair: CapPair) -> dict[str, Any]:
    return {
        "old": _cap(pair.old),
        "new": _cap(pair.new),
        "score": round(pair.score, 3),
        "differences": list(pair.differences),
        "renamed": [list(names) for names in pair.renamed],
    }


def _cap(cap: Cap) -> dict[str, Any]:
    found = {
        "fingerprint": fingerprint(cap),
        "category": cap.category,
        "path": cap.path,
        "line": cap.line,
        "owner": cap.owner,
        "function": cap.function,
        "target": cap.target,
        "guard": list(cap.guard),
        "knobs": list(cap.knobs),
        "code": cap.code,
    }
    return {**found, "exits": list(cap.exits)} if cap.exits else found


def _step(step: Step) -> dict[str, Any]:
    return {"path": step.path, "line": step.line, "code": step.code, "target": step.target}


def _evaluated(step: Step) -> dict[str, Any]:
    return {**_step(step), "value": step.value, "missing": list(step.missing), "skipped": step.skipped}


def _error(error: FileError) -> dict[str, Any]:
    return {"path": error.path, "line": error.line, "message": error.message}
