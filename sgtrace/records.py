"""Records of the project index and of function bodies: fields only, JSON-friendly.

An outline says what a module defines (from tree-sitter, for every file the
analysis touches); a body says how values flow inside one function (from the
same tree-sitter tree, only for the functions a slice reaches; see
:mod:`sgtrace.index.body` for why not libcst).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Import:
    """One name bound by an import statement."""

    #: The local name bound (``np`` in ``import numpy as np``).
    local: str
    #: What it refers to: a module (``numpy``) or ``module.attr``, relative dots kept (``..x.Y``).
    target: str
    #: Whether the import sits under ``if TYPE_CHECKING:``.
    type_checking: bool


@dataclass(frozen=True, slots=True)
class Param:
    """A function parameter."""

    #: Its name.
    name: str
    #: Annotation source, or "".
    annotation: str
    #: Default value source, or "" when it has none.
    default: str
    #: ``positional``, ``keyword`` (keyword-only), ``star`` or ``starstar``.
    kind: str


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method, as the outline sees it (no body)."""

    #: Qualified name within its module (``Class.method`` or ``func``).
    qualname: str
    #: Decorator sources, without ``@``.
    decorators: tuple[str, ...]
    #: Parameters in order, ``self`` included.
    params: tuple[Param, ...]
    #: Return annotation source, or "".
    returns: str
    #: 1-based line of the ``def``.
    line: int
    #: Byte range of the definition, decorators included, in the file's UTF-8 text.
    start: int
    #: End of that byte range.
    end: int


@dataclass(frozen=True, slots=True)
class Field:
    """A class-body binding of a bare name (dataclass field, class attribute)."""

    #: Its name.
    name: str
    #: Annotation source, or "".
    annotation: str
    #: Value source, or "".
    value: str
    #: 1-based line.
    line: int


@dataclass(frozen=True, slots=True)
class ClassDef:
    """A class, as the outline sees it."""

    #: Qualified name within its module.
    qualname: str
    #: Base class expressions, as written (keywords such as ``metaclass=`` left out).
    bases: tuple[str, ...]
    #: Decorator sources, without ``@``.
    decorators: tuple[str, ...]
    #: Class-body fields in order.
    fields: tuple[Field, ...]
    #: 1-based line of the ``class``.
    line: int


@dataclass(frozen=True, slots=True)
class Outline:
    """What one module defines and imports."""

    #: Imports anywhere at module level (including under ``if``/``try``) and inside functions.
    imports: tuple[Import, ...]
    #: Classes, nested ones included.
    classes: tuple[ClassDef, ...]
    #: Functions and methods, nested ones excluded.
    functions: tuple[Function, ...]


@dataclass(frozen=True, slots=True)
class Expr:
    """An expression reduced to what data flow needs."""

    #: ``name``, ``attr``, ``call``, ``const``, ``op``, ``subscript``, ``tuple``, ``starred`` or ``other``.
    kind: str
    #: Source, on one line.
    text: str
    #: Identifier, attribute, operator (``sub``, ``floordiv``...), or constant value.
    name: str = ""
    #: Receiver of an attribute, callee of a call, value of a subscript.
    base: Expr | None = None
    #: Operands, positional arguments, tuple elements, subscript index.
    args: tuple[Expr, ...] = ()
    #: Keyword arguments (``**d`` has the key "**").
    keywords: tuple[tuple[str, Expr], ...] = ()
    #: 1-based line where the expression starts (0 when unknown).
    line: int = 0


@dataclass(frozen=True, slots=True)
class Target:
    """The written side of an assignment."""

    #: ``name`` (a local), ``attr`` (``base.name``) or ``other`` (subscript...).
    kind: str
    #: Local name or attribute name.
    name: str
    #: Receiver of an attribute target.
    base: Expr | None
    #: Index path inside nested unpacking (``()`` when not unpacked).
    path: tuple[int, ...]
    #: 1-based line of the target itself.
    line: int
    #: Source of the target.
    text: str


@dataclass(frozen=True, slots=True)
class Assignment:
    """``target = value``, ``target op= value`` or a for/with binding, in one function."""

    #: What is written.
    target: Target
    #: What is read to write it.
    value: Expr
    #: ``copy`` for ``=``, the operator for an augmented assignment, ``for``/``with`` for those.
    op: str
    #: Enclosing conditions, outermost first (``not (c)`` in an else branch).
    guard: tuple[str, ...]
    #: Source of the statement (header only for for/with).
    code: str
    #: 1-based line of the statement.
    line: int
    #: The annotation of an annotated assignment (``self.w: Optional[W] = None``), or "".
    annotation: str = ""
    #: ``not (c)`` for each earlier ``if c:`` of its blocks that always leaves (``if c: return`` before
    #: it): the statement runs only when these hold too. Apart from :attr:`guard`, which says which
    #: branch the write is in (a guarded write may replace the value; one after an early exit does not).
    exits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Return:
    """A ``return`` in one function."""

    #: The returned expression.
    value: Expr
    #: Enclosing conditions.
    guard: tuple[str, ...]
    #: 1-based line.
    line: int


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call anywhere in one function (for arguments to parameters, and the conditions it runs under)."""

    #: The call expression.
    call: Expr
    #: 1-based line of its statement.
    line: int
    #: The conditions it runs under: the enclosing ones, outermost first (``not (c)`` in an else branch), as
    #: :class:`Assignment` has them, then ``not (c)`` for each earlier ``if c:`` of its blocks that always
    #: leaves (``if c: return ...`` before it).
    guard: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Body:
    """How values flow inside one function."""

    #: Assignments in source order.
    assignments: tuple[Assignment, ...]
    #: Returns in source order.
    returns: tuple[Return, ...]
    #: Calls in source order.
    calls: tuple[CallSite, ...]
    #: Why the body could not be read, or "".
    error: str = ""
    #: Bare ``return`` statements (no value), with their guards: early exits.
    leaves: tuple[Return, ...] = ()
