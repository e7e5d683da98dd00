"""Syntax alone: the walks over statements and expressions the searches use, the text filters that spare a
parse, and what a function's parameters, annotations and decorators say."""

from __future__ import annotations

import ast
import collections
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from sgtrace.analyses.evaluate.values import Unknown

#: The fields of a statement that hold blocks of statements (what the statement-only walks descend into).
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _unloaded(node: ast.AST) -> bool:
    """Whether *node* is a function whose body is not parsed yet."""
    return "_read_by" in node.__dict__ and "body" not in node.__dict__


def _block(node: ast.AST, name: str) -> Any:
    """The block field *name* of *node* as it is now: a function's body not parsed yet is empty (not parsed)."""
    return node.__dict__.get(name)


def _holds(body: Sequence[ast.stmt], line: int) -> bool:
    return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in body)


#: The names a method's receiver goes by (a call on them is a method of the enclosing class, see ``_callee``).
_SELF = frozenset({"self", "cls"})


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return type(node).__name__


def chain_of(node: ast.expr) -> list[str]:
    """``self.a.b`` -> ["self", "a", "b"]; a call's result ends the chain at its function (``get_x().y``)."""
    names: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Call)):
        if isinstance(node, ast.Call):
            node = node.func
            continue
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def _spelt(text: bytes, word: str, after: re.Pattern[bytes], before: re.Pattern[bytes]) -> bool:
    """Whether *text* holds *word* matching *after* from the word on and *before* up to it, as the one pattern
    ``before + after`` would (the word is looked for first, which the pattern's alternation at its head would
    not let the regular expression engine do)."""
    at = 0
    while (found := after.search(text, at)) is not None:
        start = found.start()
        if before.search(text, text.rfind(b"\n", 0, start) + 1, start) is not None:
            return True
        at = start + 1
    return False


@functools.lru_cache(maxsize=512)
def _written_after(attr: str) -> re.Pattern[bytes]:
    return re.compile(re.escape(attr.encode()) + rb"\b(?:(?:\s*:[^=\n]*)?(?:\s*=[^=]|\()|\s*:[^=\n]*$)", re.M)


@functools.lru_cache(maxsize=512)
def _defined_after(name: str) -> re.Pattern[bytes]:
    return re.compile(re.escape(name.encode()) + rb"\b")


#: What comes before a written attribute (on its line) and a defined name, up to the name.
_WRITTEN_BEFORE = re.compile(rb"(?:\.|^[ \t]+|def )\Z", re.M)


_DEFINED_BEFORE = re.compile(rb"(?:def|class)\s+\Z")


#: A node kind -> its fields that hold statements (a block, a ``try``'s handlers, a ``match``'s cases).
_STATEMENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _walk_statements(node: ast.AST) -> Iterator[ast.AST]:
    """*node* and the statements, handlers and cases at any depth under it, in :func:`ast.walk`'s order (breadth
    first), without walking expressions (which hold no statements). *node*'s own body is parsed if it is not yet;
    the functions of an outline under it are walked only as far as they are parsed."""
    root = node
    pending = collections.deque([node])
    while pending:
        node = pending.popleft()
        kind = type(node)
        fields = _STATEMENT_FIELDS.get(kind)
        if fields is None:
            fields = _STATEMENT_FIELDS[kind] = tuple(f for f in kind._fields if f in _BLOCK_FIELDS)
        for name in fields:
            pending.extend((getattr(node, name, None) if node is root else _block(node, name)) or ())
        yield node


def _statements(body: Sequence[ast.stmt], kind: type | tuple[type, ...]) -> Iterator[Any]:
    """The statements of *kind* in *body* and the blocks inside it (not inside functions or classes of other
    kinds), without walking expressions."""
    pending: list[Any] = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, kind):
            yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not isinstance(
            statement, kind
        ):
            continue
        for name in _BLOCK_FIELDS:
            block = _block(statement, name)
            if isinstance(block, list):
                pending.extend(b for b in block if isinstance(b, (ast.stmt, ast.ExceptHandler, ast.match_case)))


