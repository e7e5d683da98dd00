"""The messages a release's code prints, read with the parser sgtrace uses (tree-sitter), never imported.

Each ``logger.X(...)`` call, and each exception raised with a message, whose first argument is a
string literal, an f-string, a concatenation of them, a ``%``-format or a ``.format`` template, gives
its text with every placeholder as ``{}`` (``{x:.2f}``, ``%.2f``, ``%s`` and ``{}`` alike). A
message whose text is built otherwise (a variable, a call) is not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgtrace.parse import captures, parse_tree

_LOGGING = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception"})
#: ``%s``, ``%d``, ``%.2f``, ``%r``... as one placeholder (``%%`` is a percent sign).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\d+|\*)?(?:\.\d+)?[sdifrgexXoc]")
PLACEHOLDER = "{}"


@dataclass(frozen=True)
class CodeMessage:
    """One message the code prints."""

    #: The file, relative to the release's root.
    path: str
    #: 1-based line of the call.
    line: int
    #: ``logger.info`` and the like: the level; a raised exception: ``raise``.
    how: str
    #: The text, each placeholder ``{}``.
    text: str


def messages(root: Path) -> Iterator[CodeMessage]:
    """Every message of the ``.py`` files under *root*, in file and line order."""
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if b"logger" not in data and b"raise" not in data and b"logging" not in data:
            continue
        tree = parse_tree(data)
        relative = str(path.relative_to(root))
        for call in captures("(call) @c", tree.root_node).get("c", []):
            found = _message(call)
            if found is not None:
                yield CodeMessage(relative, call.start_point[0] + 1, *found)


def _message(call: Any) -> tuple[str, str] | None:
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None or not arguments.named_children:
        return None
    how = ""
    if function.type == "attribute":
        name = function.child_by_field_name("attribute")
        if name is not None and name.text.decode() in _LOGGING:
            how = name.text.decode()
    if not how and call.parent is not None and call.parent.type == "raise_statement":
        how = "raise"
    if not how:
        return None
    text = _template(arguments.named_children[0])
    return (how, " ".join(text.split())) if text else None


def _template(node: Any) -> str | None:
    """The text of a string expression with placeholders as ``{}``; None if it is not one."""
    if node.type == "string":
        return _string(node)
    if node.type == "concatenated_string":
        parts = [_string(child) for child in node.named_children if child.type == "string"]
        return "".join(p for p in parts if p is not None)
    if node.type == "parenthesized_expression" and node.named_children:
        return _template(node.named_children[0])
    if node.type == "binary_operator":
        operator = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator is not None and operator.type == "%" and left is not None:
            return _template(left)
        if operator is not None and operator.type == "+" and left is not None and right is not None:
            parts = [_template(left), _template(right)]
            return "".join(p if p is not None else PLACEHOLDER for p in parts) if any(parts) else None
    if node.type == "call":
        function = node.child_by_field_name("function")
        if function is not None and function.type == "attribute":
            name = function.child_by_field_name("attribute")
            target = function.child_by_field_name("object")
            if name is not None and name.text == b"format" and target is not None:
                return _template(target)
    return None


def _string(node: Any) -> str | None:
    """One string literal (f-string or not), interpolations as ``{}``; ``%`` formats as ``{}``."""
    prefix = node.children[0].text.decode().lower() if node.children else ""
    if "b" in prefix:
        return None
    parts: list[str] = []
    for child in node.children:
        if child.type == "string_content":
            text = child.text.decode("utf-8", "replace").replace("\\n", " ").replace("\\t", " ")
            parts.append(text if "f" in prefix else _PERCENT.sub(PLACEHOLDER, text).replace("%%", "%"))
        elif child.type == "interpolation":
            parts.append(PLACEHOLDER)
        elif child.type == "escape_sequence":
            parts.append(" " if child.text in (b"\\n", b"\\t") else child.text.decode()[1:])
    text = "".join(parts)
    if "f" in prefix:
        text = text.replace("{{", "{").replace("}}", "}")
    return text
