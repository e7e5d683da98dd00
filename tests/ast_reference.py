"""An independent reference for ``find``, written with the standard-library ``ast``.

It shares no code with sgtrace: ``ast`` marks every store target with a
``Store`` context, which makes the question of "is this a write" a lookup
instead of an analysis. Used to check sgtrace on real releases.
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
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Store):
            lines.add(node.lineno)
        elif isinstance(node, ast.Call) and _is_setattr(node.func) and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value == attribute:
                lines.add(name.lineno)
        elif isinstance(node, ast.ClassDef):
            lines.update(_fields(node, attribute))
    return lines


def _is_setattr(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setattr") or (
        isinstance(func, ast.Attribute) and func.attr == "__setattr__"
    )


def _fields(cls: ast.ClassDef, attribute: str) -> set[int]:
    lines: set[int] = set()
    for statement in cls.body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name) and node.id == attribute:
                    lines.add(node.lineno)
    return lines
