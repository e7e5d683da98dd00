"""Stage 3 (index): what a module defines and imports, from its tree-sitter tree.

Only the module level, class bodies and the statements that wrap definitions
(``if``/``try``) are walked; function bodies are left to :mod:`sgtrace.index.body`
and read only when a slice reaches them.
"""

from __future__ import annotations

from typing import Any

from sgtrace.index.exprs import DEPTH, NestingError
from sgtrace.records import ClassDef, Field, Function, Import, Outline, Param

_WRAPPERS = frozenset(
    {"if_statement", "try_statement", "else_clause", "elif_clause", "except_clause", "finally_clause"}
)


def _text(node: Any) -> str:
    raw: bytes = node.text
    return raw.decode("utf-8", "replace")


def outline(tree: Any, depth: int = DEPTH) -> Outline:
    """The outline of a parsed module; NestingError past *depth* levels of nested blocks."""
    collector = _Collector(depth)
    collector.block(tree.root_node, prefix="", type_checking=False)
    return Outline(tuple(collector.imports), tuple(collector.classes), tuple(collector.functions))


class _Collector:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.level = 0
        self.imports: list[Import] = []
        self.classes: list[ClassDef] = []
        self.functions: list[Function] = []

    def block(self, node: Any, prefix: str, type_checking: bool) -> None:
        if self.level >= self.depth:
            raise NestingError(node.start_point[0] + 1)
        self.level += 1
        for child in node.named_children:
            self.statement(child, prefix, type_checking)
        self.level -= 1

    def statement(self, node: Any, prefix: str, type_checking: bool) -> None:
        kind = node.type
        if kind in ("import_statement", "import_from_statement"):
            self.imports.extend(_imports(node, type_checking))
        elif kind == "decorated_definition":
            definition = node.child_by_field_name("definition")
            decorators = tuple(_text(d)[1:].strip() for d in node.named_children if d.type == "decorator")
            self.definition(definition, node, decorators, prefix, type_checking)
        elif kind in ("class_definition", "function_definition"):
            self.definition(node, node, (), prefix, type_checking)
        elif kind == "block":
            self.block(node, prefix, type_checking)
        elif kind in _WRAPPERS:
            guarded = type_checking or (kind == "if_statement" and "TYPE_CHECKING" in _condition(node))
            for child in node.named_children:
                if child.type == "block":
                    self.block(child, prefix, guarded)
                elif child.type in _WRAPPERS:
                    self.statement(child, prefix, type_checking)

    def definition(self, node: Any, outer: Any, decorators: tuple[str, ...], prefix: str, tc: bool) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        qualname = f"{prefix}{_text(name)}"
        if node.type == "function_definition":
            self.functions.append(_function(node, outer, qualname, decorators))
            body = node.child_by_field_name("body")
            if body is not None:
                self.imports.extend(_nested_imports(body))
            return
        bases = node.child_by_field_name("superclasses")
        base_names = tuple(_text(b) for b in bases.named_children if b.type != "keyword_argument") if bases else ()
        body = node.child_by_field_name("body")
        fields = tuple(_fields(body)) if body is not None else ()
        self.classes.append(ClassDef(qualname, base_names, decorators, fields, node.start_point[0] + 1))
        if body is not None:
            self.block(body, f"{qualname}.", tc)


def _condition(node: Any) -> str:
    condition = node.child_by_field_name("condition")
    return _text(condition) if condition is not None else ""


def _imports(node: Any, type_checking: bool) -> list[Import]:
    found: list[Import] = []
    if node.type == "import_statement":
        for item in node.named_children:
            if item.type == "aliased_import":
                target = _text(item.child_by_field_name("name"))
                found.append(Import(_text(item.child_by_field_name("alias")), target, type_checking))
            elif item.type == "dotted_name":
                target = _text(item)
                found.append(Import(target.split(".")[0], target.split(".")[0], type_checking))
        return found
    module_node = node.child_by_field_name("module_name")
    module = _text(module_node) if module_node is not None else ""
    for item in node.children_by_field_name("name"):
        if item.type == "aliased_import":
            name = _text(item.child_by_field_name("name"))
            local = _text(item.child_by_field_name("alias"))
        else:
            name = local = _text(item)
        found.append(Import(local, _join(module, name), type_checking))
    return found


def _join(module: str, name: str) -> str:
    return f"{module}{name}" if module.endswith(".") else f"{module}.{name}"


def _nested_imports(body: Any) -> list[Import]:
    """Imports written inside a function body (SGLang imports lazily a lot), at any depth of blocks."""
    found: list[Import] = []
    stack = [body]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type in ("import_statement", "import_from_statement"):
                found.extend(_imports(child, False))
            elif child.type in _WRAPPERS or child.type in ("block", "with_statement", "for_statement"):
                stack.append(child)
    return found


def _function(node: Any, outer: Any, qualname: str, decorators: tuple[str, ...]) -> Function:
    params_node = node.child_by_field_name("parameters")
    params = tuple(_params(params_node)) if params_node is not None else ()
    returns = node.child_by_field_name("return_type")
    return Function(
        qualname,
        decorators,
        params,
        _text(returns) if returns is not None else "",
        node.start_point[0] + 1,
        outer.start_byte,
        outer.end_byte,
    )


def _params(node: Any) -> list[Param]:
    found: list[Param] = []
    keyword_only = False
    for child in node.named_children:
        kind = "keyword" if keyword_only else "positional"
        if child.type == "identifier":
            found.append(Param(_text(child), "", "", kind))
        elif child.type in ("default_parameter", "typed_default_parameter"):
            name, annotation = child.child_by_field_name("name"), child.child_by_field_name("type")
            value = child.child_by_field_name("value")
            found.append(Param(_text(name), _text(annotation) if annotation else "", _text(value), kind))
        elif child.type == "typed_parameter":
            inner = child.named_children[0]
            annotation = child.child_by_field_name("type")
            star = {"list_splat_pattern": "star", "dictionary_splat_pattern": "starstar"}.get(inner.type)
            name = inner.named_children[0] if star else inner
            found.append(Param(_text(name), _text(annotation) if annotation else "", "", star or kind))
            keyword_only = keyword_only or star == "star"
        elif child.type in ("list_splat_pattern", "dictionary_splat_pattern"):
            star = "star" if child.type == "list_splat_pattern" else "starstar"
            found.append(Param(_text(child.named_children[0]), "", "", star))
            keyword_only = True
        elif child.type == "keyword_separator":
            keyword_only = True
    return found


def _fields(body: Any) -> list[Field]:
    found: list[Field] = []
    for statement in body.named_children:
        if statement.type != "expression_statement" or not statement.named_children:
            continue
        assignment = statement.named_children[0]
        if assignment.type != "assignment":
            continue
        left = assignment.child_by_field_name("left")
        if left is None or left.type != "identifier":
            continue
        annotation = assignment.child_by_field_name("type")
        value = assignment.child_by_field_name("right")
        found.append(
            Field(
                _text(left),
                _text(annotation) if annotation is not None else "",
                _text(value) if value is not None else "",
                left.start_point[0] + 1,
            )
        )
    return found
