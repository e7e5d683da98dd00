"""tree-sitter expressions reduced to :class:`~sgtrace.records.Expr` trees."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sgtrace.model import Limits
from sgtrace.records import Expr

#: Longest source kept on an Expr (labels only need the start).
TEXT_LIMIT = 160
#: Operands kept under one display or comprehension (a 500-entry dict literal needs no more).
_MAX_OPERANDS = 64

_BINARY = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "<<": "lshift",
    ">>": "rshift",
    "|": "or",
    "&": "and",
    "^": "xor",
    "@": "matmul",
}
_CONSTANTS = frozenset(
    {"integer", "float", "string", "concatenated_string", "true", "false", "none", "ellipsis", "comparison_operator"}
)
_TRANSPARENT = frozenset({"parenthesized_expression", "await", "named_expression"})
_SEQUENCES = frozenset({"tuple", "list", "expression_list", "pattern_list", "tuple_pattern", "list_pattern", "set"})
#: Comprehensions: their ``for`` clauses bind names to elements of an iterable.
COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "generator_expression", "dictionary_comprehension"}
)
#: Levels of nesting an expression may have before it is refused (:class:`NestingError`).
DEPTH = Limits().depth


class NestingError(ValueError):
    """An expression or block nested deeper than the bound: the file is reported, not analysed past it."""

    def __init__(self, line: int) -> None:
        super().__init__(f"nested too deeply at line {line}")
        #: 1-based line where the bound was reached.
        self.line = line


#: Keyword prefix on a comprehension's Expr: ``("for:a,b", iterable)`` for ``for a, b in iterable``.
FOR_PREFIX = "for:"


#: Whitespace that ``str.split`` would fold (ASCII; other text takes the slow path).
_SPACING = re.compile(rb"[\n\t\r\x0b\x0c\x1c-\x1f]|  ")


def text(node: Any) -> str:
    """The node's source on one line, cut to TEXT_LIMIT."""
    raw: bytes = node.text
    if raw.isascii() and _SPACING.search(raw) is None and raw.strip() == raw:
        return raw.decode("utf-8", "replace")[:TEXT_LIMIT]  # most nodes: already one line, single-spaced
    return " ".join(raw.decode("utf-8", "replace").split())[:TEXT_LIMIT]


def expr(node: Any, depth: int = DEPTH) -> Expr:
    """Reduce an expression; unknown shapes keep their sub-expressions as operands.

    *depth* is how many levels of nesting are left: past it, NestingError (each level is a call, and
    the records built are hashed and compared recursively, so an unbounded depth would exhaust the stack).
    """
    if depth <= 0:
        raise NestingError(node.start_point[0] + 1)
    reduced = _reduce(node, depth - 1)
    if reduced.kind in ("attr", "call", "name", "subscript"):
        r = reduced  # a new record rather than dataclasses.replace: this runs for every expression node
        return Expr(r.kind, r.text, r.name, r.base, r.args, r.keywords, node.start_point[0] + 1)
    return reduced


def _reduce(node: Any, levels: int) -> Expr:
    kind = node.type
    while kind in _TRANSPARENT:
        inner = node.child_by_field_name("value") if kind == "named_expression" else _first_named(node)
        if inner is None:
            break
        node, kind = inner, inner.type
    source = text(node)
    if kind == "identifier":
        return Expr("name", source, source)
    if kind == "attribute":
        return Expr(
            "attr",
            source,
            text(node.child_by_field_name("attribute")),
            expr(node.child_by_field_name("object"), levels),
        )
    if kind == "call":
        return _call(node, source, levels)
    if kind in _CONSTANTS:
        return Expr("const", source, source)
    if kind == "binary_operator":
        operator = node.child_by_field_name("operator")
        name = _BINARY.get(text(operator), "op") if operator is not None else "op"
        return Expr(
            "op",
            source,
            name,
            args=(expr(node.child_by_field_name("left"), levels), expr(node.child_by_field_name("right"), levels)),
        )
    if kind == "boolean_operator":
        operator = node.child_by_field_name("operator")
        name = text(operator) if operator is not None else "or"
        return Expr(
            "op",
            source,
            name,
            args=(expr(node.child_by_field_name("left"), levels), expr(node.child_by_field_name("right"), levels)),
        )
    if kind == "conditional_expression":
        parts = node.named_children
        return (
            Expr("op", source, "ifexp", args=(expr(parts[0], levels), expr(parts[2], levels)))
            if len(parts) == 3
            else _other(node, source, levels)
        )
    if kind == "subscript":
        index = tuple(expr(n, levels) for n in node.children_by_field_name("subscript"))
        return Expr("subscript", source, "", expr(node.child_by_field_name("value"), levels), index)
    if kind in _SEQUENCES:
        return Expr(
            "tuple", source, "", args=tuple(expr(n, levels) for n in node.named_children if n.type != "comment")
        )
    if kind == "dictionary":
        return _dictionary(node, source, levels)
    if kind in ("list_splat", "dictionary_splat", "list_splat_pattern"):
        inner = _first_named(node)
        return Expr("starred", source, "", expr(inner, levels) if inner is not None else None)
    return _other(node, source, levels)