#: Statements whose lines are searched through their own statements (a block's header is searched with it).
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of *statement* outside the blocks it holds (those are statements of their own)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        yield node
        statement_node = isinstance(node, ast.stmt)
        for name in node._fields:
            if statement_node and name in _BLOCK_FIELDS:
                continue
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                pending.append(value)
            elif isinstance(value, list):
                pending.extend(v for v in value if isinstance(v, ast.AST))


def _default_of(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[ast.expr | None] | None:
    """(its default) when *name* is a named parameter of *function* other than ``self``; None when it is not."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, ast.expr | None] = {p.arg: None for p in [*positional, *arguments.kwonlyargs]}
    defaults.update(zip([p.arg for p in positional][-len(arguments.defaults) :], arguments.defaults, strict=False))
    defaults.update({p.arg: d for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d})
    if name not in defaults or name == "self":
        return None
    return (defaults[name],)


def _is_super(call: ast.Call) -> bool:
    """``super().__init__(...)``."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and chain_of(func.value.func) == ["super"]
    )


def _targets(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return [statement.target]
    return []


def _parameters(function: ast.AST) -> set[str]:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def _annotated(function: ast.AST | None, name: str) -> list[str]:
    """The class a parameter *name* of *function* is annotated with (``kvc: KVCacheConfigurator``), if any."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    arguments = function.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if argument.arg == name and argument.annotation is not None:
            annotation = argument.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                return [annotation.value.strip()]
            spelt = chain_of(annotation)
            return spelt[-1:]
    return []


def _expression(source: str) -> ast.expr | Unknown:
    """*source* parsed as an expression (a condition that binds, ``if x := f():``, as its parentheses make it
    one); an Unknown naming it when it is none."""
    for text in (source.strip(), f"({source.strip()})"):
        try:
            return ast.parse(text, mode="eval").body
        except SyntaxError:
            continue
    return Unknown((source.strip(),))


def _takes_self(function: ast.AST, owner: ast.ClassDef | None) -> bool:
    """Whether a call of *function* passes its first parameter itself (a method of *owner* not static)."""
    return owner is not None and _kind(function) != "static"


def _kind(function: ast.AST) -> str:
    """``static``, ``class`` or ``instance``: how a method is bound, by its decorators."""
    names = {(chain_of(d)[-1:] or [""])[0] for d in getattr(function, "decorator_list", ())}
    return "static" if "staticmethod" in names else "class" if "classmethod" in names else "instance"


def _changes(statement: ast.stmt) -> bool:
    """Whether *statement* (its own expressions, not the blocks it holds; a loop's whole body) may change an object a
    local holds: an assignment to an attribute or item of it, a call it is passed to or called on (``self`` and
    ``cls`` aside: an object they hold is not a local's)."""
    looped = isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
    nodes = ast.walk(statement) if looped else _expressions(statement)
    for node in nodes:
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if _root_name(node) not in (None, *_SELF):
                return True
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and _root_name(node.func.value) not in (None, *_SELF):
                return True
            for argument in (*node.args, *(k.value for k in node.keywords)):
                inner = argument.value if isinstance(argument, ast.Starred) else argument
                if isinstance(inner, ast.Name) and inner.id not in _SELF:
                    return True
    return False


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``a`` of ``a.b[0].c``), None for another start."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


_Handler = TypeVar("_Handler")


def handler_of(table: Mapping[type, _Handler], kind: type) -> _Handler | None:
    """*table*'s entry for *kind*, else for its nearest base that has one (as ``isinstance`` would match: the
    source model's lazy functions are subclasses of ``ast``'s); None when none has."""
    for base in kind.__mro__:
        handler = table.get(base)
        if handler is not None:
            return handler
    return None
