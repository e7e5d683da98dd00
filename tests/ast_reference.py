"""An independent reference for ``find``, written with the standard-library ``ast``.

It shares no code with sgtrace: ``ast`` marks every store target with a
``Store`` context, which makes the question of "is this a write" a lookup
instead of an analysis. Used to check sgtrace on real releases and on generated programs
(tests/test_fuzz.py).
"""

from __future__ import annotations

import ast
from pathlib import Path


def reference_writes(root: Path, attribute: str) -> tuple[set[tuple[str, int]], set[str]]:
    """((path, line) of every write of *attribute*, paths ``ast`` cannot parse)."""
    found: set[tuple[str, int]] = set()
    broken: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        if attribute.encode() not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            broken.add(rel)
            continue
        found.update((rel, line) for line in _lines(tree, attribute))
    return found, broken


def _lines(tree: ast.AST, attribute: str) -> set[int]:
    """Lines of every write of *attribute* that ``find`` lists by default (bare-name bindings left out)."""
    return {line for line, _, kind in _sites(tree, attribute) if kind != "name"}


def reference_sites(source: str, attribute: str) -> list[tuple[int, int, str]]:
    """(line, 1-based column in characters, kind) of every write of *attribute* in *source*, sorted.

    The kinds are sgtrace's. ``ast`` marks every bound target ``Store``; the kind is read off the
    statement that binds it (climbing out of tuples, lists and stars, as unpacking nests them). A bare
    name is a ``field`` when a plain, annotated or augmented assignment binds it directly in a class
    body, else a ``name``, as parameters and walrus targets are.
    """
    lines = source.encode("utf-8").split(b"\n")
    return sorted(
        (line, len(lines[line - 1][:offset].decode("utf-8")) + 1, kind)
        for line, offset, kind in _sites(ast.parse(source), attribute)
    )


def _sites(tree: ast.AST, attribute: str) -> list[tuple[int, int, str]]:
    """(line, UTF-8 offset in the line, kind) of every write of *attribute*."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Store):
            if (node.attr if isinstance(node, ast.Attribute) else node.id) == attribute:
                found.append((node.lineno, node.col_offset, _kind(node, parents)))
        elif isinstance(node, ast.arg) and node.arg == attribute:
            found.append((node.lineno, node.col_offset, "name"))
        elif isinstance(node, ast.Call) and _is_setattr(node.func) and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value == attribute:
                found.append((name.lineno, name.col_offset, "setattr"))
    return found


def _kind(target: ast.Attribute | ast.Name, parents: dict[ast.AST, ast.AST]) -> str:
    node: ast.AST = target
    in_sequence = False
    while isinstance(parents[node], (ast.Tuple, ast.List, ast.Starred)):
        node = parents[node]
        in_sequence = in_sequence or not isinstance(node, ast.Starred)
    owner = parents[node]
    if isinstance(target, ast.Name) and isinstance(owner, ast.NamedExpr):
        return "name"
    kind = {ast.AnnAssign: "annassign", ast.AugAssign: "augassign", ast.For: "for", ast.AsyncFor: "for",
            ast.comprehension: "for", ast.withitem: "with"}.get(type(owner))  # fmt: skip
    kind = kind or ("unpack" if in_sequence else "assign")
    if isinstance(target, ast.Attribute):
        return kind
    in_class_body = isinstance(parents[owner], ast.ClassDef)  # a statement whose parent is a class is in its body
    return "field" if kind in ("assign", "annassign", "augassign", "unpack") and in_class_body else "name"


def _is_setattr(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setattr") or (
        isinstance(func, ast.Attribute) and func.attr == "__setattr__"
    )
