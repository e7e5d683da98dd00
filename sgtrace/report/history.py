"""The text, Markdown and JSON of ``history``: a timeline, one row per release or commit, the rows whose step
changes something marked, then what each marked step changed."""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate

from sgtrace.analyses.history import Change, History, Stop
from sgtrace.gitrange import GitRange, RangeStop
from sgtrace.report.diff_parts import counts, flat, pool_sentence, where
from sgtrace.report.diff_report import payload
from sgtrace.report.provenance import payload as payload_of

#: The verdict line names at most this many steps.
_LISTED = 6
#: A marked step lists at most this many caps added, and as many removed.
_LISTED_CAPS = 12
#: How many hex digits of a commit a note shows (as a row's label).
_SHA = 10
#: A reason a stop was not read, in a table cell: at most this many characters.
_CELL = 70


def render_text(history: History, span: str) -> str:
    """The timeline table, where the first change is, then the marked steps one by one."""
    lines = [*_heading(history, span), ""]
    lines += tabulate(_rows(history, text=True), headers=_headers(history), tablefmt="simple").splitlines()
    lines += ["", *_first(history)] if history.first is not None else []
    lines += ["", *(f"note: {note}" for note in notes(history))] if notes(history) else []
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
    lines += ["", *(f"- {note}" for note in notes(history))] if notes(history) else []
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
        "ranges": [_range(span) for span in history.ranges],
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
        step = change_summary(change, label(history.stops[change.old])) if change else ""
        rows.append([mark, name, str(len(stop.caps.caps)), formula, *pool, step])
    return rows


def change_summary(change: Change, previous: str = "") -> str:
    """A step in a few words: the pool's change, the formula, the caps' counts; "same as *previous*" when none."""
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
    return "; ".join(parts) or ("same as " + previous if previous else "same")


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
    found["tree"] = payload_of(stop.tree)
    found["commit"] = _commit(stop.commit) if stop.commit is not None else None
    if stop.pool is not None:
        explanation = stop.pool.explanation
        found["kv_budget_gb"] = explanation.kv_budget_gb
        found["missing"] = dict(explanation.missing)
    return found


def label(stop: Stop) -> str:
    """How a row names a stop: its label, its tags, how an end was named, the release branches based on it."""
    said = [tag for tag in stop.tags if tag != stop.label]  # a revision named by its tag is not named twice
    if stop.commit is not None:
        said += [stop.commit.named] if stop.commit.named else []
        said += [f"base of {tag}" for tag in stop.commit.bases]
    return f"{stop.label} ({', '.join(said)})" if said else stop.label


def _gb(stop: Stop) -> str:
    value = stop.pool.explanation.kv_budget_gb if stop.pool is not None else None
    if value is not None:
        return f"{value:.2f} GB"
    missing = stop.pool.explanation.missing if stop.pool is not None else {}
    return "needs " + ", ".join(sorted(missing)) if missing else "-"


def _short(text: str, most: int = _CELL) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def notes(history: History) -> list[str]:
    """What the git ranges cannot show, and how they show what is off their line, one sentence each."""
    found: list[str] = []
    merges = [label(stop) for stop in history.stops if stop.commit is not None and stop.commit.merge]
    for span in history.ranges:
        found += _range_notes(span, history.stops)
    if merges:
        found.append(f"{', '.join(merges)}: a merge is one step, the branch it brings in whole (its own commits "
                     "are not stops)")  # fmt: skip
    return found


def _range_notes(span: GitRange, stops: tuple[Stop, ...]) -> list[str]:
    named = {stop.text: label(stop) for stop in stops}
    low, high = span.stops[0], span.stops[-1]
    found = []
    if span.low_off_line:
        where_ = (f"the line leaves its history at {span.low_base[:_SHA]}, and the first step compares it with the "
                  "line's commits after that") if span.low_base else "the two have no history in common"  # fmt: skip
        if span.cut is not None:
            where_ = (f"the clone's history stops at {span.cut[:_SHA]} before the line meets it (the clone is "
                      "shallow), and the first step spans what the clone did not fetch")  # fmt: skip
        found.append(f"{named.get(low.commit, low.commit[:_SHA])} is not on the first-parent line of "
                     f"{named.get(high.commit, high.commit[:_SHA])}: {where_}")  # fmt: skip
    for off in span.off_line:
        base = named.get(off.base, off.base[:_SHA])
        count = f"{off.commits} commit{'s' * (off.commits != 1)}"
        touching = f"{off.touching} touching the slice" if off.touching else "none touching the slice"
        found.append(
            f"{off.tag} ({off.commit[:_SHA]}) is on a branch off the first-parent line: its row is the commit the "
            f"branch leaves from, {base}; the branch's {count} after it ({touching}) "
            f"{'are' if off.commits != 1 else 'is'} not read: name {off.tag} as an end or a revision to read it"
        )
    if span.shallow:
        since = f" ({span.shallow_since})" if span.shallow_since and not span.cut else ""
        boundary = span.cut or span.shallow[0]
        found.append(f"the clone is shallow: its history stops at {boundary[:_SHA]}{since}; older "
                     "commits, and tags and release branches it did not fetch, are not seen (git fetch --unshallow "
                     "--tags fetches them)")  # fmt: skip
    if span.detached:
        found.append("HEAD is detached: the range ends at the commit checked out, not at a branch")
    if span.dirty:
        shown = ", ".join(span.dirty[:3]) + (f" and {len(span.dirty) - 3} more" if len(span.dirty) > 3 else "")
        found.append(f"the work tree changes {len(span.dirty)} file{'s' * (len(span.dirty) != 1)} the slice reads "
                     f"({shown}), not committed: the history reads commits, so {named.get(high.commit, 'HIGH')} is "
                     "read as committed (sgtrace caps on the checkout reads the work tree)")  # fmt: skip
    return found


def _commit(stop: RangeStop) -> dict[str, Any]:
    return {
        "commit": stop.commit, "why": stop.why, "named": stop.named or None, "bases": list(stop.bases),
        "merge": stop.merge, "describe": stop.describe,
    }  # fmt: skip


def _range(span: GitRange) -> dict[str, Any]:
    return {
        "range": span.text, "low": span.stops[0].commit, "high": span.stops[-1].commit, "commits": span.commits,
        "off_line": [
            {"tag": o.tag, "commit": o.commit, "base": o.base, "commits": o.commits, "touching": o.touching}
            for o in span.off_line
        ],
        "low_off_line": span.low_off_line, "low_base": span.low_base, "shallow": list(span.shallow),
        "shallow_since": span.shallow_since or None, "cut": span.cut, "detached": span.detached,
        "dirty": list(span.dirty),
    }  # fmt: skip
