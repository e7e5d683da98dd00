"""The source model: the tree's files parsed on demand (each function's body when first read) and what
evaluation asks of them (definitions, writes, calls, imports, the function and class holding a line)."""

from __future__ import annotations

import ast
import bisect
import functools
import re
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from sgtrace.analyses.evaluate.objects import ClassRef
from sgtrace.analyses.evaluate.syntax import (
    _BLOCK_FIELDS,
    _DEFINED_BEFORE,
    _DEFINITIONS,
    _WRITTEN_BEFORE,
    _block,
    _changes,
    _defined_after,
    _expressions,
    _spelt,
    _statements,
    _targets,
    _text,
    _unloaded,
    _walk_statements,
    _written_after,
    chain_of,
)
from sgtrace.model import SourceFile
from sgtrace.parse import read_bytes

#: Files larger than this are not parsed (generated tables, not code).
MAX_BYTES = 2_000_000


#: Calls followed into the tree's functions, one inside another.
MAX_DEPTH = 8


#: Files that name a word read at most to find its writes or its definition (a word in more is too common to
#: follow: ``device``, ``config``).
MAX_FILES = 60


#: Files parsed at most for one explanation (what lies further is unknown: the evaluator's cost stays bounded).
MAX_PARSED = 450


_NEWLINE = re.compile(rb"\n")


def _body(function: ast.AST) -> list[ast.stmt]:
    """A lazy function's body, parsed now if it is not yet (by the :class:`Code` that read its file)."""
    held = function.__dict__
    if "body" not in held:
        code, path = held["_read_by"]
        reader = code()
        held["body"] = reader.body_of(path, function) if reader is not None else []
    body: list[ast.stmt] = held["body"]
    return body


def _set_body(function: ast.AST, value: list[ast.stmt]) -> None:
    function.__dict__["body"] = value


#: The body of a function of an outline: parsed when first read, kept once parsed or set.
_LAZY_BODY = property(_body, _set_body)


class FunctionDef(ast.FunctionDef):
    """A module's or a class's function whose body is parsed when first read (:meth:`Code.tree` keeps a file's
    outline: its functions' bodies are most of its nodes, and an explanation reads few of them)."""

    body = _LAZY_BODY


class AsyncFunctionDef(ast.AsyncFunctionDef):
    """:class:`FunctionDef`'s ``async`` kind."""

    body = _LAZY_BODY


_LAZY: dict[type, type] = {ast.FunctionDef: FunctionDef, ast.AsyncFunctionDef: AsyncFunctionDef}


class Forgets(Protocol):
    """An evaluator reading a :class:`Code` (told to forget what it worked out when the code forgets)."""

    def forget(self) -> None: ...