def _first_named(node: Any) -> Any:
    children = [c for c in node.named_children if c.type != "comment"]
    return children[0] if children else None


def _call(node: Any, source: str, levels: int) -> Expr:
    args: list[Expr] = []
    keywords: list[tuple[str, Expr]] = []
    arguments = node.child_by_field_name("arguments")
    if arguments is not None and arguments.type == "argument_list":
        for child in arguments.named_children:
            if child.type == "keyword_argument":
                keywords.append(
                    (text(child.child_by_field_name("name")), expr(child.child_by_field_name("value"), levels))
                )
            elif child.type == "dictionary_splat":
                inner = _first_named(child)
                keywords.append(("**", expr(inner, levels) if inner is not None else Expr("other", "", "")))
            elif child.type != "comment":
                args.append(expr(child, levels))
    elif arguments is not None:  # a generator expression as the only argument
        args.append(expr(arguments, levels))
    return Expr("call", source, "", expr(node.child_by_field_name("function"), levels), tuple(args), tuple(keywords))


def _dictionary(node: Any, source: str, levels: int) -> Expr:
    """A dict display: string keys become keywords (for ``f(**{...})``), other entries operands."""
    keywords: list[tuple[str, Expr]] = []
    operands: list[Expr] = []
    for pair in node.named_children[:_MAX_OPERANDS]:
        if pair.type != "pair":
            if pair.type != "comment":
                operands.append(expr(pair, levels))
            continue
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        literal = _string_literal(key) if key is not None else None
        if literal is not None and value is not None:
            keywords.append((literal, expr(value, levels)))
        elif value is not None:
            operands.append(expr(value, levels))
    return Expr("dict", source, "", args=tuple(operands), keywords=tuple(keywords))


def _string_literal(node: Any) -> str | None:
    """The text of a plain one-part string literal, or None."""
    if node.type != "string":
        return None
    parts = node.named_children
    if len(parts) == 2:
        return ""
    if len(parts) != 3 or parts[1].type != "string_content":
        return None
    prefix = text(parts[0]).lower().strip("'\"")
    return text(parts[1]) if prefix in ("", "r", "u") else None


def _other(node: Any, source: str, levels: int) -> Expr:
    """Any other expression: its operands, lambdas and comparisons left out (they yield no data)."""
    operands: list[Expr] = []
    stack = list(reversed(node.named_children))
    while stack and len(operands) < _MAX_OPERANDS:
        child = stack.pop()
        if child.type in ("lambda", "comment", "comparison_operator", "not_operator"):
            continue
        if child.type in ("for_in_clause", "if_clause", "pair", "keyword_argument", "argument_list"):
            stack.extend(reversed(child.named_children))
            continue
        operands.append(expr(child, levels))
    return Expr("other", source, node.type, args=tuple(operands), keywords=_bindings(node, levels))


def _bindings(node: Any, levels: int) -> tuple[tuple[str, Expr], ...]:
    """A comprehension's ``for`` clauses: (``for:`` + the names bound, the iterable)."""
    if node.type not in COMPREHENSIONS:
        return ()
    found: list[tuple[str, Expr]] = []
    for clause in node.named_children:
        left, right = clause.child_by_field_name("left"), clause.child_by_field_name("right")
        if clause.type != "for_in_clause" or left is None or right is None:
            continue
        names = [text(n) for n in _identifiers(left)]
        if names:
            found.append((FOR_PREFIX + ",".join(names), expr(right, levels)))
    return tuple(found)


def _identifiers(node: Any) -> list[Any]:
    """The identifiers a (possibly nested) ``for`` target binds, in order."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            found.append(current)
        else:
            stack.extend(reversed(current.named_children))
    return found


def distinct(values: Iterable[Expr]) -> list[Expr]:
    """*values* without repeats of one object, in order: the targets of one statement share its value, so
    a walk over every assignment's value goes through ``a, b, ... = ...`` once, not once per target."""
    seen: set[int] = set()
    found: list[Expr] = []
    for value in values:
        if id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    return found
