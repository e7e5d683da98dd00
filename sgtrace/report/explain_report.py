"""Text and JSON renderers of ``explain``."""

from __future__ import annotations

import json
from typing import Any

from sgtrace.analyses.explain import Explanation
from sgtrace.model import CapsResult


def render(found: CapsResult, result: Explanation) -> str:
    """Each step with its value, the prediction beside the observation, and which caps applied."""
    lines = [f"the {found.budget} budget of .{found.attribute} in {found.root}, step by step", ""]
    lines.append("inputs:")
    lines.extend(f"  {name} = {_show(value)}" for name, value in sorted(result.inputs.items()))
    lines.append("")
    lines.append("formula:")
    for step in result.steps:
        value = f"= {step.value:.4g}" if step.value is not None else f"(needs {', '.join(step.missing)})"
        lines.append(f"  {step.path}:{step.line}  {step.code}")
        lines.append(f"      {step.target or 'result'} {value}")
    lines.append("")
    if result.kv_budget_gb is not None:
        lines.append(f"predicted KV budget: {result.kv_budget_gb:.2f} GB")
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
            lines.append(f"  {cap.path}:{cap.line}  {cap.category:<8} {status}: {why}")
    if result.missing:
        lines.append("")
        needed = "" if result.kv_budget_gb is None else " (for the other statements; the prediction above is whole)"
        lines.append(f"missing inputs, nothing is guessed{needed}:")
        lines.extend(f"  {name}: {how}" for name, how in sorted(result.missing.items()))
    return "\n".join(lines) + "\n"


def render_json(found: CapsResult, result: Explanation) -> str:
    """``{"kv_budget_gb","observed_kv_gb","observed_tokens","bytes_per_token","inputs","steps","caps","missing"}``."""
    payload: dict[str, Any] = {
        "attribute": found.attribute,
        "budget": found.budget,
        "root": found.root,
        "kv_budget_gb": result.kv_budget_gb,
        "observed_kv_gb": result.observed_kv_gb,
        "observed_tokens": result.observed_tokens,
        "bytes_per_token": result.bytes_per_token,
        "inputs": result.inputs,
        "steps": [
            {
                "path": s.path,
                "line": s.line,
                "code": s.code,
                "target": s.target,
                "value": s.value,
                "missing": list(s.missing),
            }
            for s in result.steps
        ],
        "caps": [
            {"path": c.path, "line": c.line, "category": c.category, "status": status, "why": why}
            for c, status, why in result.caps
        ],
        "missing": result.missing,
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _show(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)