class Code:
    """The tree's files, parsed on demand (each once), with what evaluation asks of them."""

    def __init__(self, files: Sequence[SourceFile], naming: Callable[[str], Iterable[str]] | None = None) -> None:
        self.by_path = {f.path: f for f in files}
        self.by_module = {f.module: f for f in files}
        #: word -> modules whose text names it (the identifier index); None: every file is read.
        self._naming = naming
        self._trees: dict[str, ast.Module | None] = {}
        self._parents: dict[str, dict[ast.AST, ast.AST]] = {}
        self._defs: dict[tuple[str, bool], list[tuple[str, ast.AST]]] = {}
        self._definitions: dict[str, dict[str, list[ast.AST]]] = {}
        #: The number of parsed files past which no more are parsed now (see Evaluator.at).
        self.limit = MAX_PARSED
        #: Parses refused for the limit so far (and answers cut short by a cycle: a value read while it was being
        #: worked out), and the questions asked (see Evaluator.at): what was worked out without a file the limit
        #: refused, or inside a cycle, is worked out again for a later question, which may parse it.
        self.refused = 0
        self.questions = 0
        self._named: dict[str, list[str] | None] = {}
        self._anywhere: dict[str, bool] = {}
        self._texts: dict[str, bytes] = {}
        self._lines: dict[str, list[int]] = {}
        self._simple: dict[str, list[ast.stmt]] = {}
        self._firsts: dict[str, list[int]] = {}
        self._worded: dict[tuple[str, str, bool], bool] = {}
        self._imported: dict[ast.AST, list[ast.Import | ast.ImportFrom]] = {}
        self._writes: dict[str, dict[str, list[tuple[ast.ClassDef, ast.stmt]]]] = {}
        self._class_table: dict[str, list[tuple[ast.ClassDef, dict[str, list[ast.stmt]], list[ast.AST]]]] = {}
        self._method_writes: dict[ast.AST, dict[str, list[ast.stmt]]] = {}
        #: (path, pattern) -> where the pattern matches the file's text, and the calls on those lines: a class's
        #: constructions and a function's callers are looked for again by every question that asks (0.5.23 with
        #: a journal: 2,785 searches of 646 pairs, 1.5 s of a cold explain).
        self._starts: dict[tuple[str, re.Pattern[bytes]], list[int]] = {}
        self._calls: dict[tuple[str, re.Pattern[bytes]], list[ast.Call]] = {}
        self._subclassing: dict[tuple[str, str], bool] = {}
        #: Statement -> whether a return or raise is in it; function -> its ``list.append(parameter)`` calls: asked
        #: again each time a body or a module is run (0.5.23: 275,000 nodes walked).
        self._exits: dict[ast.AST, bool] = {}
        self._appends: dict[ast.AST, list[tuple[str, str]]] = {}
        #: Statement -> whether it may change an object a local holds (:func:`_changes`); (path, line) -> the
        #: function and class holding it (asked 14,800 and 4,900 times).
        self._changing: dict[ast.AST, bool] = {}
        self._enclosing: dict[tuple[str, int], tuple[ast.AST | None, ast.ClassDef | None]] = {}
        #: Path -> the number of its functions' bodies parsed so far (what was learnt of its statements before a
        #: body was parsed is learnt again); (path, word) -> whether the bodies that hold the word are parsed.
        self._bodies: dict[str, int] = {}
        self._bodies_for: set[tuple[str, str]] = set()
        self._simple_seen: dict[str, int] = {}
        self._ref = weakref.ref(self)
        #: The evaluators reading these files (told by :meth:`forget` to forget too).
        self.evaluators: weakref.WeakSet[Forgets] = weakref.WeakSet()

    def forget(self) -> None:
        """Drop the files parsed and what was learnt of them (asked again, they are parsed again): the syntax
        trees, millions of objects, are then freed as soon as nothing else holds them, even while an evaluator
        that read them is left in a cycle of references for the collector (a history's lane reads one release
        after another in one process)."""
        for memo in (self._trees, self._parents, self._defs, self._definitions, self._named, self._anywhere,
                     self._texts, self._lines, self._simple, self._firsts, self._worded, self._imported,
                     self._writes, self._starts, self._calls, self._subclassing, self._exits,
                     self._appends, self._changing, self._enclosing, self._bodies, self._bodies_for,
                     self._simple_seen, self._class_table, self._method_writes):  # fmt: skip
            memo.clear()
        for evaluator in list(self.evaluators):
            evaluator.forget()

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            source = self.by_path.get(path)
            tree = None
            if len(self._trees) >= min(MAX_PARSED, self.limit):
                self.refused += 1
                return None  # not remembered: a later question, with an allowance of its own, may parse it
            try:
                data = self.text(path) if source is not None else b""
                if 0 < len(data) <= MAX_BYTES:
                    tree = ast.parse(data)
            except (OSError, SyntaxError, ValueError, RecursionError):
                tree = None
            if tree is not None:
                _outline_only(tree, (self._ref, path))
            self._trees[path] = tree
        return self._trees[path]

    def body_of(self, path: str, function: ast.AST) -> list[ast.stmt]:
        """The body of *function*, a function of the outline of *path* whose body is not parsed yet: its lines
        parsed alone (indented ones under an ``if 1:`` on the line before, so that lines and columns are the
        file's), else the whole file again."""
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        data = self.text(path)
        segment = data[slice(*self._span(path, function))]
        indented = function.col_offset > 0
        source = b"\n" * (function.lineno - 1 - indented) + (b"if 1:\n" if indented else b"") + segment
        parsed: ast.AST | None = None
        try:
            module = ast.parse(source)
            parsed = module.body[0].body[0] if indented and isinstance(module.body[0], ast.If) else module.body[0]
        except (SyntaxError, ValueError, RecursionError, IndexError):
            parsed = None
        if not _same_function(parsed, function):
            try:
                whole = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError):
                whole = None
            found = ast.walk(whole) if whole is not None else ()
            parsed = next((n for n in found if _same_function(n, function)), None)
        body: list[ast.stmt] = parsed.body if isinstance(parsed, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        self._bodies[path] = self._bodies.get(path, 0) + 1
        if path in self._parents:
            _add_parents(self._parents[path], function, body)
        self._definitions.pop(path, None)
        return body

    def _line_starts(self, path: str) -> list[int]:
        """The offsets of the file's lines' starts (line n starts at [n - 1])."""
        if path not in self._lines:
            self._lines[path] = [0, *(m.end() for m in _NEWLINE.finditer(self.text(path)))]
        return self._lines[path]

    def _line_of(self, path: str, offset: int) -> int:
        return bisect.bisect_right(self._line_starts(path), offset)

    def parse_bodies(self, path: str, pattern: re.Pattern[bytes], key: str) -> None:
        """Parse the bodies of the file's outline functions whose lines *pattern* matches (once per *key*)."""
        if (path, key) in self._bodies_for:
            return
        tree = self.tree(path)
        if tree is None:
            return
        self._bodies_for.add((path, key))
        lines = sorted({self._line_of(path, start) for start in self._matches(path, pattern)})
        if lines:
            self.parse_bodies_at(path, lines)

    def parse_bodies_at(self, path: str, lines: Sequence[int]) -> None:
        """Parse the bodies of the file's outline functions that hold any of *lines*."""
        tree = self.tree(path)
        pending: list[ast.AST] = list(tree.body) if tree is not None else []
        while pending:
            node = pending.pop()
            first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
            at = bisect.bisect_left(lines, first)
            if at == len(lines) or lines[at] > last:
                continue
            if _unloaded(node):
                _body(node)
                continue
            for name in _BLOCK_FIELDS:
                block = _block(node, name)
                if isinstance(block, list):
                    pending.extend(block)

    def refused_now(self, path: str) -> bool:
        """Whether the file was not parsed for the limit (a later question may parse it)."""
        return path in self.by_path and path not in self._trees

    def unread(self, path: str, pattern: re.Pattern[bytes]) -> bool:
        """Whether the file's text matches *pattern* but the limit refused to parse it (its calls are not known)."""
        return self.refused_now(path) and bool(self._matches(path, pattern))

    def _matches(self, path: str, pattern: re.Pattern[bytes]) -> list[int]:
        """Where *pattern* matches the file's text (the starts of its matches; remembered)."""
        key = (path, pattern)
        if key not in self._starts:
            self._starts[key] = [m.start() for m in pattern.finditer(self.text(path))]
        return self._starts[key]

    def changes(self, statement: ast.stmt) -> bool:
        """:func:`_changes`, remembered."""
        if statement not in self._changing:
            self._changing[statement] = _changes(statement)
        return self._changing[statement]

    def exits(self, statement: ast.stmt) -> bool:
        """Whether a ``return`` or ``raise`` is anywhere in *statement* (remembered)."""
        if statement not in self._exits:
            self._exits[statement] = any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(statement))
        return self._exits[statement]

    def appends(self, function: ast.FunctionDef) -> list[tuple[str, str]]:
        """(list, parameter) of each ``name.append(parameter)`` call in *function*, in ``ast.walk``'s order
        (remembered)."""
        if function not in self._appends and not self._holds_text(function, b".append("):
            self._appends[function] = []  # its body is not parsed for it
        if function not in self._appends:
            parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            self._appends[function] = [
                (node.func.value.id, node.args[0].id)
                for node in ast.walk(function)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in parameters
            ]
        return self._appends[function]

    def _holds_text(self, function: ast.AST, word: bytes) -> bool:
        """Whether the text of *function*'s lines (a function of an outline, read by this Code) holds *word*;
        True for another function (its body is parsed already)."""
        held = function.__dict__.get("_read_by")
        if held is None or held[0]() is not self:
            return True
        path: str = held[1]
        return bool(self.text(path).find(word, *self._span(path, function)) >= 0)

    def _span(self, path: str, function: ast.AST) -> tuple[int, int]:
        """The byte range of *function*'s lines in the file's text, from its ``def`` line to its last."""
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        starts, size = self._line_starts(path), len(self.text(path))
        first, last = function.lineno, function.end_lineno or function.lineno
        return (starts[first - 1] if first <= len(starts) else size, starts[last] if last < len(starts) else size)

    def subclasses_word(self, path: str, cls: str) -> bool:
        """Whether the file's text defines a class with *cls* among its bases (``class X(..., cls``)."""
        key = (path, cls)
        if key not in self._subclassing:
            word = re.escape(cls.encode())
            subclass = re.compile(rb"^[ \t]*class\s+\w+\s*\([^)]*\b" + word + rb"\b", re.M)
            self._subclassing[key] = subclass.search(self.text(path)) is not None
        return self._subclassing[key]

    def parent(self, path: str, node: ast.AST) -> ast.AST | None:
        """The statement (or handler, or the module) whose block holds statement *node*."""
        if path not in self._parents:
            parents: dict[ast.AST, ast.AST] = {}
            tree = self.tree(path)
            pending: list[ast.AST] = [tree] if tree is not None else []
            while pending:
                up = pending.pop()
                for name in _BLOCK_FIELDS:
                    for child in _block(up, name) or ():
                        if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                            parents[child] = up
                            pending.append(child)
            if self.refused_now(path):
                return parents.get(node)
            self._parents[path] = parents
        return self._parents[path].get(node)

    def naming(self, word: str) -> list[str] | None:
        """Paths of the files whose text names *word*; None when more than MAX_FILES do."""
        if word not in self._named:
            found = self._every_naming(word)
            self._named[word] = found if len(found) <= MAX_FILES else None
        return self._named[word]

    def _every_naming(self, word: str) -> list[str]:
        if self._naming is None:
            return [p for p, f in self.by_path.items() if word.encode() in _bytes(f)]
        return sorted(self.by_module[m].path for m in self._naming(word) if m in self.by_module)

    def defined_anywhere(self, name: str) -> bool:
        """Whether some file of the tree defines a function or class *name* (``def name(``: a property too), by its
        text; remembered."""
        if name not in self._anywhere:
            self._anywhere[name] = any(self.defines_word(p, name) for p in self._every_naming(name))
        return self._anywhere[name]

    def text(self, path: str) -> bytes:
        """The file's bytes (read once; empty past MAX_BYTES)."""
        if path not in self._texts:
            source = self.by_path.get(path)
            data = _bytes(source) if source is not None else b""
            self._texts[path] = data if len(data) <= MAX_BYTES else b""
        return self._texts[path]

    def writes_word(self, path: str, attr: str) -> bool:
        """Whether the file's text may write *attr*: an assignment to it (``.attr =``, ``attr =`` at the start of
        a line), a field with a default or without (``attr: int``), a method or property (``def attr(``)."""
        key = (path, attr, True)
        if key not in self._worded:
            self._worded[key] = _spelt(self.text(path), attr, _written_after(attr), _WRITTEN_BEFORE)
        return self._worded[key]

    def defines_word(self, path: str, name: str) -> bool:
        """Whether the file's text defines *name* (``def name``, ``class name``)."""
        key = (path, name, False)
        if key not in self._worded:
            self._worded[key] = _spelt(self.text(path), name, _defined_after(name), _DEFINED_BEFORE)
        return self._worded[key]

    def calls(self, path: str, pattern: re.Pattern[bytes]) -> list[ast.Call]:
        """The file's calls in the statements on the lines whose text *pattern* matches (remembered once the file
        is parsed)."""
        key = (path, pattern)
        if key not in self._calls:
            starts = self._matches(path, pattern)
            if not starts or self.tree(path) is None:
                return []  # not remembered: a file the limit refused may be parsed by a later question
            self._calls[key] = self._calls_at(path, starts)
        return list(self._calls[key])

    def _calls_at(self, path: str, starts: list[int]) -> list[ast.Call]:
        lines = {self._line_of(path, start) for start in starts}
        self.parse_bodies_at(path, sorted(lines))
        if self._simple_seen.get(path) != self._bodies.get(path, 0) or path not in self._simple:
            tree = self.tree(path)
            simple = [s for s in _statements(tree.body if tree else [], ast.stmt) if not isinstance(s, _DEFINITIONS)]
            self._simple[path] = sorted(simple, key=lambda s: s.lineno)
            self._firsts[path] = [s.lineno for s in self._simple[path]]
            self._simple_seen[path] = self._bodies.get(path, 0)
        found: list[ast.Call] = []
        statements = self._simple[path]
        firsts = self._firsts[path]
        for line in sorted(lines):
            at = bisect.bisect_right(firsts, line)
            for statement in statements[max(0, at - 8) : at]:  # a statement spanning the line starts before it
                if statement.lineno <= line <= (statement.end_lineno or statement.lineno):
                    found += [n for n in _expressions(statement) if isinstance(n, ast.Call) and n.lineno == line]
        return list(dict.fromkeys(found))

    def writes(self, path: str, attr: str) -> list[tuple[ast.ClassDef, ast.stmt]]:
        """(class, statement) of the file's writes of ``self.attr`` and class-body fields *attr* (only the bodies
        of the methods whose text names it are parsed)."""
        key = f"{path}\0{attr}"
        if key not in self._writes:
            self.parse_bodies(path, _word(attr), attr)
            found: list[tuple[ast.ClassDef, ast.stmt]] = []
            for cls, fields, methods in self._classes(path):
                found.extend((cls, item) for item in fields.get(attr, ()))
                for function in methods:
                    if not _unloaded(function):
                        found.extend((cls, node) for node in self._self_writes(function).get(attr, ()))
            if self.refused_now(path):
                return found
            self._writes[key] = {attr: found}
        return self._writes[key][attr]

    def _classes(self, path: str) -> list[tuple[ast.ClassDef, dict[str, list[ast.stmt]], list[ast.AST]]]:
        """The file's classes (not those inside functions): each with its body's fields by name, and its methods
        (remembered once the file is parsed)."""
        if path not in self._class_table:
            tree = self.tree(path)
            if tree is None:
                return []
            table: list[tuple[ast.ClassDef, dict[str, list[ast.stmt]], list[ast.AST]]] = []
            for cls in _statements(tree.body, ast.ClassDef):
                fields: dict[str, list[ast.stmt]] = {}
                for item in cls.body:
                    for name in _declared(item):
                        fields.setdefault(name, []).append(item)
                methods: list[ast.AST] = [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
                table.append((cls, fields, methods))
            self._class_table[path] = table
        return self._class_table[path]

    def _self_writes(self, function: ast.AST) -> dict[str, list[ast.stmt]]:
        """Attribute -> the statements of *function*'s body that write ``self.attribute`` (remembered)."""
        if function not in self._method_writes:
            found: dict[str, list[ast.stmt]] = {}
            body = function.body if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
            for node in _statements(body, (ast.Assign, ast.AnnAssign)):
                for target in _targets(node):
                    for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                        if isinstance(element, ast.Attribute) and chain_of(element) == ["self", element.attr]:
                            found.setdefault(element.attr, []).append(node)
            self._method_writes[function] = found
        return self._method_writes[function]

    def definitions(self, name: str, common: bool = False) -> list[tuple[str, ast.AST]]:
        """Functions and classes named *name* in the tree: (path, node). A name too common to follow (more than
        MAX_FILES files name it: a class every model file imports) has none, unless *common*: then the files
        whose text defines it are looked for among all those naming it."""
        key = (name, common)
        if key not in self._defs:
            refused = self.refused
            found: list[tuple[str, ast.AST]] = []
            paths = self.naming(name)
            if paths is None and common:
                paths = [p for p in self._every_naming(name) if self.defines_word(p, name)][:MAX_FILES]
            for path in (p for p in paths or () if self.defines_word(p, name)):
                self.parse_bodies(path, _definition(name), f"def {name}")
                found.extend((path, node) for node in self._defined(path).get(name, ()))
            if self.refused != refused:
                return found
            self._defs[key] = found
        return self._defs[key]

    def class_named(self, name: str, common: bool = False) -> ClassRef | None:
        """The class of the tree named *name*, when there is one class of that name (see :meth:`definitions`)."""
        found = [(p, d) for p, d in self.definitions(name, common) if isinstance(d, ast.ClassDef)]
        return ClassRef(*found[0]) if len(found) == 1 else None

    def function_in(self, path: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level function *name* of the file *path*."""
        tree = self.tree(path)
        for node in tree.body if tree else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
        return None

    def _defined(self, path: str) -> dict[str, list[ast.AST]]:
        """The file's functions and classes (at any depth) by name."""
        if path not in self._definitions:
            tree = self.tree(path)
            by_name: dict[str, list[ast.AST]] = {}
            for node in _walk_statements(tree) if tree else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    by_name.setdefault(node.name, []).append(node)
            if self.refused_now(path):
                return by_name
            self._definitions[path] = by_name
        return self._definitions[path]

    def enclosing(self, path: str, line: int) -> tuple[ast.AST | None, ast.ClassDef | None]:
        """The innermost function holding *line* in *path*, and its class (remembered once the file is parsed)."""
        key = (path, line)
        if key not in self._enclosing:
            tree = self.tree(path)
            if tree is None:
                return None, None  # not remembered: a file the limit refused may be parsed by a later question
            self._enclosing[key] = self._enclosing_in(path, tree, line)
        return self._enclosing[key]

    def _enclosing_in(self, path: str, tree: ast.Module, line: int) -> tuple[ast.AST | None, ast.ClassDef | None]:
        function: ast.AST | None = None
        cls: ast.ClassDef | None = None
        nodes = list(tree.body) if tree else []
        while nodes:
            node = nodes.pop()
            if not (hasattr(node, "lineno") and node.lineno <= line <= (node.end_lineno or node.lineno)):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function = node
                cls = self._class_of(path, node)
            nodes = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
        return function, cls

    def guards(self, path: str, line: int) -> list[str]:
        """The conditions the statement at *line* runs under in its function, outermost first (an ``else``
        branch's as ``not (test)``)."""
        function, _ = self.enclosing(path, line)
        if function is None:
            return []
        statement = next(
            (
                n
                for n in _walk_statements(function)
                if isinstance(n, ast.stmt) and n is not function and n.lineno == line
            ),
            None,
        )
        found: list[str] = []
        node: ast.AST | None = statement
        while node is not None and node is not function:
            up = self.parent(path, node)
            if isinstance(up, ast.If):
                test = _text(up.test)
                if node in up.body:
                    found.append(test)
                elif node in up.orelse:
                    found.append(f"not ({test})")
            node = up
        return found[::-1]

    def _class_of(self, path: str, node: ast.AST) -> ast.ClassDef | None:
        up = self.parent(path, node)
        return up if isinstance(up, ast.ClassDef) else None

    def module_of(self, path: str) -> str:
        source = self.by_path.get(path)
        return source.module if source is not None else ""

    def imported(self, path: str, name: str, function: ast.AST | None = None) -> tuple[str, str] | None:
        """(path, name) a ``from m import name`` of *path*'s module (or of *function*'s body) brings, when m is in
        the tree."""
        for node in self._imports(path, function):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = self.by_module.get(self._from(path, node))
                        if source is not None:
                            return source.path, alias.name
        return None

    def module_named(self, path: str, name: str, function: ast.AST | None = None) -> str | None:
        """The path of the tree's module that *name* is in *path* (``from pkg import module``, ``import pkg.module
        as name``), if it is one."""
        for node in self._imports(path, function):
            for alias in node.names:
                if (alias.asname or alias.name) != name:
                    continue
                if isinstance(node, ast.ImportFrom):
                    module = f"{self._from(path, node)}.{alias.name}".lstrip(".")
                elif alias.asname is not None or "." not in alias.name:
                    module = alias.name
                else:
                    continue
                source = self.by_module.get(module)
                if source is not None:
                    return source.path
        return None

    def _imports(self, path: str, function: ast.AST | None) -> list[ast.Import | ast.ImportFrom]:
        """The module's top-level imports, then those in *function*'s body."""
        tree = self.tree(path)
        found = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))] if tree else []
        if function is not None:
            if function not in self._imported:
                self._imported[function] = [
                    n for n in _walk_statements(function) if isinstance(n, (ast.Import, ast.ImportFrom))
                ]
            found += self._imported[function]
        return found

    def _from(self, path: str, node: ast.ImportFrom) -> str:
        """The module a ``from ... import`` reads, relative levels resolved against *path*'s package."""
        module = node.module or ""
        if not node.level:
            return module
        package = self.module_of(path).rsplit(".", 1)[0] if self.module_of(path) else ""
        base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        return f"{base}.{module}" if module else base


