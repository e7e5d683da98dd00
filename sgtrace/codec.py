"""Records to and from JSON, for the cache: data only, never code (no pickle).

Every dataclass is written as ``{"@": "Name", ...fields}`` and can only be
read back as one of the record classes listed here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from sgtrace import records
from sgtrace.model import BudgetSite, Cap, FileError

T = TypeVar("T")

#: The classes a cache entry may contain.
RECORDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        FileError,
        BudgetSite,
        Cap,
        records.Import,
        records.Param,
        records.Function,
        records.Field,
        records.ClassDef,
        records.Outline,
        records.Expr,
        records.Target,
        records.Assignment,
        records.Return,
        records.CallSite,
        records.Body,
    )
}


def to_json(value: Any) -> Any:
    """A JSON-compatible form of a record (tuples become lists)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (tuple, list)):
        return [to_json(item) for item in value]
    names = _field_names(type(value))
    if names is None:
        raise TypeError(f"cannot encode {type(value).__name__}")
    encoded = {"@": type(value).__name__}
    for name in names:
        encoded[name] = to_json(getattr(value, name))
    return encoded


_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """A dataclass's field names (looked up once per class), None for anything else."""
    if cls not in _FIELDS:
        _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
    return _FIELDS[cls]


def from_json(data: Any, expected: type[T]) -> T:
    """Read back a record of type *expected*; raises ValueError/TypeError/KeyError on anything else."""
    value = _decode(data)
    if not isinstance(value, expected):
        raise ValueError(f"expected {expected.__name__}, found {type(value).__name__}")
    return value


def _decode(data: Any) -> Any:
    if isinstance(data, dict):
        cls = RECORDS[data["@"]]
        names = {f.name for f in dataclasses.fields(cls)}
        if set(data) - {"@"} != names:
            raise ValueError(f"fields of {cls.__name__} do not match")
        return cls(**{name: _decode(data[name]) for name in names})
    if isinstance(data, list):
        return tuple(_decode(item) for item in data)
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    raise TypeError(f"cannot decode {type(data).__name__}")
