"""Stage 3 (index, for ``find``): every access of one attribute name in one file.

Works on the tree-sitter tree. A query finds every identifier spelled like the
attribute (in C, so a file costs one parse plus a handful of nodes in
Python); each hit is then classified by walking *up* its ancestors, never
down, so no recursion limit applies however deep the expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sgtrace.index.ancestry import Ancestry, Paths
from sgtrace.model import Access, FileError, FileScan
from sgtrace.parse import Parsed, parse

#: Containers a target may sit in without ceasing to be a target.
_SEQUENCES = frozenset(
    {"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "tuple", "list", "list_splat"}
)
_TRANSPARENT = _SEQUENCES | {"parenthesized_expression", "expression_list"}
#: Parameter forms that bind a bare name.
_PARAMETERS = frozenset(
    {
        "parameters",
        "lambda_parameters",
        "default_parameter",
        "typed_parameter",
        "typed_default_parameter",
        "list_splat_pattern",
        "dictionary_splat_pattern",
    }
)


def scan_file(path: str, data: bytes, attribute: str, keep: Callable[[Parsed], None] | None = None) -> FileScan:
    """Find every access of *attribute* in one file's bytes (*keep*, if given, is handed the parse)."""
    parsed = parse(path, data)
    if isinstance(parsed, FileError):
        return FileScan((), (parsed,))
    if keep is not None:
        keep(parsed)
    accesses = _accesses(parsed, attribute)
    return FileScan(tuple(sorted(accesses, key=lambda a: (a.line, a.column, a.kind))), _errors(parsed))


def _errors(parsed: Parsed) -> tuple[FileError, ...]:
    return (parsed.error,) if parsed.error else ()


#: A node's parent (see :class:`~sgtrace.index.ancestry.Paths`: tree-sitter's own ``Node.parent`` is slow when deep).
Up = Callable[[Any], Any]


def _accesses(parsed: Parsed, attribute: str) -> list[Access]:
    hits: list[tuple[Any, str]] = []
    paths = Paths(parsed.tree.root_node)
    up = paths.parent
    for node in _occurrences(parsed, attribute, paths):
        if node.type == "identifier":
            site = _classify_identifier(node, up)
        else:
            site = _literal_name_call(node, attribute, up)
        if site is not None:
            hits.append(site)
    ancestry = Ancestry(up)
    found = []
    for node, kind in hits:
        around = ancestry.of(node)
        if not around.in_error:
            found.append(_access(parsed.data, node, kind, around.scope, around.statement or node))
    return found


def _classify_identifier(ident: Any, up: Up) -> tuple[Any, str] | None:
    """(node to locate, kind) for an identifier spelled like the attribute, or None."""
    parent = up(ident)
    if parent is None:
        return None
    if parent.type == "attribute":
        if parent.child_by_field_name("attribute") != ident:
            return None  # `attribute.other`: the name is the object, not the attribute
        misread = _misread_alias(parent, up)
        if misread:
            return misread
        kind = _attribute_kind(parent, up)
        return (_unstarred(parent) if kind in ("unpack", "for", "with") else parent), kind
    name_kind = _name_kind(ident, parent, up)
    return (ident, name_kind) if name_kind else None


def _attribute_kind(node: Any, up: Up) -> str:
    """Kind of an ``obj.ATTR`` expression: a write kind, ``read`` or ``del``."""
    target, parent, in_sequence = _climb_targets(node, up)
    kind = _target_kind(target, parent, in_sequence, up)
    if kind is not None:
        return kind
    if parent is not None and parent.type == "delete_statement":
        return "del"
    return "read"


def _misread_alias(attribute: Any, up: Up) -> tuple[Any, str] | None:
    """(statement, kind) for ``type(o).ATTR = v``, which tree-sitter-python reads as a type alias named
    ``(o).ATTR`` (``type`` taken for the soft keyword); a real alias is named by a plain name."""
    holder = up(attribute)
    if holder is None or holder.type != "type":
        return None
    kind, constrained = "assign", up(holder)
    if constrained is not None and constrained.type == "constrained_type" and constrained.named_children[0] == holder:
        kind, holder = "annassign", up(constrained)  # `type(o).ATTR: int = v`
    statement = up(holder) if holder is not None else None
    if statement is None or statement.type != "type_alias_statement":
        return None
    return (statement, kind) if statement.named_children[0] == holder else None  # the left (unnamed before 0.25)


