"""Nodes of the data-flow graph, and the scope a function body is read in."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sgtrace.index.project import Module
from sgtrace.records import Expr, Function

#: Node kinds that end a backward slice.
SOURCES = frozenset({"knob", "env", "const", "call", "unknown", "global"})


@dataclass(frozen=True, slots=True, order=True)
class Point:
    """A program point: a write, a read, a local, a parameter, a return, a field, a source."""

    #: write | read | local | param | return | field | knob | env | const | call | global | unknown
    kind: str
    #: Short human-readable name (``ModelRunner.max_total_num_tokens``, ``server_args.page_size``).
    label: str
    #: File, relative to the root ("" for knobs and other places outside the code).
    path: str
    #: 1-based line (0 outside the code).
    line: int


@dataclass(frozen=True, slots=True)
class Edge:
    """What an edge of the graph carries."""

    #: copy, min, max, sub, mul, floordiv, call, arg, return, unpack[i], param, field, read, ...
    op: str
    #: True where the receiver's type was not known and the link is a guess.
    approximate: bool = False


@dataclass(frozen=True, slots=True)
class Scope:
    """A function body being read: its module, definition and class."""

    #: The module.
    module: Module
    #: The function.
    function: Function
    #: Qualified name of the class it is a method of, or None.
    cls: str | None
    #: The call that entered this function on the way back from a return, if any:
    #: (the caller's scope, the call, its line). Its parameters come from that call only.
    caller: tuple[Scope, Expr, int] | None = field(default=None, compare=False, hash=False)
    #: A short key of the chain of calls that entered it ("" at the top).
    context: str = ""

    def entered(self, caller: Scope, call: Expr, line: int) -> Scope:
        """This scope, entered from *call* at *line* in *caller* (chains kept to three calls)."""
        link = f"{caller.path}:{line}"
        chain = [*caller.context.split(">"), link] if caller.context else [link]
        return replace(self, caller=(caller, call, line), context=">".join(chain[-3:]))

    @property
    def name(self) -> str:
        """Module-qualified name of the function."""
        return f"{self.module.source.module}.{self.function.qualname}"

    @property
    def path(self) -> str:
        """The file, relative to the root."""
        return self.module.source.path

    @property
    def self_name(self) -> str | None:
        """The name of the instance parameter, for a method that has one."""
        if self.cls is None or not self.function.params:
            return None
        if any(d in ("staticmethod", "classmethod") for d in self.function.decorators):
            return None
        return self.function.params[0].name


def call_site(caller: Scope, call: Expr, line: int) -> str:
    """The id of a call (its file and line): edges entering and leaving a callee there carry it."""
    return f"{caller.path}:{call.line or line}"


def scope_of(module: Module, function: Function) -> Scope:
    """The scope of a function, a method when its qualname's parent is a class of the module."""
    parent = function.qualname.rpartition(".")[0]
    is_method = bool(parent) and any(c.qualname == parent for c in module.outline.classes)
    return Scope(module, function, f"{module.source.module}.{parent}" if is_method else None)
