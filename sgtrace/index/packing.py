"""Index records (outlines, bodies) as compact JSON arrays, for the content store: data only, read back fast.

:mod:`sgtrace.codec` writes a record as an object with its field names, which reads back at about
the speed a body is computed from its syntax tree (measured on 318 bodies of SGLang 0.5.23: 0.33 s of
``json.loads`` and 0.55 s of decoding, against 0.75 s to read them from the tree). Here a record is a
list of its fields in order, each class with a reader of its own: the JSON is a third of the size and
a record is one positional call. A list of the wrong length or a field of the wrong type raises
ValueError or TypeError (the entry is damaged); nothing but these records can come out.
"""

from __future__ import annotations

from typing import Any

from sgtrace.records import (
    Assignment,
    Body,
    CallSite,
    ClassDef,
    Expr,
    Field,
    Function,
    Import,
    Outline,
    Param,
    Return,
    Target,
)


def pack_expr(expr: Expr) -> list[Any]:
    """``[kind, text, name, base, args, keywords, line]``."""
    return [
        expr.kind,
        expr.text,
        expr.name,
        None if expr.base is None else pack_expr(expr.base),
        [pack_expr(a) for a in expr.args],
        [[k, pack_expr(v)] for k, v in expr.keywords],
        expr.line,
    ]


def unpack_expr(data: Any) -> Expr:
    """The Expr :func:`pack_expr` wrote."""
    kind, text, name, base, args, keywords, line = data
    if not (type(kind) is str and type(text) is str and type(name) is str and type(line) is int):
        raise TypeError("malformed expression")
    return Expr(
        kind,
        text,
        name,
        None if base is None else unpack_expr(base),
        tuple(map(unpack_expr, args)),
        tuple((_str(k), unpack_expr(v)) for k, v in keywords),
        line,
    )


def pack_body(body: Body) -> list[Any]:
    """``[assignments, returns, calls, error, leaves]``."""
    return [
        _pack_assignments(body.assignments),
        [_pack_return(r) for r in body.returns],
        [[pack_expr(c.call), c.line, list(c.guard)] for c in body.calls],
        body.error,
        [_pack_return(r) for r in body.leaves],
    ]


def unpack_body(data: Any) -> Body:
    """The Body :func:`pack_body` wrote."""
    assignments, returns, calls, error, leaves = data
    return Body(
        _unpack_assignments(assignments),
        tuple(map(_unpack_return, returns)),
        tuple(CallSite(unpack_expr(call), _int(line), _strings(guard)) for call, line, guard in calls),
        _str(error),
        tuple(map(_unpack_return, leaves)),
    )


def _pack_assignments(assignments: tuple[Assignment, ...]) -> list[Any]:
    """The assignments; a value the one before already holds (the targets of one statement share their
    value: ``a, b, ... = ...`` of n targets) is written as that one's index, not n times over."""
    packed: list[Any] = []
    owner = 0  # the first of the assignments holding the value at hand, written whole
    for index, a in enumerate(assignments):
        if index > 0 and assignments[index - 1].value is a.value:
            packed.append(_pack_assignment(a, owner))
        else:
            owner = index
            packed.append(_pack_assignment(a))
    return packed


def _unpack_assignments(packed: Any) -> tuple[Assignment, ...]:
    found: list[Assignment] = []
    for data in packed:
        reference = data[1] if isinstance(data, list) and len(data) > 1 and type(data[1]) is int else None
        if reference is not None and not 0 <= reference < len(found):
            raise ValueError("an assignment's value refers to no earlier one")
        found.append(_unpack_assignment(data, None if reference is None else found[reference].value))
    return tuple(found)


def _pack_assignment(a: Assignment, shares: int | None = None) -> list[Any]:
    t = a.target
    target = [t.kind, t.name, None if t.base is None else pack_expr(t.base), list(t.path), t.line, t.text]
    value = pack_expr(a.value) if shares is None else shares
    return [target, value, a.op, list(a.guard), a.code, a.line, a.annotation, list(a.exits)]


def _unpack_assignment(data: Any, shared: Expr | None = None) -> Assignment:
    target, value, op, guard, code, line, annotation, exits = data
    kind, name, base, path, target_line, text = target
    written = Target(
        _str(kind),
        _str(name),
        None if base is None else unpack_expr(base),
        tuple(map(_int, path)),
        _int(target_line),
        _str(text),
    )
    return Assignment(
        written,
        unpack_expr(value) if shared is None else shared,
        _str(op),
        _strings(guard),
        _str(code),
        _int(line),
        _str(annotation),
        _strings(exits),
    )


def _pack_return(r: Return) -> list[Any]:
    return [pack_expr(r.value), list(r.guard), r.line]


def _unpack_return(data: Any) -> Return:
    value, guard, line = data
    return Return(unpack_expr(value), _strings(guard), _int(line))


def pack_outline(outline: Outline) -> list[Any]:
    """``[imports, classes, functions]``."""
    return [
        [[i.local, i.target, i.type_checking] for i in outline.imports],
        [[c.qualname, list(c.bases), list(c.decorators), [_pack_field(f) for f in c.fields], c.line]
         for c in outline.classes],
        [_pack_function(f) for f in outline.functions],
    ]  # fmt: skip


def unpack_outline(data: Any) -> Outline:
    """The Outline :func:`pack_outline` wrote."""
    imports, classes, functions = data
    return Outline(
        tuple(Import(_str(local), _str(target), _bool(checking)) for local, target, checking in imports),
        tuple(
            ClassDef(_str(name), _strings(bases), _strings(decorators), tuple(map(_unpack_field, fields)), _int(line))
            for name, bases, decorators, fields, line in classes
        ),
        tuple(map(_unpack_function, functions)),
    )


def _pack_field(f: Field) -> list[Any]:
    return [f.name, f.annotation, f.value, f.line]


def _unpack_field(data: Any) -> Field:
    name, annotation, value, line = data
    return Field(_str(name), _str(annotation), _str(value), _int(line))


def _pack_function(f: Function) -> list[Any]:
    params = [[p.name, p.annotation, p.default, p.kind] for p in f.params]
    return [f.qualname, list(f.decorators), params, f.returns, f.line, f.start, f.end]


def _unpack_function(data: Any) -> Function:
    qualname, decorators, params, returns, line, start, end = data
    return Function(
        _str(qualname),
        _strings(decorators),
        tuple(Param(_str(n), _str(a), _str(d), _str(k)) for n, a, d, k in params),
        _str(returns),
        _int(line),
        _int(start),
        _int(end),
    )


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("expected an integer")
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise TypeError("expected a boolean")
    return value


def _strings(values: Any) -> tuple[str, ...]:
    found = tuple(values)
    if not all(type(v) is str for v in found):
        raise TypeError("expected strings")
    return found