def _unstarred(attribute: Any) -> Any:
    """The node where the target begins: tree-sitter-python reads a pattern's leading ``*o.x`` as ``(*o).x``."""
    node = attribute
    while node.type in ("attribute", "subscript", "call") and node.named_child_count:
        node = node.named_children[0]  # the object, the subscripted value, the function
    return node.named_children[0] if node.type == "list_splat" and node.named_child_count else attribute


def _climb_targets(node: Any, up: Up) -> tuple[Any, Any, bool]:
    """Climb out of tuples, lists, stars and parentheses: (the node reached, its parent, whether a
    sequence was crossed)."""
    in_sequence = False
    parent = up(node)
    while parent is not None and parent.type in _TRANSPARENT:
        node, parent = parent, up(parent)
        in_sequence = in_sequence or _is_sequence(node)
    if parent is not None and parent.type == "as_pattern_target":
        node, parent = parent, up(parent)
    return node, parent, in_sequence


def _is_sequence(node: Any) -> bool:
    """A tuple or list display, not a parenthesised single target like ``(a.x) = v``."""
    if node.type not in _SEQUENCES:
        return False
    if node.type in ("tuple_pattern", "tuple"):
        return any(child.type == "," for child in node.children) or node.named_child_count != 1
    return True


def _target_kind(target: Any, parent: Any, in_sequence: bool, up: Up) -> str | None:
    """Write kind if *target* is the bound side of *parent*, else None."""
    if parent is None:
        return None
    ptype = parent.type
    if ptype == "assignment" and parent.child_by_field_name("left") == target:
        if parent.child_by_field_name("type") is not None:
            return "annassign"
        return "unpack" if in_sequence else "assign"
    if ptype == "augmented_assignment" and parent.child_by_field_name("left") == target:
        return "augassign"
    if ptype in ("for_statement", "for_in_clause") and parent.child_by_field_name("left") == target:
        return "for"
    if target.type == "as_pattern_target" and ptype == "as_pattern":
        owner = up(parent)
        if owner is not None and owner.type == "with_item":
            return "with"
    return None


def _name_kind(ident: Any, parent: Any, up: Up) -> str | None:
    """``field`` for a class-body binding, ``name`` for another binding, None otherwise."""
    if parent.type in _PARAMETERS and _binds_parameter(ident, parent, up):
        return "name"
    if parent.type == "named_expression" and parent.child_by_field_name("name") == ident:
        return "name"
    target, bound_in, in_sequence = _climb_targets(ident, up)
    kind = _target_kind(target, bound_in, in_sequence, up)
    if kind is None:
        return None
    if kind in ("assign", "annassign", "augassign", "unpack") and _in_class_body(bound_in, up):
        return "field"
    return "name"


def _binds_parameter(ident: Any, parent: Any, up: Up) -> bool:
    if parent.type in ("parameters", "lambda_parameters", "list_splat_pattern", "dictionary_splat_pattern"):
        return parent.type != "list_splat_pattern" or _in_parameters(parent, up)
    if parent.type in ("default_parameter", "typed_default_parameter"):
        return bool(parent.child_by_field_name("name") == ident)
    return bool(parent.type == "typed_parameter" and parent.named_children[0] == ident)


def _in_parameters(node: Any, up: Up) -> bool:
    parent = up(node)
    return parent is not None and parent.type in ("parameters", "lambda_parameters", "typed_parameter")


def _in_class_body(assignment: Any, up: Up) -> bool:
    statement = up(assignment)
    while statement is not None and statement.type == "assignment":
        statement = up(statement)  # `a = b = 0`: a chain nests each assignment in the one before
    if statement is None or statement.type != "expression_statement":
        return False
    block = up(statement)
    if block is None or block.type != "block":
        return False
    definition = up(block)
    return definition is not None and definition.type == "class_definition"


def _occurrences(parsed: Parsed, attribute: str, paths: Paths) -> list[Any]:
    """The smallest node at each place the name's bytes occur: identifiers, string contents, others.

    A byte search and a descent per hit cost far less than a query that visits
    every identifier of the file.
    """
    needle = attribute.encode("utf-8")
    found = []
    start = parsed.data.find(needle)
    while start >= 0:
        end = start + len(needle)
        node = paths.find(start, end)
        if node is not None and node.start_byte == start and node.end_byte == end:
            found.append(node)
        start = parsed.data.find(needle, end)
    return found


