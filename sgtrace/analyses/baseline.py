"""The committed baseline of ``check``: caps and budget sites with fingerprints, stable order, comments."""

from __future__ import annotations

import json
from typing import Any

from sgtrace import __version__
from sgtrace.analyses.diff import fingerprint
from sgtrace.model import BudgetSite, Cap, CapsResult

#: Bumped when the layout changes.
FORMAT = 1


def to_baseline(result: CapsResult, comments: dict[str, str] | None = None) -> str:
    """The baseline JSON (sorted by fingerprint; a reviewer's comment kept per fingerprint)."""
    comments = comments or {}
    caps = sorted(result.caps, key=fingerprint)
    payload = {
        "sgtrace": __version__,
        "format": FORMAT,
        "attribute": result.attribute,
        "budget": result.budget,
        "root": result.root,
        "budget_sites": [
            {"path": s.path, "line": s.line, "code": s.code, "knobs": list(s.knobs)}
            for s in sorted(result.budget_sites, key=lambda s: (s.code, s.path))
        ],
        "caps": [
            {
                "fingerprint": fingerprint(c),
                "category": c.category,
                "owner": c.owner,
                "function": c.function,
                "target": c.target,
                "code": c.code,
                "guard": list(c.guard),
                "exits": list(c.exits),
                "knobs": list(c.knobs),
                "path": c.path,
                "line": c.line,
                "comment": comments.get(fingerprint(c), ""),
            }
            for c in caps
        ],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def from_baseline(text: str) -> tuple[dict[str, Any], list[BudgetSite], list[Cap], dict[str, str]]:
    """(header, budget sites, caps, comments by fingerprint); raises ValueError on anything else.

    The header's ``exits`` says whether the baseline records the caps' exits.
    """
    try:
        payload = json.loads(text)
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise ValueError("not an sgtrace baseline of this format")
        sites = [
            BudgetSite(str(s["path"]), int(s["line"]), str(s["code"]), tuple(s["knobs"]))
            for s in payload["budget_sites"]
        ]
        caps = [
            Cap(
                path=str(c["path"]),
                line=int(c["line"]),
                owner=c["owner"],
                function=c["function"],
                target=str(c["target"]),
                category=str(c["category"]),
                guard=tuple(c["guard"]),
                knobs=tuple(c["knobs"]),
                code=str(c["code"]),
                approximate=bool(c.get("approximate", False)),
                exits=tuple(c.get("exits", ())),
            )
            for c in payload["caps"]
        ]
        comments = {str(c["fingerprint"]): str(c.get("comment", "")) for c in payload["caps"] if c.get("comment")}
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not an sgtrace baseline: {exc}") from exc
    header = {k: payload.get(k) for k in ("sgtrace", "attribute", "budget", "root")}
    # written before exits were recorded: compare without them rather than report every exit as new
    header["exits"] = all("exits" in c for c in payload["caps"])
    return header, sites, caps, comments
