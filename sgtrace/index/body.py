"""Stage 3 (index): how values flow inside one function, read from its tree-sitter node.

Only the functions a slice reaches are read. Statements are walked with an
explicit guard (the enclosing conditions, ``not (...)`` in else branches; a
call's guard also negates the earlier ``if``s of its blocks that always leave);
expressions go to :func:`sgtrace.index.exprs.expr`. Nested functions and classes
are left out: they are functions of their own.

Measured on SGLang 0.5.23's ``pool_configurator.py`` (58 functions, 71 KB):
libcst needs 0.24 s to parse them one by one with positions, tree-sitter
parses the whole file in 0.01 s; a slice of the newest release reads
thousands of functions, so bodies are read from the tree-sitter tree.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sgtrace.index.exprs import DEPTH, NestingError, expr, text
from sgtrace.index.scan import CODE_CHARS, shorten
from sgtrace.records import Assignment, Body, CallSite, Expr, Return, Target

_AUGMENTED = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div", "//=": "floordiv", "%=": "mod", "**=": "pow"}
_NESTED = frozenset({"function_definition", "class_definition", "decorated_definition", "lambda"})
_SEQUENCES = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list"})


def read_body(function: Any, depth: int = DEPTH) -> Body:
    """The flow facts of one ``function_definition`` node.

    Raises NestingError past *depth* levels of nested blocks or expressions.
    """
    reader = _Reader(depth)
    body = function.child_by_field_name("body")
    if body is not None:
        reader.block(body, ())
    return Body(tuple(reader.assignments), tuple(reader.returns), tuple(reader.calls), leaves=tuple(reader.leaves))


def read_statement(statement: Any, depth: int = DEPTH) -> tuple[Assignment, ...]:
    """The assignments of one simple statement, with the guard its enclosing ``if``/``while`` give it."""
    reader = _Reader(depth)
    reader.statement(statement, _guard_of(statement))
    return tuple(reader.assignments)


def _guard_of(node: Any) -> tuple[str, ...]:
    """The conditions around *node* inside its function, as :class:`_Reader` would have collected them."""
    inner_first: list[str] = []
    current = node
    while current.parent is not None and current.type not in _NESTED:
        parent = current.parent
        if parent.type in ("if_statement", "elif_clause", "while_statement"):
            if current == parent.child_by_field_name("consequence") or current == parent.child_by_field_name("body"):
                inner_first.append(text(parent.child_by_field_name("condition")))
        if parent.type == "if_statement" and current.type in ("elif_clause", "else_clause"):
            inner_first.extend(_earlier_branches(parent, current))
        current = parent
    return tuple(reversed(inner_first))


def _earlier_branches(chain: Any, branch: Any) -> list[str]:
    """``not (c)`` for the conditions of the branches before *branch* of an if/elif chain, nearest first.

    Walks back from the branch, so a long chain costs at most MAX_CONDITIONS steps per statement.
    """
    found: list[str] = []
    sibling = branch.prev_named_sibling
    while sibling is not None and len(found) < MAX_CONDITIONS:
        if sibling.type == "elif_clause":
            found.append(f"not ({text(sibling.child_by_field_name('condition'))})")
        elif sibling.type != "comment":
            found.append(f"not ({text(chain.child_by_field_name('condition'))})")
            return found
        sibling = sibling.prev_named_sibling
    return [*found[: MAX_CONDITIONS - 1], MORE] if sibling is not None else found


#: Conditions kept on one guard: a chain of 10,000 ``elif`` would otherwise give each branch all the
#: earlier ones (quadratic). Past it the guard ends with MORE, which no input decides.
MAX_CONDITIONS = 64
MORE = "(more conditions, of an if/elif chain too long to follow)"


def _and(guard: tuple[str, ...], condition: str) -> tuple[str, ...]:
    """*guard* and *condition*, at most MAX_CONDITIONS of them (the last then MORE)."""
    if len(guard) < MAX_CONDITIONS - 1:
        return (*guard, condition)
    return guard if guard[-1] == MORE else (*guard[: MAX_CONDITIONS - 1], MORE)


def _line(node: Any) -> int:
    row: int = node.start_point[0]
    return row + 1


class _Reader:
    """Walks statements (blocks nest shallowly; expressions are handled elsewhere), keeping the guard."""

    def __init__(self, depth: int) -> None:
        #: Levels of nesting allowed, for blocks and for expressions.
        self.depth = depth
        #: Blocks open now.
        self.level = 0
        self.assignments: list[Assignment] = []
        self.returns: list[Return] = []
        self.calls: list[CallSite] = []
        #: Bare returns (the value kept as it was), as :class:`Return` with an empty constant.
        self.leaves: list[Return] = []
        #: ``not (c)`` for each earlier ``if c:`` of the enclosing blocks whose branch always leaves
        #: (return, raise, continue, break): a call after it runs only when c is false.
        self.exits: list[str] = []

    def block(self, node: Any, guard: tuple[str, ...]) -> None:
        if self.level >= self.depth:
            raise NestingError(_line(node))
        self.level += 1
        depth = len(self.exits)
        for statement in node.named_children:
            self.statement(statement, guard)
            if statement.type == "if_statement" and (len(self.exits) < MAX_CONDITIONS or self.exits[-1] != MORE):
                self.exits.extend(_left(statement))
                if len(self.exits) >= MAX_CONDITIONS:
                    self.exits[MAX_CONDITIONS - 1 :] = [MORE]
        del self.exits[depth:]
        self.level -= 1

    def statement(self, node: Any, guard: tuple[str, ...]) -> None:
        kind = node.type
        if kind == "expression_statement":
            for child in node.named_children:
                self.small(child, guard, node)
        elif kind == "return_statement":
            value = next((c for c in node.named_children if c.type != "comment"), None)
            if value is not None:
                self.returns.append(Return(expr(value, self.depth), guard, _line(node)))
                self.collect_calls(value, node, guard)
            else:
                self.leaves.append(Return(Expr("const", "None", "None"), guard, _line(node)))
        elif kind == "if_statement":
            self.if_chain(node, guard)
        elif kind in ("for_statement", "while_statement"):
            self.loop(node, guard)
        elif kind == "with_statement":
            self.with_(node, guard)
        elif kind == "try_statement":
            for child in node.named_children:
                if child.type == "block":
                    self.block(child, guard)
                elif child.type in ("except_clause", "except_group_clause", "else_clause", "finally_clause"):
                    for part in child.named_children:
                        if part.type == "block":
                            self.block(part, guard)
        elif kind == "match_statement":
            body = node.child_by_field_name("body")
            for case in body.named_children if body is not None else ():
                consequence = case.child_by_field_name("consequence")
                if consequence is not None:
                    self.block(consequence, guard)

    def if_chain(self, node: Any, guard: tuple[str, ...]) -> None:
        condition = text(node.child_by_field_name("condition"))
        self.block(node.child_by_field_name("consequence"), _and(guard, condition))
        negated = _and(guard, f"not ({condition})")
        for alternative in node.children_by_field_name("alternative"):
            if alternative.type == "elif_clause":
                inner = text(alternative.child_by_field_name("condition"))
                self.block(alternative.child_by_field_name("consequence"), _and(negated, inner))
                negated = _and(negated, f"not ({inner})")
            else:
                self.block(alternative.child_by_field_name("body"), negated)

    def loop(self, node: Any, guard: tuple[str, ...]) -> None:
        inner = guard
        if node.type == "for_statement":
            header = _header(node)
            self.bind(
                node.child_by_field_name("left"),
                expr(node.child_by_field_name("right"), self.depth),
                "for",
                guard,
                header,
                node,
            )
        else:
            inner = _and(guard, text(node.child_by_field_name("condition")))
        self.block(node.child_by_field_name("body"), inner)
        alternative = node.child_by_field_name("alternative")
        if alternative is not None:
            self.block(alternative.child_by_field_name("body"), guard)

    def with_(self, node: Any, guard: tuple[str, ...]) -> None:
        header = _header(node)
        for clause in node.named_children:
            if clause.type != "with_clause":
                continue
            for item in clause.named_children:
                value = item.child_by_field_name("value")
                if value is not None and value.type == "as_pattern":
                    alias = value.child_by_field_name("alias")
                    source = value.named_children[0]
                    if alias is not None:
                        target = alias.named_children[0] if alias.named_children else alias
                        self.bind(target, expr(source, self.depth), "with", guard, header, node)
        body = node.child_by_field_name("body")
        if body is not None:
            self.block(body, guard)

    def small(self, node: Any, guard: tuple[str, ...], statement: Any) -> None:
        code = _code(statement)
        if node.type == "assignment":
            targets = []
            annotation = node.child_by_field_name("type")
            while node.type == "assignment":
                targets.append(node.child_by_field_name("left"))
                right = node.child_by_field_name("right")
                if right is None:
                    return  # an annotation without a value binds nothing
                node = right
            value = expr(node, self.depth)
            noted = text(annotation) if annotation is not None else ""
            for target in targets:
                self.bind(target, value, "copy", guard, code, statement, noted)
            self.collect_calls(node, statement, guard)
        elif node.type == "augmented_assignment":
            operator = text(node.child_by_field_name("operator"))
            right = node.child_by_field_name("right")
            op = _AUGMENTED.get(operator, operator.rstrip("="))
            left = node.child_by_field_name("left")
            value = Expr(
                "op", text(node), op, args=(expr(left, self.depth), expr(right, self.depth))
            )  # x op= y reads x too
            self.bind(left, value, op, guard, code, statement)
            self.collect_calls(right, statement, guard)
        else:
            self.collect_calls(node, statement, guard)

    def bind(
        self, target: Any, value: Expr, op: str, guard: tuple[str, ...], code: str, at: Any, annotation: str = ""
    ) -> None:
        for path, leaf in _leaves(target):
            self.assignments.append(
                Assignment(
                    _target(leaf, path, self.depth), value, op, guard, code, _line(at), annotation, tuple(self.exits)
                )
            )

    def collect_calls(self, node: Any, statement: Any, guard: tuple[str, ...]) -> None:
        line = _line(statement)
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "call":
                self.calls.append(CallSite(expr(current, self.depth), line, (*guard, *self.exits)))
            if current.type in _NESTED:
                continue
            stack.extend(reversed(current.named_children))


def _left(node: Any) -> list[str]:
    """``not (c)`` for the leading branches of an ``if``/``elif`` chain that always leave the block."""
    found: list[str] = []
    branches = [(node.child_by_field_name("condition"), node.child_by_field_name("consequence"))]
    for alternative in node.children_by_field_name("alternative"):
        if alternative.type != "elif_clause":
            break
        branches.append((alternative.child_by_field_name("condition"), alternative.child_by_field_name("consequence")))
    for condition, body in branches:
        if condition is None or not _always_leaves(body):
            break
        found.append(f"not ({text(condition)})")
    return found


def _always_leaves(block: Any) -> bool:
    """Whether a block ends by leaving: its last statement returns, raises, continues or breaks, or is an
    ``if`` with an ``else`` whose every branch does."""
    statements = [c for c in block.named_children if c.type != "comment"] if block is not None else []
    if not statements:
        return False
    last = statements[-1]
    if last.type in ("return_statement", "raise_statement", "continue_statement", "break_statement"):
        return True
    if last.type != "if_statement":
        return False
    alternatives = last.children_by_field_name("alternative")
    if not alternatives or alternatives[-1].type != "else_clause":
        return False
    bodies = [last.child_by_field_name("consequence")]
    bodies += [a.child_by_field_name("consequence" if a.type == "elif_clause" else "body") for a in alternatives]
    return all(_always_leaves(b) for b in bodies)


def _leaves(target: Any) -> list[tuple[tuple[int, ...], Any]]:
    """(index path, leaf) for every element of a possibly nested unpacking target."""
    found: list[tuple[tuple[int, ...], Any]] = []
    stack: list[tuple[tuple[int, ...], Any]] = [((), target)]
    while stack:
        path, node = stack.pop()
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type in _SEQUENCES:
            elements = [c for c in node.named_children if c.type != "comment"]
            stack.extend(((*path, i), e) for i, e in reversed(list(enumerate(elements))))
        elif node.type in ("list_splat_pattern", "list_splat") and node.named_children:
            stack.append((path, node.named_children[0]))
        else:
            found.append((path, node))
    return found


def _target(leaf: Any, path: tuple[int, ...], depth: int) -> Target:
    line = _line(leaf)
    source = text(leaf)
    if leaf.type == "identifier":
        return Target("name", source, None, path, line, source)
    if leaf.type == "attribute":
        name = text(leaf.child_by_field_name("attribute"))
        return Target("attr", name, expr(leaf.child_by_field_name("object"), depth), path, line, source)
    return Target("other", "", None, path, line, source)


def _code(statement: Any) -> str:
    """The statement on one line, cut at CODE_CHARS characters (see :data:`sgtrace.index.scan.CODE_CHARS`)."""
    size = statement.end_byte - statement.start_byte
    raw: bytes = statement.text if size <= 8 * CODE_CHARS else statement.text[: 8 * CODE_CHARS]
    return shorten(" ".join(raw.decode("utf-8", "replace").split()), size)


def _header(node: Any) -> str:
    """``for x in y:`` / ``with a as b:`` without the body."""
    body = node.child_by_field_name("body")
    raw: bytes = node.text
    cut = body.start_byte - node.start_byte if body is not None else len(raw)
    return " ".join(raw[:cut].decode("utf-8", "replace").split())


class ReadBodies:
    """The bodies one process read, by the text of their functions, for trees read one after another (a
    history's next release moves most functions of a changed file without changing them): a function met again
    with the same text, at the same column, is not read again; its body's lines are moved to where it now is.

    Only bodies read whole are kept (one too deeply nested is read again, so that its tree reports it), and
    only those of the tree being read and of the one before it (see :meth:`begin`).
    """

    def __init__(self) -> None:
        self._read: dict[tuple[int, int, bytes], tuple[Body, int]] = {}
        self._before: dict[tuple[int, int, bytes], tuple[Body, int]] = {}

    def begin(self) -> None:
        """A new tree is read: the bodies that neither it nor the tree before it met are let go."""
        self._before, self._read = self._read, {}

    @staticmethod
    def key(data: bytes, start: int, end: int, depth: int) -> tuple[int, int, bytes]:
        """What a function at bytes *start*..*end* of *data* is known by: the bound it is read with, its column,
        the digest of its text."""
        column = start - data.rfind(b"\n", 0, start) - 1
        return depth, column, hashlib.blake2b(data[start:end], digest_size=16).digest()

    def get(self, key: tuple[int, int, bytes], line: int) -> Body | None:
        """The body of the function so known, as it reads at 1-based *line* (its ``def``'s), or None."""
        found = self._read.get(key)
        if found is None:
            found = self._before.pop(key, None)
            if found is None:
                return None
            self._read[key] = found
        body, was = found
        return moved(body, line - was)

    def put(self, key: tuple[int, int, bytes], line: int, body: Body) -> None:
        if not body.error:
            self._read[key] = (body, line)


def moved(body: Body, delta: int) -> Body:
    """*body* with every line moved by *delta* (an expression's unknown line, 0, stays 0)."""
    if delta == 0:
        return body
    done: dict[int, Expr] = {}  # an expression shared by several records is moved once, and stays shared

    def to(value: Expr) -> Expr:
        found = done.get(id(value))
        if found is None:
            base = to(value.base) if value.base is not None else None
            args = tuple(to(arg) for arg in value.args)
            keywords = tuple((name, to(arg)) for name, arg in value.keywords)
            line = value.line + delta if value.line else 0
            found = done[id(value)] = Expr(value.kind, value.text, value.name, base, args, keywords, line)
        return found

    def target(value: Target) -> Target:
        base = to(value.base) if value.base is not None else None
        return Target(value.kind, value.name, base, value.path, value.line + delta, value.text)

    def returned(value: Return) -> Return:
        return Return(to(value.value), value.guard, value.line + delta)

    return Body(
        tuple(
            Assignment(target(a.target), to(a.value), a.op, a.guard, a.code, a.line + delta, a.annotation, a.exits)
            for a in body.assignments
        ),
        tuple(map(returned, body.returns)),
        tuple(CallSite(to(c.call), c.line + delta, c.guard) for c in body.calls),
        body.error,
        tuple(map(returned, body.leaves)),
    )
