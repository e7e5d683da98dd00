"""JSON renderer: the documented contract of each command's output."""

from __future__ import annotations

import json
from dataclasses import asdict

from sgtrace.model import FileError, FindResult, Site
from sgtrace.report import provenance


def render(result: FindResult) -> str:
    """``{"attribute","root","writes":[...],"errors":[...],"tree":{...}}`` (+ ``"reads"`` when asked for, and
    ``"trees"``, one for each, when several trees were read; ``"tree"`` is the first)."""
    payload: dict[str, object] = {
        "attribute": result.attribute,
        "root": result.root,
        "writes": [_site(s) for s in result.writes],
    }
    if result.reads is not None:
        payload["reads"] = [_site(s) for s in result.reads]
    payload["errors"] = [_error(e) for e in result.errors]
    if result.trees:
        payload["tree"] = provenance.payload(result.trees[0])
        if len(result.trees) > 1:
            payload["trees"] = [provenance.payload(t) for t in result.trees]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _site(site: Site) -> dict[str, object]:
    return asdict(site)


def _error(error: FileError) -> dict[str, object]:
    return {"path": error.path, "line": error.line, "message": error.message}
