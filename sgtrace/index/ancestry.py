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

from sgtrace.parse import first_child_ending_after

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


class Paths:
    """The nodes at byte ranges of one tree, and the parents of the nodes on the way to them.

    tree-sitter's ``Node.parent`` walks down from the root, so climbing from a node at depth d costs
    d per step: quadratic in a deep tree (4,000 chained targets ``a.x = a.x = ... = v`` nest 4,000
    levels deep). Instead each range is reached by descending from the deepest node found so far
    that holds it, noting every parent on the way; ranges asked in increasing order then cost the
    union of their paths from the root.
    """

    def __init__(self, root: Any) -> None:
        self._stack: list[Any] = [root]
        self._up: dict[int, Any] = {}

    def find(self, start: int, end: int) -> Any:
        """The smallest node that holds the bytes ``start:end`` (as ``descendant_for_byte_range``)."""
        stack = self._stack
        while len(stack) > 1 and not (stack[-1].start_byte <= start and end <= stack[-1].end_byte):
            stack.pop()
        node = stack[-1]
        while node.child_count:
            child = first_child_ending_after(node, start)
            if child is None or child.start_byte > start or child.end_byte < end:
                return node
            self._up[child.id] = node
            stack.append(child)
            node = child
        return node

    def parent(self, node: Any) -> Any:
        """The node's parent: from the paths found, else tree-sitter's own (None for the root)."""
        known = self._up.get(node.id)
        return known if known is not None else node.parent


class Ancestry:
    """Answers :meth:`of` for many nodes of one tree, sharing the walks."""

    def __init__(self, parent: Any = None) -> None:
        self._memo: dict[int, Enclosing] = {}
        #: How to find a node's parent (a :meth:`Paths.parent`, or tree-sitter's own).
        self._parent = parent or (lambda node: node.parent)

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
            current = self._parent(current)
        state = known or Enclosing(None, (), False)
        for step in reversed(path):
            state = _descend(state, step, self._parent(step))
            self._memo[step.id] = state
        return state


def _descend(outer: Enclosing, node: Any, parent: Any) -> Enclosing:
    statement, scope, in_error = outer.statement, outer.scope, outer.in_error
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