def _bytes(source: SourceFile) -> bytes:
    try:
        return read_bytes(source.abspath)
    except OSError:
        return b""


# -- helpers ---------------------------------------------------------------------------------------------
def method_of(code: Code, ref: ClassRef, name: str) -> tuple[str, ast.FunctionDef, ast.ClassDef] | None:
    """(path, method, class) of the method *name* an object of *ref* runs: its class's own, else its nearest
    base's in the tree."""
    pending, seen = [(ref.path, ref.node)], 0
    while pending and seen <= MAX_DEPTH:
        path, node = pending.pop(0)
        seen += 1
        method = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if method is not None:
            return path, method, node
        for base in node.bases:
            spelt = chain_of(base)
            found = code.class_named(spelt[-1]) if spelt else None
            if found is not None:
                pending.append((found.path, found.node))
    return None


def _outline_only(tree: ast.Module, read_by: tuple[Any, str]) -> None:
    """Drop the bodies of *tree*'s functions (those outside any function: the module's and its classes'), each
    to be parsed again when first read (:class:`FunctionDef`)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        lazy = _LAZY.get(type(node))
        if lazy is not None:
            node.__dict__.pop("body", None)
            node.__dict__["_read_by"] = read_by
            node.__class__ = lazy
            continue
        for name in _BLOCK_FIELDS:
            block = node.__dict__.get(name)
            if isinstance(block, list):
                pending.extend(block)


def _same_function(parsed: ast.AST | None, function: ast.AST) -> bool:
    return (
        isinstance(parsed, (ast.FunctionDef, ast.AsyncFunctionDef))
        and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (parsed.name, parsed.lineno, parsed.col_offset) == (function.name, function.lineno, function.col_offset)
    )


def _add_parents(parents: dict[ast.AST, ast.AST], function: ast.AST, body: list[ast.stmt]) -> None:
    """Add to *parents* (see :meth:`Code.parent`) the statements of *function*'s newly parsed *body*."""
    pending: list[tuple[ast.AST, list[Any]]] = [(function, body)]
    while pending:
        up, block = pending.pop()
        for child in block:
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                parents[child] = up
                pending.extend((child, b) for name in _BLOCK_FIELDS if isinstance(b := _block(child, name), list))


@functools.lru_cache(maxsize=512)
def _word(word: str) -> re.Pattern[bytes]:
    return re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")


@functools.lru_cache(maxsize=512)
def _definition(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"\b(?:def|class)\s+" + re.escape(name.encode()) + rb"\b")


def _declared(item: ast.stmt) -> list[str]:
    """The names a class-body statement declares: a field with a default, a class attribute, a property."""
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        properties = (["property"], ["cached_property"])
        return [item.name] if any(chain_of(d)[-1:] in properties for d in item.decorator_list) else []
    if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
        return [t.id for t in _targets(item) if isinstance(t, ast.Name)]
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and _annotation_of(item) != "ClassVar":
        return [item.target.id]  # a field without a default: what the constructions pass
    return []


def _annotation_of(item: ast.AnnAssign) -> str:
    annotation = item.annotation.value if isinstance(item.annotation, ast.Subscript) else item.annotation
    return (chain_of(annotation)[-1:] or [""])[0]
