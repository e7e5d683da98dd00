"""The object model: a class of the tree, an object made by a call of one, an enum's member."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.evaluate.facts import ModelConfig
from sgtrace.analyses.evaluate.values import Known, Unknown, Value


@dataclass(frozen=True)
class ClassRef:
    """A class of the tree, named in an expression (its attributes are read from its body)."""

    path: str
    node: ast.ClassDef = field(compare=False)


@dataclass(frozen=True)
class Instance:
    """An object of a dataclass of the tree built by the code read (``Spec(config_class=C, names=[...])``): the
    fields its construction gave; the others are the class's defaults."""

    ref: ClassRef
    fields: tuple[tuple[str, Value], ...]
    #: An object of an ordinary class (``DefaultPoolConfigurator(kvc)``): its attributes are its class's writes of
    #: them, not fields.
    plain: bool = field(default=False, compare=False)

    def given(self, name: str) -> Value | None:
        return next((value for key, value in self.fields if key == name), None)


@dataclass(frozen=True)
class Member:
    """A member of an enum of the tree: equal to itself, and to its value when the enum mixes in str or int."""

    enum: str
    name: str
    value: Any = field(default=None, compare=False)
    mixed: bool = field(default=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Member):
            return (self.enum, self.name) == (other.enum, other.name)
        return self.mixed and self.value is not None and self.value == other

    def __hash__(self) -> int:
        return hash((self.enum, self.name))


#: The built-in types ``isinstance`` is decided against, by the name the code gives them.
_BUILTIN_TYPES: dict[str, type] = {
    "str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list, "tuple": tuple,
    "set": set, "bytes": bytes,
}  # fmt: skip


def _member(receiver: Known, name: str) -> Value:
    value = receiver.value
    if isinstance(value, ModelConfig):
        return value.get(name)
    if isinstance(value, dict) and name in ("keys", "values", "items"):
        return Unknown((name,))
    if hasattr(type(value), name) and not callable(getattr(type(value), name)):
        return Known(getattr(value, name), receiver.why)
    return Unknown((name,))
