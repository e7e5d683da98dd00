"""The committed baseline of ``check``: caps and budget sites with fingerprints, stable order, comments."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from sgtrace import __version__
from sgtrace.analyses.diff import fingerprint
from sgtrace.bounded import load_json
from sgtrace.identity import as_dict, from_dict
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
        "tree": as_dict(result.tree) if result.tree is not None else None,
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


def from_baseline(text: str | bytes) -> tuple[dict[str, Any], list[BudgetSite], list[Cap], dict[str, str]]:
    """(header, budget sites, caps, comments by fingerprint); ValueError saying what is wrong on anything else
    (JSON nested past :data:`~sgtrace.bounded.MAX_JSON_DEPTH`, a field of another type, a line no file has).

    The header's ``exits`` says whether the baseline records the caps' exits, its ``tree`` which code it was
    written on (a :class:`~sgtrace.model.TreeIdentity`; None in a baseline written before it was recorded).
    """
    payload = load_json(text)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError("not an sgtrace baseline of this format")
    site_records, cap_records = _records(payload, "budget_sites"), _records(payload, "caps")
    sites = [
        BudgetSite(_text(s, "path", where), _line(s, where), _text(s, "code", where), _texts(s, "knobs", where))
        for where, s in site_records
    ]
    caps = [_cap(c, where) for where, c in cap_records]
    comments = {_text(c, "fingerprint", w): _text(c, "comment", w, "") for w, c in cap_records if c.get("comment")}
    header: dict[str, Any] = {k: _text(payload, k, "", None) for k in ("sgtrace", "attribute", "budget", "root")}
    # written before the tree's identity was recorded: no tree, as a release or folder of old
    header["tree"] = from_dict(payload["tree"]) if payload.get("tree") is not None else None
    # written before exits were recorded: compare without them rather than report every exit as new
    header["exits"] = all("exits" in c for _, c in cap_records)
    return header, sites, caps, comments


def _cap(record: dict[str, Any], where: str) -> Cap:
    approximate = record.get("approximate", False)
    if not isinstance(approximate, bool):
        raise ValueError(f"{where}.approximate: true or false, not {_kind(approximate)}")
    return Cap(
        path=_text(record, "path", where),
        line=_line(record, where),
        owner=_text(record, "owner", where, None),
        function=_text(record, "function", where, None),
        target=_text(record, "target", where),
        category=_text(record, "category", where),
        guard=_texts(record, "guard", where),
        knobs=_texts(record, "knobs", where),
        code=_text(record, "code", where),
        approximate=approximate,
        exits=_texts(record, "exits", where, ()),
    )


def _records(payload: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, record) for each object of the list *key* holds."""
    records = payload.get(key)
    if not isinstance(records, list):
        raise ValueError(f"{key}: a list, not {_kind(records)}")
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise ValueError(f"{key}[{index}]: an object, not {_kind(record)}")
    return [(f"{key}[{index}]", record) for index, record in enumerate(records)]


_REQUIRED: Any = object()


def _text(record: dict[str, Any], key: str, where: str, default: Any = _REQUIRED) -> Any:
    """The string at *key* (or *default* when absent; None where *default* is None)."""
    if key not in record and default is not _REQUIRED:
        return default
    value = record.get(key, _REQUIRED)
    if isinstance(value, str) or (value is None and default is None):
        return value
    what = "a string or null" if default is None else "a string"
    raise ValueError(f"{where}.{key}: {what}, not {_kind(value)}".lstrip("."))


def _texts(record: dict[str, Any], key: str, where: str, default: Any = _REQUIRED) -> tuple[str, ...]:
    if key not in record and default is not _REQUIRED:
        return tuple(default)
    value = record.get(key, _REQUIRED)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"{where}.{key}: a list of strings, not {_kind(value)}")


#: The most lines a baseline's file may be said to have (a line past it is no file's).
MAX_LINE = 1 << 31


def _line(record: dict[str, Any], where: str) -> int:
    value = record.get("line", _REQUIRED)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_LINE:
        return value
    raise ValueError(f"{where}.line: a line number from 1 to {MAX_LINE}, not {_kind(value)}")


def _kind(value: Any) -> str:
    """What *value* is, for a message: a number as it is, else its JSON type."""
    if value is _REQUIRED:
        return "missing"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{Decimal(value):.6g}"  # exact: an int past a float's range (400 digits) has no float to format
    if isinstance(value, float):
        return f"{value:.6g}"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), type(value).__name__)
