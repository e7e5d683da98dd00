"""Text renderer of ``caps``: budget sites, then caps grouped by owner in code order, each with a reason."""

from __future__ import annotations

from itertools import groupby

from sgtrace.analyses.categories import CATEGORIES
from sgtrace.model import CapsResult
from sgtrace.report.provenance import named


def render(result: CapsResult) -> str:
    """The report a person reads before an upgrade."""
    tree = named(result.root, result.tree)
    lines = [f"what caps .{result.attribute} below the {result.budget} budget, in {tree}", ""]
    if not result.budget_sites:
        lines.append(f"no place where {result.budget} enters the computation of .{result.attribute} was found")
    else:
        lines.append(f"budget sites ({result.budget} enters the computation, or is reserved from):")
        for site in result.budget_sites:
            knobs = f"   [{', '.join(site.knobs)}]" if site.knobs else ""
            lines.append(f"  {site.path}:{site.line}  {site.code}{knobs}")
    lines.append("")
    lines.append(f"caps ({len(result.caps)}), by owner, in the order the code applies them:")
    for owner, group in groupby(result.caps, key=lambda c: c.owner or "<module level>"):
        lines.append(f"  {owner}")
        for cap in group:
            approximate = " (approximate)" if cap.approximate else ""
            lines.append(
                f"    {cap.path}:{cap.line}  {cap.category:<8} {cap.target} in {cap.function or '?'}{approximate}"
            )
            lines.append(f"      {cap.code}")
            lines.append(f"      why: {CATEGORIES[cap.category]}")
            if cap.conditions:
                lines.append(f"      when: {' and '.join(cap.conditions)}")
            if cap.knobs:
                lines.append(f"      knobs: {', '.join(cap.knobs)}")
    if result.truncated:
        lines.append("")
        lines.append("(the data-flow slice was cut at --max-nodes: caps further upstream may be missing)")
    return "\n".join(lines) + "\n"
