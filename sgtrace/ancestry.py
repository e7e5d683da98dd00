"""What encloses a node: its statement, its class/function scope, and whether it is in an ERROR.

Walking up from every hit costs the depth of the tree per hit, quadratic on a
2,000-term expression; querying every statement of a file costs a Python
object per statement. Instead each walk up stops at the first ancestor an
earlier walk already described, so a file costs at most one visit per node on
the hits' paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_DEFINITIONS = frozenset({"function_definition", "class_definition"})
_BLOCKS = frozenset({"module", "block"})


@dataclass(frozen=True, slots=True)
class Enclosing:
    """What surrounds a node (the node itself included)."""

    #: The innermost statement: a node whose parent is the module or a block.
    statement: Any
    #: (node type, name) of each enclosing class or function definition, outermost first.
    scope: tuple[tuple[str, str], ...]
    #: Whether the node lies inside a tree-sitter ERROR node.
    in_error: bool


class Ancestry:
    """Answers :meth:`of` for many nodes of one tree, sharing the walks."""

    def __init__(self) -> None:
        self._memo: dict[int, Enclosing] = {}

    def of(self, node: Any) -> Enclosing:
        """What encloses *node*."""
        path: list[Any] = []
        current = node
        known: Enclosing | None = None
        while current is not None:
            known = self._memo.get(current.id)
            if known is not None:
                break
            path.append(current)
            current = current.parent
        state = known or Enclosing(None, (), False)
        for step in reversed(path):
            state = _descend(state, step)
            self._memo[step.id] = state
        return state


def _descend(outer: Enclosing, node: Any) -> Enclosing:
    statement, scope, in_error = outer.statement, outer.scope, outer.in_error
    parent = node.parent
    if parent is not None and parent.type in _BLOCKS:
        statement = node
    if node.type in _DEFINITIONS:
        name = node.child_by_field_name("name")
        scope = (*scope, (node.type, name.text.decode("utf-8", "replace") if name is not None else "?"))
    if node.type == "ERROR":
        in_error = True
    if statement is outer.statement and scope is outer.scope and in_error == outer.in_error:
        return outer
    return Enclosing(statement, scope, in_error)