def _literal_name_call(content: Any, attribute: str, up: Up) -> tuple[Any, str] | None:
    """``setattr(o, "ATTR", v)`` / ``o.__setattr__(...)`` writes and ``getattr(o, "ATTR")`` reads."""
    string = up(content)
    if content.type != "string_content" or string is None or not _is_literal(string, attribute):
        return None
    args = up(string)
    call = up(args) if args is not None and args.type == "argument_list" else None
    if call is None or call.type != "call":
        return None
    kind = _call_kind(call.child_by_field_name("function"))
    values = [c for c in args.named_children if c.type != "comment"]
    if kind is None or len(values) < 2 or values[1] != string:
        return None
    return string, kind


def _call_kind(fn: Any) -> str | None:
    if fn is None or fn.type not in ("identifier", "attribute"):
        return None
    name = _text(fn)
    if name == "setattr" or name.endswith(".__setattr__"):
        return "setattr"
    if name == "getattr":
        return "getattr"
    return None


def _is_literal(node: Any, attribute: str) -> bool:
    """Whether *node* is the plain string literal ``"ATTR"`` (no prefix, no escapes)."""
    if node.type != "string":
        return False
    parts = node.named_children
    if len(parts) != 3 or parts[1].type != "string_content":
        return False
    prefix = _text(parts[0]).lower().strip("'\"")
    return prefix in ("", "r", "u") and _text(parts[1]) == attribute


def _text(node: Any) -> str:
    text: bytes = node.text
    return text.decode("utf-8", "replace")


def _access(data: bytes, node: Any, kind: str, scope: tuple[tuple[str, str], ...], statement: Any) -> Access:
    row, byte_col = node.start_point
    line_start = node.start_byte - byte_col
    column = len(data[line_start : node.start_byte].decode("utf-8", "replace")) + 1
    cls, function = _context(scope)
    return Access(row + 1, column, kind, cls, function, _statement_code(data, node, statement))


def _context(chain: tuple[tuple[str, str], ...]) -> tuple[str | None, str | None]:
    """(qualified name of the enclosing class, of the enclosing function) from the definitions around."""
    names = [name for _, name in chain]
    cls_at = max((i for i, (t, _) in enumerate(chain) if t == "class_definition"), default=-1)
    fn_at = max((i for i, (t, _) in enumerate(chain) if t == "function_definition"), default=-1)
    cls = ".".join(names[: cls_at + 1]) if cls_at >= 0 else None
    function = ".".join(names[: fn_at + 1]) if fn_at >= 0 else None
    return cls, function


#: Characters of a statement's code kept on one finding: 4,000 chained targets of one 112 KB statement
#: would otherwise print it 4,000 times (448 MB). Output then grows linearly with what is analysed.
CODE_CHARS = 2000


def _statement_code(data: bytes, node: Any, statement: Any) -> str:
    """Source of *statement*; only its header if it is compound and *node* is in the header; cut at CODE_CHARS."""
    end = statement.end_byte
    for child in statement.children:
        if child.type == ":" and child.start_byte > node.start_byte:
            end = child.end_byte  # the header ends at its colon (a trailing comment is not code)
        if child.type == "block" and child.start_byte > node.start_byte:
            break
    indent = statement.start_point[1]
    cut = min(end, statement.start_byte + 4 * CODE_CHARS + 4)  # a character is at most 4 bytes of UTF-8
    text = data[statement.start_byte : cut].decode("utf-8", "replace").rstrip()
    lines = text.replace("\r\n", "\n").split("\n")  # a CRLF checkout reports the code as an LF one does
    return shorten("\n".join([lines[0]] + [_dedent(line, indent) for line in lines[1:]]), end - statement.start_byte)


def shorten(code: str, size: int) -> str:
    """*code* cut at CODE_CHARS characters, saying how many bytes the whole statement has."""
    if len(code) <= CODE_CHARS:
        return code
    return f"{code[:CODE_CHARS]} ... (cut: the statement has {size:,} bytes)"


def _dedent(line: str, width: int) -> str:
    stripped = line.lstrip(" \t")
    removed = len(line) - len(stripped)
    return line[min(removed, width) :]
