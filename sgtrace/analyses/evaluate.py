"""A partial evaluator of the release's own code, for one run: known facts in, decided values or named unknowns out.

Nothing is run. An expression of the tree is read with the standard library's
``ast`` and evaluated over values that are either :class:`Known` (with where
each came from) or :class:`Unknown` (with the facts that would decide them):
literals, arithmetic, comparisons, ``in`` over literal collections and the
module-level constants they name (spreads and the module's own appends
included), ``and``/``or``/``if-else`` in three values (a known operand that
decides it does, whatever the others), ``any``/``all`` over a known sequence,
``getattr`` with a default, a few pure builtins, and calls into functions of
the tree with the arguments the call gives (their bodies run statement by
statement: assignments, ``if``/``elif``, ``return``; bounded in depth and
remembered). A name takes its value from the run's facts first (``--set``, the
log, the model's config), then from its assignment before the line that reads
it, then from the module's constants; an attribute from the facts, else from
the tree's writes of it (all of them must agree). An environment variable read
through the release's registry (``envs.NAME.get()``) is ``--env``'s value, else
the registry's default.

An undecided value bound to a local is still one value: every read of that
name (and of one attribute of it) in the same run of its function is that
value, so ``x != x`` is decided when ``x`` is not. An object held by a local
is taken to change only by statements that name it (an assignment to one of
its attributes or items, a call it is passed to or called on), not through
another object holding it; and an attribute the tree defines as a function
(a property) is read anew each time.

What SGLang calls what (which attributes hold the model's config, which calls
measure free memory) is the engine's profile (:mod:`sgtrace.analyses.profile`);
this module knows Python only.
"""

from __future__ import annotations

import ast
import bisect
import collections
import dataclasses
import functools
import itertools
import math
import operator
import re
import weakref
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import Any

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
#: Files one question may parse besides those parsed before it (a question about a path the run does not take,
#: whose objects are built at run time, would otherwise use the explanation's whole allowance).
MAX_NEW_PARSED = 160
#: Functions gone up from a call to decide that the run never makes it (every call of each is decided not to run).
MAX_UP = 3
#: Writes of one attribute weighed before it is given up as unknown.
MAX_WRITES = 12
#: How an unknown that the model's config.json decides is named: this prefix, then the key.
CONFIG_KEY = "config.json:"
#: The fields of a statement that hold blocks of statements (what the statement-only walks descend into).
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_NEWLINE = re.compile(rb"\n")
#: Items ``any()`` and the like walk at most.
MAX_ITEMS = 2_000
#: Items a ``for`` statement's body is run for at most.
MAX_LOOP = 256


@dataclass(frozen=True, slots=True)
class Known:
    """A decided value and what decided it (facts and places, e.g. ``architectures (the log)``, ``path:line``)."""

    value: Any
    why: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Unknown:
    """An undecided value and the facts that would decide it. *cycle*: the value is the attribute of that name
    read again while its own value is being worked out (a property that hands the read on, ``return
    self.full_kv_pool.post_capture_active``): among the tree's writes of that attribute it adds no value of its
    own."""

    needs: tuple[str, ...]
    cycle: str = ""
    #: Which value it is, when that is known (:class:`Same`, or (its object's, an attribute, the object's changes so
    #: far)): two with equal *same* are one value, whatever it is.
    same: object = field(default=None, compare=False)


class Same:
    """The identity of one undecided value: what a name was bound to in one run of its function."""

    __slots__ = ("number",)
    _numbers = itertools.count(1)

    def __init__(self) -> None:
        self.number = next(Same._numbers)

    def __repr__(self) -> str:  # in the keys of remembered calls: one value, one key
        return f"<value {self.number}>"


Value = Known | Unknown


@dataclass(frozen=True)
class ModelConfig:
    """A model's ``config.json`` as far as it is known: every key (*complete*), or only some (the log's).

    A config known only in part (the architecture a log names) is read with two stated assumptions, so that
    the checks a release makes for special checkpoints do not leave an ordinary run undecided: a key read
    with a default (``getattr(config, "k", d)``, ``hasattr``) is taken as absent, and ``model_type`` as the
    architecture's name spelt as Hugging Face spells model types (``DeepseekV3ForCausalLM``: ``deepseek_v3``).
    Each value so taken says that it is assumed and how ``--model-config`` reads it instead.
    """

    values: Mapping[str, Any]
    complete: bool
    #: Where it came from.
    origin: str

    def get(self, key: str, default: Any = ..., want: str = "") -> Value:
        if key not in self.values and key in _ALIASES and _ALIASES[key] in self.values:
            key = _ALIASES[key]  # Hugging Face's own alias (a config.json writes torch_dtype; transformers reads dtype)
        if key in self.values:
            value = self.values[key]
            return Known(_config(value, self) if isinstance(value, dict) else value, (f"{key} ({self.origin})",))
        if self.complete and default is not ...:
            return Known(default, (f"no {key} in {self.origin}",))
        if not self.complete:
            if default is not ...:
                return Known(default, (f"{key} assumed absent from the model's config.json ({ASSUMED})",))
            if key == "model_type" and (spelt := model_type_of(self.values.get("architectures"))):
                return Known(spelt, (f"model_type assumed {spelt!r} from the architecture's name ({ASSUMED})",))
        return Unknown((f"{CONFIG_KEY}{want or key}",))

    def has(self, key: str) -> Value:
        """``hasattr(config, key)``: known for a whole config; for one known in part, a key it does not show is
        assumed absent."""
        key = _ALIASES[key] if key not in self.values and _ALIASES.get(key) in self.values else key
        if key in self.values or self.complete:
            return Known(key in self.values, (f"{key} in {self.origin}",))
        return Known(False, (f"{key} assumed absent from the model's config.json ({ASSUMED})",))


def _config(value: dict[str, Any], parent: ModelConfig) -> ModelConfig:
    return ModelConfig(value, parent.complete, parent.origin)


#: Keys Hugging Face's configs answer for each other (transformers reads ``dtype`` where an older config.json wrote
#: ``torch_dtype``, and the other way).
_ALIASES = {"dtype": "torch_dtype", "torch_dtype": "dtype"}
#: How an assumption about a config known only in part says what would decide it instead.
ASSUMED = "only its architecture is known; --model-config reads it"
#: How a configuration class's model type taken from its name says so (the class extends one outside the tree).
CLASS_ASSUMED = "the tree does not declare it"
#: The words of an architecture's name that name its task, not its model (``...ForCausalLM``).
_TASK = re.compile(r"(?:For[A-Z]\w*|Model|LMHeadModel)$")


def model_type_of(architectures: Any) -> str | None:
    """The ``model_type`` Hugging Face's naming gives an architecture (``Qwen3MoeForCausalLM``: ``qwen3_moe``,
    ``KimiK25ForConditionalGeneration``: ``kimi_k25``): its name without the task, each capitalised word or run
    (or run of capitals, ``VL``) with the digits after it split off by ``_``, lower case; None without a name."""
    if not isinstance(architectures, (list, tuple)) or not architectures or not isinstance(architectures[0], str):
        return None
    stem = _TASK.sub("", architectures[0])
    if not stem:
        return None
    words = re.findall(r"[A-Z]{2,}(?![a-z])\d*|[A-Z][a-z]*\d*|\d+|[a-z]+\d*", stem)
    return "_".join(w.lower() for w in words) if words else None


@dataclass(frozen=True, slots=True)
class Dtype:
    """An element type of the engine's tensor library (``torch.bfloat16``): its name and its size in bytes."""

    module: str
    name: str
    size: int

    @property
    def itemsize(self) -> int:
        return self.size

    def __str__(self) -> str:
        return f"{self.module}.{self.name}"


#: How an assumption about the loaded model (which nothing reads before the server runs) says so.
LOADED_ASSUMED = "the loaded model is not read; one pipeline stage holds every layer"


@dataclass(frozen=True)
class ClassRef:
    """A class of the tree, named in an expression (its attributes are read from its body)."""

    path: str
    node: ast.ClassDef = field(compare=False)


@dataclass(frozen=True)
class Instance:
    """An object of a dataclass of the tree built by the code read (``Spec(config_class=C, names=[...])``): the
    fields its construction gave; the others are the class's defaults."""

    ref: ClassRef
    fields: tuple[tuple[str, Value], ...]
    #: An object of an ordinary class (``DefaultPoolConfigurator(kvc)``): its attributes are its class's writes of
    #: them, not fields.
    plain: bool = field(default=False, compare=False)

    def given(self, name: str) -> Value | None:
        return next((value for key, value in self.fields if key == name), None)


@dataclass(frozen=True)
class Member:
    """A member of an enum of the tree: equal to itself, and to its value when the enum mixes in str or int."""

    enum: str
    name: str
    value: Any = field(default=None, compare=False)
    mixed: bool = field(default=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Member):
            return (self.enum, self.name) == (other.enum, other.name)
        return self.mixed and self.value is not None and self.value == other

    def __hash__(self) -> int:
        return hash((self.enum, self.name))


@dataclass(frozen=True)
class Facts:
    """What the run tells: values by name with their origins, the model's config, environment variables."""

    #: Name -> value (``--set``, the log, the launch command...).
    values: Mapping[str, Any] = field(default_factory=dict)
    #: Name -> where its value came from ("the log" when not given).
    origins: Mapping[str, str] = field(default_factory=dict)
    #: The release's defaults for names the run did not give (ServerArgs' fields), with their origin.
    defaults: Mapping[str, Any] = field(default_factory=dict)
    defaults_origin: str = "the release's default"
    #: The model's configuration (from the log's architecture, or a config.json).
    model: ModelConfig | None = None
    #: ``--env NAME=VALUE``.
    env: Mapping[str, str] = field(default_factory=dict)
    #: Names whose given value wins over the code's own assignments (``--set``).
    forced: frozenset[str] = frozenset()

    def named(self, name: str) -> Value | None:
        if name in self.values:
            return Known(self.values[name], (f"{name} ({self.origins.get(name, 'the log')})",))
        if name in self.defaults:
            return Known(self.defaults[name], (f"{name} ({self.defaults_origin})",))
        return None


@dataclass(frozen=True)
class Words:
    """What an engine's code means beyond Python, that the evaluator must be told (see
    :mod:`sgtrace.analyses.profile`)."""

    #: Attribute names that hold the model's configuration (``hf_config``).
    model_config: frozenset[str] = frozenset()
    #: The tensor library's modules (``torch``), its element types by name with their sizes in bytes, and the
    #: functions that give a type's size (``_element_size``).
    tensor_modules: frozenset[str] = frozenset()
    dtypes: Mapping[str, int] = field(default_factory=dict)
    element_size: frozenset[str] = frozenset()
    #: Attributes that hold the loaded model (an object of the run, not of the tree), and the server argument
    #: and value under which what it is asked with a default is that default (one pipeline stage: every layer).
    loaded_model: frozenset[str] = frozenset()
    loaded_when: tuple[str, Any] = ("", None)
    #: Names of the objects that hold the server's arguments (``server_args``): what they hold is the run's.
    arguments: frozenset[str] = frozenset()


#: The engine's knowledge the evaluator asks for: its words, and the calls that stand for what the log shows.
@dataclass(frozen=True)
class Profile:
    words: Words = Words()
    #: Called name -> a value it stands for at the place it is called (a measurement the log shows), or None.
    observe: Callable[[str, str, int], Value | None] = lambda name, path, line: None


class FunctionDef(ast.FunctionDef):
    """A module's or a class's function whose body is parsed when first read (:meth:`Code.tree` keeps a file's
    outline: its functions' bodies are most of its nodes, and an explanation reads few of them)."""

    @property
    def body(self) -> list[ast.stmt]:
        return _body(self)

    @body.setter
    def body(self, value: list[ast.stmt]) -> None:
        self.__dict__["body"] = value


class AsyncFunctionDef(ast.AsyncFunctionDef):
    """:class:`FunctionDef`'s ``async`` kind."""

    @property
    def body(self) -> list[ast.stmt]:
        return _body(self)

    @body.setter
    def body(self, value: list[ast.stmt]) -> None:
        self.__dict__["body"] = value


_LAZY: dict[type, type] = {ast.FunctionDef: FunctionDef, ast.AsyncFunctionDef: AsyncFunctionDef}


def _body(function: ast.AST) -> list[ast.stmt]:
    """A lazy function's body, parsed now if it is not yet (by the :class:`Code` that read its file)."""
    held = function.__dict__
    if "body" not in held:
        code, path = held["_read_by"]
        reader = code()
        held["body"] = reader.body_of(path, function) if reader is not None else []
    body: list[ast.stmt] = held["body"]
    return body


def _unloaded(node: ast.AST) -> bool:
    """Whether *node* is a function whose body is not parsed yet."""
    return "_read_by" in node.__dict__ and "body" not in node.__dict__


def _block(node: ast.AST, name: str) -> Any:
    """The block field *name* of *node* as it is now: a function's body not parsed yet is empty (not parsed)."""
    return node.__dict__.get(name)


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
        self.evaluators: weakref.WeakSet[Evaluator] = weakref.WeakSet()

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
        starts = self._line_starts(path)
        first, last = function.lineno, function.end_lineno or function.lineno
        begin = starts[first - 1] if first <= len(starts) else len(data)
        segment = data[begin : starts[last] if last < len(starts) else len(data)]
        indented = function.col_offset > 0
        source = b"\n" * (first - 1 - indented) + (b"if 1:\n" if indented else b"") + segment
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
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        starts = self._line_starts(path)
        first, last = function.lineno - 1, function.end_lineno or function.lineno
        end = starts[last] if last < len(starts) else len(self.text(path))
        return bool(self.text(path).find(word, starts[min(first, len(starts) - 1)], end) >= 0)

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


class _Lazy:
    """A value worked out when first read (an assignment's, as the names stood when it ran)."""

    __slots__ = ("_compute", "_value", "_code", "_again")

    def __init__(self, compute: Callable[[], Value], code: Code | None = None) -> None:
        self._compute: Callable[[], Value] | None = compute
        self._value: Value = Unknown(("a value being worked out",))
        self._code = code
        #: (the question, the computation) of an Unknown worked out without a file the limit refused: worked out
        #: again when a later question reads it.
        self._again: tuple[int, Callable[[], Value]] | None = None

    def force(self) -> Value:
        code = self._code
        if self._again is not None and code is not None and self._again[0] < code.questions:
            self._compute, self._again = self._again[1], None
        if self._compute is not None:
            compute, self._compute = self._compute, None
            refused = code.refused if code is not None else 0
            self._value = compute()
            if code is not None and isinstance(self._value, Unknown) and code.refused != refused:
                self._again = (code.questions, compute)
        return self._value


def _force(value: Value | _Lazy) -> Value:
    return value.force() if isinstance(value, _Lazy) else value


def _needs(values: Iterable[Value]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for v in values if isinstance(v, Unknown) for n in v.needs)) or ("a branch",)


def _choose(test: _Lazy, values: Sequence[Value | _Lazy]) -> Value:
    """The value of the branch *test* takes, once it is read; both merged when the test is undecided."""
    decided = test.force()
    if isinstance(decided, Known):
        return _why(_force(values[0 if decided.value else 1]), decided.why)
    return _merge(values, decided)


def _merge(lazy: Sequence[Value | _Lazy], test: Value) -> Value:
    values = [_force(v) for v in lazy]
    first = values[0]
    return first if all(_same(first, v) for v in values) else Unknown(_needs([test, *values]))


def _item(value: Value | _Lazy, index: int) -> Value:
    return _apply(operator.getitem, _force(value), Known(index))


def _holds(body: Sequence[ast.stmt], line: int) -> bool:
    return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in body)


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


@dataclass
class _Scope:
    path: str
    function: ast.AST | None
    cls: ast.ClassDef | None
    line: int
    #: While a body runs: its names' values so far; None when names are read as they stand at *line*.
    env: dict[str, Value | _Lazy] | None = None
    depth: int = 0
    #: Values an earlier ``return`` under an undecided condition may have given.
    returned: list[Value] = field(default_factory=list)
    #: What decided the conditions taken so far (facts and places).
    decided: list[str] = field(default_factory=list)


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
}  # fmt: skip
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_PURE: dict[str, Callable[..., Any]] = {
    "int": int, "float": float, "bool": bool, "str": str, "min": min, "max": max, "abs": abs, "round": round,
    "len": len, "sum": sum, "sorted": sorted, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset,
    "any": any, "all": all, "ceil": math.ceil, "floor": math.floor,
}  # fmt: skip
_MODULES = {"math"}
#: The names a method's receiver goes by (a call on them is a method of the enclosing class, see ``_callee``).
_SELF = frozenset({"self", "cls"})
#: Methods of a decided built-in value that only read it (``class_name.startswith("Llava")``), by its type.
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({
        "startswith", "endswith", "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit",
        "replace", "count", "find", "isdigit", "isalpha", "isalnum", "removeprefix", "removesuffix",
    }),
    dict: frozenset({"get", "keys", "values", "items"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}  # fmt: skip
#: The built-in types ``isinstance`` is decided against, by the name the code gives them.
_BUILTIN_TYPES: dict[str, type] = {
    "str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list, "tuple": tuple,
    "set": set, "bytes": bytes,
}  # fmt: skip
#: Values the evaluator builds no further than this (a string or list made huge by a loop).
_MAX_SIZE = 100_000


class Evaluator:
    """Evaluates expressions of the tree for one run (see the module doc); remembers what it worked out."""

    def __init__(self, code: Code, facts: Facts, profile: Profile | None = None) -> None:
        self.code = code
        self.profile = profile or Profile()
        if facts.model is not None and self.profile.words.dtypes:
            values = _typed(facts.model.values, self.profile.words)
            facts = dataclasses.replace(facts, model=dataclasses.replace(facts.model, values=values))
        self.facts = facts
        self._attributes: dict[tuple[str, str], Value] = {}
        self._module_env: dict[str, dict[str, Value | _Lazy]] = {}
        self._calls: dict[tuple[int, str], Value] = {}
        self._locals: dict[tuple[int, int], dict[str, Value | _Lazy]] = {}
        self._busy: set[object] = set()
        self._owned_writes: dict[tuple[str, str, str], tuple[list[tuple[str, ast.ClassDef, ast.stmt]], bool]] = {}
        self._callers: dict[tuple[str, int, str], list[Value] | None] = {}
        #: Memo entries worked out without a file the limit refused: (memo, key) -> the question; a later
        #: question works them out again.
        self._stale: dict[tuple[int, object], int] = {}
        code.evaluators.add(self)

    def forget(self) -> None:
        """Drop what was worked out (the values still to work out hold this evaluator, in a cycle, and the
        syntax they were to read): asked again, it is worked out again."""
        for memo in (self._attributes, self._module_env, self._calls, self._locals, self._busy, self._owned_writes,
                     self._callers, self._stale):  # fmt: skip
            memo.clear()

    def _kept(self, memo: dict[Any, Any], key: object) -> bool:
        """Whether *memo* holds a value for *key* this question may use."""
        if key not in memo:
            return False
        asked = self._stale.get((id(memo), key))
        if asked is not None and asked < self.code.questions:
            del memo[key], self._stale[(id(memo), key)]
            return False
        return True

    def _cut_short(self, value: Unknown) -> Unknown:
        """*value*, for a value read while it is being worked out: what is worked out from it is undecided for
        this question only (a later one works it out again, from outside the cycle)."""
        self.code.refused += 1
        return value

    def _keep(self, memo: dict[Any, Any], key: object, value: Any, refused: int, undecided: bool) -> None:
        """*value* into *memo*; an undecided one worked out while the limit refused a file, as stale."""
        memo[key] = value
        if undecided and self.code.refused != refused:
            self._stale[(id(memo), key)] = self.code.questions

    # -- the questions -------------------------------------------------------------------------------
    def at(self, source: str, path: str, line: int) -> Value:
        """*source* (an expression) evaluated as it reads at *path*:*line*."""
        node = _expression(source)
        if isinstance(node, Unknown):
            return node
        before = self.code.limit
        self.code.limit = min(before, len(self.code._trees) + MAX_NEW_PARSED)
        self.code.questions += 1
        try:
            return self.node_at(node, path, line)
        finally:
            self.code.limit = before

    def node_at(self, node: ast.expr, path: str, line: int) -> Value:
        function, cls = self.code.enclosing(path, line)
        return self.expr(node, _Scope(path, function, cls, line))

    def name_at(self, name: str, path: str, line: int) -> Value:
        """What the local (or module name) *name* holds when *path*:*line* runs."""
        return self.node_at(ast.Name(id=name, ctx=ast.Load()), path, line)

    # -- expressions ---------------------------------------------------------------------------------
    def expr(self, node: ast.expr, scope: _Scope) -> Value:
        """*node*'s value. An operation on the program's values that fails as it would when the program runs
        (``_Raises``), or code nested past Python's recursion limit, is unknown; any other exception is the
        evaluator's own error and goes up (an internal error for the user, a failure under the tests)."""
        try:
            return self._expr(node, scope)
        except (_Raises, RecursionError):
            return Unknown((_text(node),))

    def _expr(self, node: ast.expr, scope: _Scope) -> Value:
        if isinstance(node, ast.Constant):
            return Known(node.value)
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, scope)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _apply(_BINARY[type(node.op)], self.expr(node.left, scope), self.expr(node.right, scope))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, scope)
            if isinstance(operand, Unknown):
                return operand
            unary: dict[type, Callable[[Any], Any]] = {
                ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.inv
            }  # fmt: skip
            return Known(_as_run(unary[type(node.op)], operand.value), operand.why)
        if isinstance(node, ast.BoolOp):
            return self._bool(node, scope)
        if isinstance(node, ast.Compare):
            return self._compare(node, scope)
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test, scope)
            if isinstance(test, Unknown):
                body, orelse = self.expr(node.body, scope), self.expr(node.orelse, scope)
                return body if _same(body, orelse) else test
            return _why(self.expr(node.body if test.value else node.orelse, scope), test.why)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._collection(node, scope)
        if isinstance(node, ast.Dict):
            return self._dict(node, scope)
        if isinstance(node, ast.Subscript):
            if chain_of(node.value)[-2:] == ["os", "environ"]:  # os.environ["NAME"]: unset, a KeyError
                return self._environ(self.expr(node.slice, scope), None, node)
            value, index = self.expr(node.value, scope), self.expr(node.slice, scope)
            if isinstance(value, Known) and isinstance(value.value, ClassRef) and isinstance(index, Known):
                if not isinstance(index.value, str):
                    return Unknown((_text(node),))
                member = self._class_attribute(value.value, index.value)  # an enum's member by its name
                return (
                    member
                    if isinstance(member, Unknown) or isinstance(member.value, Member)
                    else Unknown((_text(node),))
                )
            return _apply(lambda v, i: v[i], value, index)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value, scope)
            if scope.env is not None:
                scope.env[node.target.id] = value
            return value
        return Unknown((_text(node),))

    def _bool(self, node: ast.BoolOp, scope: _Scope) -> Value:
        """``and``/``or`` in three values: a known operand that decides it does, even after an unknown one."""
        deciding = isinstance(node.op, ast.Or)
        needs: list[str] = []
        why: list[str] = []
        last: Value = Known(not deciding)
        for operand in node.values:
            value = self.expr(operand, scope)
            if isinstance(value, Unknown):
                needs += value.needs
                last = value
                continue
            if bool(value.value) is deciding:
                return Known(value.value, value.why)
            why += value.why
            last = value
        if needs:
            return Unknown(tuple(dict.fromkeys(needs)))
        return Known(last.value if isinstance(last, Known) else not deciding, tuple(dict.fromkeys(why)))

    def _compare(self, node: ast.Compare, scope: _Scope) -> Value:
        left = self.expr(node.left, scope)
        result: Value = Known(True)
        left_node = node.left
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.expr(right_node, scope)
            step = _apply(_COMPARE[type(op)], left, right)
            if isinstance(left, Unknown) and isinstance(right, Unknown) and _one(left, right) and type(op) in _IDENTITY:
                step = Known(
                    _IDENTITY[type(op)],
                    (f"{_text(left_node)} holding {_text(right_node)} unchanged, whatever its value",),
                )
            left_node = right_node
            if isinstance(step, Known) and not step.value:
                return step
            result = _and(result, step)
            left = right
        return result

    def _collection(self, node: ast.List | ast.Tuple | ast.Set, scope: _Scope) -> Value:
        items: list[Any] = []
        why: list[str] = []
        for element in node.elts:
            spread = isinstance(element, ast.Starred)
            value = self.expr(element.value if isinstance(element, ast.Starred) else element, scope)
            if isinstance(value, Unknown):
                return Unknown(value.needs)  # not the value read again: a collection holding it
            items.extend(_as_run(list, value.value)) if spread else items.append(value.value)
            why += value.why
        made: Any = items if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else None
        made = _as_run(set, items) if made is None else made
        return Known(made, tuple(dict.fromkeys(why)))

    def _dict(self, node: ast.Dict, scope: _Scope) -> Value:
        made: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.expr(value_node, scope)
            if isinstance(value, Unknown):
                return Unknown(value.needs)
            if key_node is None:
                _as_run(made.update, value.value)
                continue
            key = self.expr(key_node, scope)
            if isinstance(key, Unknown):
                return key
            _as_run(made.__setitem__, key.value, value.value)
        return Known(made)

    # -- names and attributes ------------------------------------------------------------------------
    def _name(self, name: str, scope: _Scope) -> Value:
        if name in ("True", "False", "None"):
            return Known({"True": True, "False": False, "None": None}[name])
        if name in self.facts.forced:
            return self.facts.named(name) or Unknown((name,))
        if scope.env is not None and name in scope.env:
            return _force(scope.env[name])
        if scope.env is None and scope.function is not None:
            env = self._locals_at(scope)
            if name in env:
                return _force(env[name])
        given = self.facts.named(name)
        if given is not None:
            return given
        return self._global(name, scope.path, scope.depth, scope.function)

    def _locals_at(self, scope: _Scope) -> dict[str, Value | _Lazy]:
        """The function's names as they stand when *scope*'s line runs: its body run up to that line, its
        parameters from the facts (remembered per function and line)."""
        assert scope.function is not None
        key = (id(scope.function), scope.line)
        if self._kept(self._locals, key):
            return self._locals[key]
        if key in self._busy:
            return {}
        self._busy.add(key)
        refused = self.code.refused
        try:
            env: dict[str, Value | _Lazy] = {
                name: self.facts.named(name) or self._passed_in(scope, name) for name in _parameters(scope.function)
            }
            inner = _Scope(scope.path, scope.function, scope.cls, scope.line, env, scope.depth + 1)
            try:
                self._run(scope.function.body, inner, until=scope.line)  # type: ignore[attr-defined]
            except _Return:
                pass
        finally:
            self._busy.discard(key)
        self._keep(self._locals, key, inner.env or {}, refused, True)
        return self._locals[key]

    def _passed_in(self, scope: _Scope, name: str) -> Value | _Lazy:
        """A parameter no fact names: for an optional one, what the calls the run may make pass (when read)."""
        function = scope.function
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or name in ("self", "cls"):
            return Unknown((name,))
        found = _default_of(function, name)
        if found is None or found[0] is None:
            return Unknown((name,))
        return _Lazy(lambda: self._parameter(scope.path, function, scope.cls, name, scope.depth), self.code)

    def _global(self, name: str, path: str, depth: int, function: ast.AST | None = None) -> Value:
        """A module-level name: the module's own constants, else what it (or *function*'s body) imports from the
        tree."""
        env = self._module(path)
        if name in env:
            return _force(env[name])
        imported = self.code.imported(path, name, function)
        if imported is not None and depth < MAX_DEPTH * 4:
            there, original = imported
            return self._global(original, there, depth + 1)
        tree = self.code.tree(path)
        for node in tree.body if tree else ():
            if isinstance(node, ast.ClassDef) and node.name == name:
                return Known(ClassRef(path, node), (f"{path}:{node.lineno}",))
        return Unknown((name,))

    def _module(self, path: str) -> dict[str, Value | _Lazy]:
        """The module's top level run for its constants: assignments, ``if``, and appends to its lists."""
        if self._kept(self._module_env, path):
            return self._module_env[path]
        env: dict[str, Value | _Lazy] = {}
        self._module_env[path] = env
        tree = self.code.tree(path)
        if tree is None and self.code.refused_now(path):
            self._stale[(id(self._module_env), path)] = self.code.questions
        if tree is not None:
            scope = _Scope(path, None, None, 0, env, 0)
            try:
                self._run([s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))], scope, top=True)
            except _Return:
                pass
            self._registered(path, tree, env)
        return env

    def _registered(self, path: str, tree: ast.Module, env: dict[str, Value | _Lazy]) -> None:
        """A registry: a module's list that a function of the module appends its parameter to
        (``def register(spec): _REGISTRY.append(spec)``) holds, after its own items, what every call of that
        function at the top level of a module of the tree passes (in the order of their paths)."""
        for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            for name, parameter in self.code.appends(function):
                before = _force(env[name]) if name in env else None
                if not (isinstance(before, Known) and isinstance(before.value, list)):
                    continue
                passed = self._registrations(function.name, parameters.index(parameter), parameter)
                if isinstance(passed, Unknown):
                    env[name] = passed
                else:
                    env[name] = Known([*before.value, *passed.value], (*before.why, *passed.why))

    def _registrations(self, function: str, index: int, parameter: str) -> Value:
        """What the calls of *function* at the top level of the tree's modules pass for its parameter."""
        paths = self.code.naming(function)
        if paths is None:
            return Unknown((f"the calls of {function}()",))
        items: list[Any] = []
        why: list[str] = []
        for there in sorted(paths):
            module = self.code.tree(there)
            for statement in module.body if module else ():
                call = statement.value if isinstance(statement, ast.Expr) else None
                if not (isinstance(call, ast.Call) and chain_of(call.func)[-1:] == [function]):
                    continue
                keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
                argument = call.args[index] if len(call.args) > index else keyword
                if argument is None:
                    continue
                value = self.node_at(argument, there, statement.lineno)
                if isinstance(value, Unknown):
                    return value
                items.append(value.value)
                why.append(f"{there}:{statement.lineno}")
        return Known(items, tuple(why))

    def _attribute(self, node: ast.Attribute, scope: _Scope) -> Value:
        """``x.name``: from a known object, the facts, the model's config, else the tree's writes of it. Undecided,
        on a local that holds one value, it is that value's attribute: the same at every read until a statement
        may change the object (see the module doc), unless the tree defines a function of that name."""
        value = self._read_attribute(node, scope)
        if isinstance(value, Known) or value.same is not None or not isinstance(node.value, ast.Name):
            return value
        if node.value.id in _SELF or scope.function is None:
            return value
        receiver = self.expr(node.value, scope)
        if not isinstance(receiver, Unknown) or receiver.same is None or self.code.defined_anywhere(node.attr):
            return value
        env = scope.env if scope.env is not None else self._locals_at(scope)
        changed = _force(env.get(_CHANGES, Known(0)))
        if isinstance(changed, Unknown):  # branches that changed it differently: a value of its own
            return dataclasses.replace(value, same=Same())
        return dataclasses.replace(value, same=(receiver.same, node.attr, changed.value))

    def _read_attribute(self, node: ast.Attribute, scope: _Scope) -> Value:
        chain = chain_of(node)
        if chain and chain[-1] in self.profile.words.model_config:
            # no model known: what the operator can give is its config (a log's weights line names its architecture)
            return Known(self.facts.model) if self.facts.model is not None else Unknown((f"{CONFIG_KEY}architectures",))
        if len(chain) == 2 and chain[0] in self.profile.words.tensor_modules and chain[1] in self.profile.words.dtypes:
            return Known(Dtype(chain[0], chain[1], self.profile.words.dtypes[chain[1]]), (f"{chain[0]}.{chain[1]}",))
        given = self.facts.named(node.attr)
        if isinstance(node.value, ast.Name) and node.value.id == "self" and scope.env is not None:
            if f"self.{node.attr}" in scope.env and node.attr not in self.facts.forced:
                return _force(scope.env[f"self.{node.attr}"])
        bound = isinstance(node.value, ast.Name) and _bound_receiver(scope.env, node.value.id)
        if bound or not (isinstance(node.value, ast.Name) and node.value.id in _SELF):
            receiver = self.expr(node.value, scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ClassRef):
                return self._class_attribute(receiver.value, node.attr)
            if isinstance(receiver, Known) and isinstance(receiver.value, Instance):
                found = self._field(receiver, node.attr)
                if isinstance(found, Known) or not receiver.value.plain:
                    return found  # an ordinary object that does not decide it: read as if it were not known
            elif isinstance(receiver, Known):
                return _member(receiver, node.attr)
        # --set overrides what the code computes, except a server argument's value: a class that computes its own
        # attribute of that name computes it from the argument
        overrides = node.attr in self.facts.forced and node.attr not in self.facts.defaults
        if given is not None and (overrides or not self._computes(node.attr, chain, scope)):
            return given
        return self._written(node.attr, chain, scope)

    def _flows(
        self, writes: list[tuple[str, ast.ClassDef, ast.stmt]], attr: str, scope: _Scope, values: list[Value]
    ) -> list[tuple[str, ast.ClassDef, ast.stmt]]:
        """Several writes of *attr* in one method are one value: what the method's flow leaves it (an
        ``if``/``elif`` chain picks one); that value goes to *values*, the other writes are returned."""
        by_function: dict[int, list[tuple[str, ast.ClassDef, ast.stmt]]] = {}
        for write in writes:
            function, _ = self.code.enclosing(write[0], write[2].lineno)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and write[2] not in write[1].body:
                by_function.setdefault(id(function), []).append(write)
        rest = list(writes)
        for group in by_function.values():
            if len(group) < 2:
                continue
            path, cls, first = group[0]
            function, _ = self.code.enclosing(path, first.lineno)
            assert function is not None
            end = (getattr(function, "end_lineno", None) or first.lineno) + 1
            env = self._locals_at(_Scope(path, function, cls, end, None, scope.depth + 1))
            found = _force(env.get(f"self.{attr}", Unknown((attr,))))
            values.append(_why(found, (f"{path}:{first.lineno}",)))
            rest = [w for w in rest if w not in group]
        return rest

    def _field(self, receiver: Known, name: str) -> Value:
        """A field of an object of a dataclass of the tree: what its construction gave, else the class's default
        (``field(default=...)``, ``field(default_factory=list)``, a literal)."""
        instance = receiver.value
        assert isinstance(instance, Instance)
        if instance.plain:  # an ordinary class's attribute: its writes of it
            at = _Scope(instance.ref.path, None, instance.ref.node, instance.ref.node.lineno)
            return _why(self._written(name, ["self", name], at), receiver.why)
        given = instance.given(name)
        if given is not None:
            return _why(given, receiver.why)
        for item in instance.ref.node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            if item.target.id != name or item.value is None:
                continue
            value = item.value
            if isinstance(value, ast.Call) and chain_of(value.func)[-1:] == ["field"]:
                keywords = {k.arg: k.value for k in value.keywords}
                factory = chain_of(keywords["default_factory"]) if "default_factory" in keywords else []
                if factory in (["list"], ["dict"], ["set"], ["tuple"]):
                    return Known(_BUILTIN_TYPES[factory[0]](), receiver.why)
                if "default" not in keywords:
                    return Unknown((f"{instance.ref.node.name}.{name}",))
                value = keywords["default"]
            return _why(self.node_at(value, instance.ref.path, item.lineno), receiver.why)
        return Unknown((f"{instance.ref.node.name}.{name}",))

    def _class_attribute(self, ref: ClassRef, name: str) -> Value:
        """A class attribute of the tree: an enum's member (a literal's value or ``auto()``), or a literal."""
        enum = any((chain_of(b)[-1:] or [""])[0].endswith(("Enum", "Flag")) for b in ref.node.bases)
        for item in ref.node.body:
            if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
                if not any(isinstance(t, ast.Name) and t.id == name for t in _targets(item)):
                    continue
                where = (f"{ref.path}:{item.lineno}",)
                literal = self.node_at(item.value, ref.path, item.lineno)
                if enum:
                    value = literal.value if isinstance(literal, Known) else None
                    mixed = any(
                        chain_of(b)[-1:] in (["str"], ["int"], ["StrEnum"], ["IntEnum"]) for b in ref.node.bases
                    )
                    return Known(Member(ref.node.name, name, value, mixed), where)
                return _why(literal, where)
        return Unknown((f"{ref.node.name}.{name}",))

    def _written(self, attr: str, chain: Sequence[str], scope: _Scope) -> Value:
        """The value the tree's writes of attribute *attr* agree on (preferring the reading class's own)."""
        owner = chain[-2] if len(chain) >= 2 else ""
        key = (owner if owner != "self" else f"self:{scope.cls.name if scope.cls else ''}", attr)
        if self._kept(self._attributes, key):
            return self._attributes[key]
        if key in self._busy:
            return self._cut_short(Unknown((attr,), cycle=attr))
        self._busy.add(key)
        refused = self.code.refused
        try:
            found = self._writes(attr, owner, scope)
        finally:
            self._busy.discard(key)
        self._keep(self._attributes, key, found, refused, isinstance(found, Unknown))
        return found

    def _owned(
        self, attr: str, owner: str, scope: _Scope, own_only: bool = False
    ) -> tuple[list[tuple[str, ast.ClassDef, ast.stmt]], bool]:
        """The tree's writes of *attr* that the read means (the reading class's own, its family's, or the class
        *owner* names; else all of them), and whether they are its owner's (not all of them); ([], False) for a
        word too common to follow. *own_only*: the owner's alone, reading only the files that name its class or
        family (cheap: asked of every attribute a fact names)."""
        who = owner if owner != "self" else f"self:{scope.cls.name if scope.cls else ''}"
        key = ("owned" if not own_only else "own", who, attr)
        if self._kept(self._owned_writes, key):
            return self._owned_writes[key]
        refused = self.code.refused
        paths = self.code.naming(attr)
        if paths is None and owner == "self" and scope.cls is not None:
            paths = [scope.path]  # a word too common to follow: the reading class's own writes, in its file
        elif paths is None and owner:  # ... or those of the class the owner's name spells (model_config: ModelConfig)
            classes = _owner_classes(owner, scope)
            paths = [
                p for name in classes for p, node in self.code.definitions(name, True) if isinstance(node, ast.ClassDef)
            ]
            paths = paths or None
        writes: list[tuple[str, ast.ClassDef, ast.stmt]] = []
        if paths is not None:
            # only the files whose text writes it are parsed (an assignment to it, a field with a default or
            # without, a property)
            paths = [path for path in paths if self.code.writes_word(path, attr)]
            # the files that may hold the owner's class first; the others only when those hold none of its writes
            words = [name.encode() for name in _owner_classes(owner, scope)]
            first = [path for path in paths if any(word in self.code.text(path) for word in words)]
            writes = [(path, cls, item) for path in first for cls, item in self.code.writes(path, attr)]
            read = first
            if not own_only and not self._mine(writes, owner, scope):
                read = paths
                writes += [
                    (path, cls, item)
                    for path in paths
                    if path not in first
                    for cls, item in self.code.writes(path, attr)
                ]
            if not own_only and any(self.code.refused_now(path) for path in read):
                writes = []  # the limit refused a file that writes it: whether the writes agree is not known
        mine = self._mine(writes, owner, scope)
        self._keep(self._owned_writes, key, (mine if own_only else mine or writes, bool(mine)), refused, True)
        return self._owned_writes[key]

    @staticmethod
    def _mine(
        writes: list[tuple[str, ast.ClassDef, ast.stmt]], owner: str, scope: _Scope
    ) -> list[tuple[str, ast.ClassDef, ast.stmt]]:
        """The writes of the owner's class: the reading class's own, else its family's (``self``); the class the
        owner's name spells or its annotation names."""
        if owner == "self" and scope.cls is not None:
            own = [w for w in writes if w[1].name == scope.cls.name]
            family = set(_owner_classes(owner, scope))
            related = [
                w
                for w in writes
                if w[1].name in family or family & {chain_of(b)[-1] for b in w[1].bases if chain_of(b)}
            ]
            return own or related
        named = {name.lower() for name in _owner_classes(owner, scope)}
        return [w for w in writes if w[1].name.lower() in named]

    def _computes(self, attr: str, chain: Sequence[str], scope: _Scope) -> bool:
        """Whether the object an attribute is read on computes it itself (one of its class's writes is no copy of
        a parameter or of a server argument of that name): then the run's argument of that name is not its value
        (a runner's ``kv_cache_dtype`` is a tensor type, the server's argument a word)."""
        owner = chain[-2] if len(chain) >= 2 else ""
        if not owner or owner in self.profile.words.arguments:
            return False
        writes, mine = self._owned(attr, owner, scope, own_only=True)
        if not mine:
            return False
        for _, _, item in writes:
            if not isinstance(item, (ast.Assign, ast.AnnAssign)) or item.value is None:
                return True  # a property
            value = item.value
            copied = chain_of(value)
            if copied[-1:] == [attr] and (len(copied) == 1 or copied[-2] in self.profile.words.arguments):
                continue
            if isinstance(value, ast.Call) and chain_of(value.func)[-1:] == ["field"]:
                continue
            return True
        return False

    def _writes(self, attr: str, owner: str, scope: _Scope) -> Value:
        writes, _ = self._owned(attr, owner, scope)
        if not writes or len(writes) > MAX_WRITES:
            return Unknown((attr,))
        values: list[Value] = []
        writes = self._flows(writes, attr, scope, values)
        for path, cls, item in writes:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a property
                value = self._body(item, path, cls, {}, scope.depth + 1)
            elif not isinstance(item, (ast.Assign, ast.AnnAssign)):
                continue
            elif item.value is None:  # a field without a default: what its constructions pass
                values.extend(self._constructed(cls.name, attr))
                continue
            elif isinstance(item.value, ast.Call) and chain_of(item.value.func)[-1:] == ["field"]:  # a dataclass field
                default = next((k.value for k in item.value.keywords if k.arg == "default"), None)
                if default is None:
                    continue  # set elsewhere (__post_init__) or by a factory: its other writes say
                value = self.node_at(default, path, item.lineno)
            elif (parameter := _parameter_of(item, self.code.enclosing(path, item.lineno)[0])) is not None:
                # self.x = x in __init__: what the constructions pass for x, else its default
                function, name, default = parameter
                value = self.node_at(default, path, item.lineno) if default is not None else Unknown((name,))
                values.extend(self._constructed(cls.name, name))
            elif (position := _unpacked(item, attr)) is not None:  # a, self.x = f(): the item x takes
                value = _item(self.node_at(item.value, path, item.lineno), position)
            else:
                value = self.node_at(item.value, path, item.lineno) if item.value is not None else Unknown((attr,))
            if isinstance(value, Known):
                value = Known(value.value, (*value.why, f"{path}:{item.lineno}"))
            values.append(value)
            if isinstance(item, ast.AnnAssign) and item in cls.body:  # a field: what its constructions pass too
                values.extend(self._constructed(cls.name, attr))
        # a write that reads the attribute again (a property handing it on) is one of the others' values
        values = [v for v in values if not (isinstance(v, Unknown) and v.cycle == attr)]
        if not values:
            return Unknown((attr,))
        first = values[0]
        if all(_same(first, v) for v in values):
            return _agreed(values) if len(values) > 1 else first
        return next((v for v in values if isinstance(v, Unknown)), Unknown((attr,)))

    def _constructed(self, cls: str, attr: str, depth: int = 0) -> list[Value]:
        """What the tree's constructions of class *cls* (and its subclasses' ``super().__init__``) pass for its
        field or parameter *attr*. Where the class's own ``__init__`` is known, a positional argument is matched
        to its parameter, and a construction that does not pass it passes nothing (the default is its writer's
        to give); a subclass's ``__init__`` that hands on a parameter of its own (``x=x``) or its ``*args`` and
        ``**kwargs`` passes what the subclass's constructions pass. An Unknown for a construction whose arguments
        cannot be told apart, and for a class built in too many files."""
        paths = self.code.naming(cls)
        if paths is None or depth > MAX_DEPTH:
            return [Unknown((attr,))]
        init = self._init_of(cls)
        found: list[Value] = []
        word = re.escape(cls.encode())
        direct = re.compile(rb"\b" + word + rb"\s*\(")
        built = re.compile(rb"\b" + word + rb"\s*\(|__init__\s*\(")
        for path in paths:
            # a file's ``__init__(...)`` calls are read only where it defines a subclass of the class
            pattern = built if self.code.subclasses_word(path, cls) else direct
            calls = self.code.calls(path, pattern)
            if self.code.unread(path, pattern):
                found.append(Unknown((attr,)))  # the limit refused a file that may build it
            for node in calls:
                called = chain_of(node.func)
                if called[-1:] != [cls] and not self._subclass_call(path, node, cls):
                    continue
                passed = _passed(node, init, attr)
                if passed is None:
                    continue
                if isinstance(passed, ast.expr):
                    found.extend(self._handed_on(path, node, passed, attr, depth))
                else:
                    found.append(Unknown((attr,)))
        return found

    def _init_of(self, cls: str) -> ast.FunctionDef | None:
        """The ``__init__`` class *cls* defines itself, when one class of that name is in the tree."""
        ref = self.code.class_named(cls)
        if ref is None:
            return None
        return next((n for n in ref.node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)

    def _handed_on(self, path: str, call: ast.Call, passed: ast.expr, attr: str, depth: int) -> list[Value]:
        """The values *passed* stands for. In a class's ``__init__``, a parameter of its own (``x=x``) stands for
        what that class's constructions pass for it (or its default), its ``*args``/``**kwargs`` for what they
        pass for *attr*; else the expression's value."""
        function, owner = self.code.enclosing(path, call.lineno)
        if isinstance(function, ast.FunctionDef) and function.name == "__init__" and owner is not None:
            rest = {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
            if isinstance(passed, ast.Starred) and isinstance(passed.value, ast.Name) and passed.value.id in rest:
                return self._constructed(owner.name, attr, depth + 1)
            parameter = _default_of(function, passed.id) if isinstance(passed, ast.Name) else None
            if isinstance(passed, ast.Name) and parameter is not None:
                (default,) = parameter
                values = self._constructed(owner.name, passed.id, depth + 1)
                if default is not None:
                    values.append(self.node_at(default, path, function.lineno))
                return values or [Unknown((passed.id,))]
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and depth <= MAX_DEPTH:
            if isinstance(passed, ast.Starred) and isinstance(passed.value, ast.Name):
                held = _held(function, passed.value.id, attr)
                if held is not None:  # a dict the function builds: what it holds under that key, if anything
                    return [v for entry in held for v in self._handed_on(path, call, entry, attr, depth + 1)]
            elif isinstance(passed, ast.Name) and _kept_parameter(function, passed.id):
                # a parameter the function hands on untouched: what its callers pass for it, else its default
                (default,) = _default_of(function, passed.id) or (None,)
                called = self._called(path, function, owner, passed.id, depth + 1)
                if called is None:
                    return [Unknown((passed.id,))]
                defaults = [self.node_at(default, path, function.lineno)] if default is not None else []
                return [*called, *defaults] or [Unknown((passed.id,))]
        if isinstance(passed, ast.Starred):
            return [Unknown((attr,))]
        return [self.node_at(passed, path, call.lineno)]

    def _called(
        self, path: str, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str,
        depth: int,
    ) -> list[Value] | None:  # fmt: skip
        """What the tree's calls of *function* pass for its parameter *name* (a call that passes nothing gives
        none: the default is the caller's to add); None when no call of it is found (it may be handed on by
        reference) or its name is too common to follow."""
        key = (path, function.lineno, name)
        if self._kept(self._callers, key):
            found = self._callers[key]
            return list(found) if found is not None else None
        if key in self._busy:
            return [self._cut_short(Unknown((name,), cycle=name))]
        self._busy.add(key)
        refused = self.code.refused
        try:
            found = self._calls_of(function, owner, name, depth)
        finally:
            self._busy.discard(key)
        undecided = found is None or any(isinstance(v, Unknown) for v in found)
        self._keep(self._callers, key, found, refused, undecided)
        return list(found) if found is not None else None

    def _calls_of(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str, depth: int
    ) -> list[Value] | None:
        sites = self._call_sites(function, owner)
        if not sites:
            return None
        found: list[Value] = []
        for where, node in sites:
            if node is None:
                found.append(Unknown((name,)))  # the limit refused a file that may call it
                continue
            passed = _passed(node, function, name, _takes_self(function, owner))
            if isinstance(passed, ast.expr):
                found.extend(self._handed_on(where, node, passed, name, depth))
            elif passed:
                found.append(Unknown((name,)))
        return found

    def _call_sites(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None
    ) -> list[tuple[str, ast.Call | None]] | None:
        """The tree's calls of *function* by its name, (path, call); (path, None) for a file that may call it
        but the limit refused to parse; None when its name is too common to follow."""
        paths = self.code.naming(function.name)
        if paths is None:
            return None
        pattern = re.compile(rb"\b" + re.escape(function.name.encode()) + rb"\s*\(")
        found: list[tuple[str, ast.Call | None]] = []
        for where in paths:
            calls = self.code.calls(where, pattern)
            if self.code.unread(where, pattern):
                found.append((where, None))
            found += [(where, node) for node in calls if chain_of(node.func)[-1:] == [function.name]]
        return found

    def _never_runs(self, path: str, call: ast.Call, depth: int) -> bool:
        """Whether the run never makes *call*: a condition it is under is false for the run, or none of the calls
        of its function runs (a few functions up; a call back into one adds no way in)."""
        key = ("runs", path, call.lineno, call.col_offset)
        if key in self._busy:
            return True
        self._busy.add(key)
        try:
            for text in self.code.guards(path, call.lineno):
                node = _expression(text)
                value = node if isinstance(node, Unknown) else self.node_at(node, path, call.lineno)
                if isinstance(value, Known) and not value.value:
                    return True
            function, owner = self.code.enclosing(path, call.lineno)
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or depth >= MAX_UP:
                return False
            sites = self._call_sites(function, owner)
            if not sites or any(node is None for _, node in sites):
                return False
            return all(self._never_runs(where, node, depth + 1) for where, node in sites if node is not None)
        finally:
            self._busy.discard(key)

    def _parameter(
        self, path: str, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str,
        depth: int,
    ) -> Value:  # fmt: skip
        """An optional parameter no fact names: its default, when no call of its function that the run may make
        passes it (what a call passes is not weighed: only whether it passes it)."""
        found = _default_of(function, name)
        if found is None or found[0] is None or depth > MAX_DEPTH:
            return Unknown((name,))
        key = ("parameter", path, function.lineno, name)
        if key in self._busy:
            return self._cut_short(Unknown((name,), cycle=name))
        self._busy.add(key)
        try:
            sites = self._call_sites(function, owner)
            unrun = 0
            for where, node in sites or ():
                if node is None:
                    return Unknown((name,))  # a file that may call it was not read
                if _passed(node, function, name, _takes_self(function, owner)) is not None:
                    if not self._never_runs(where, node, 0):
                        return Unknown((name,))
                    unrun += 1
        finally:
            self._busy.discard(key)
        if not sites:
            return Unknown((name,))  # no call of it found: it may be handed on by reference
        default = self.node_at(found[0], path, function.lineno)
        unrun_text = f" ({unrun} that pass it do not run)" if unrun else ""
        why = f"{name} passed by no call the run makes{unrun_text}: its default, {path}:{function.lineno}"
        return _why(default, (why,))

    def _subclass_call(self, path: str, call: ast.Call, cls: str) -> bool:
        """Whether *call* (``super().__init__(...)``, ``Base.__init__(self, ...)``) is in a subclass of *cls*."""
        _, owner = self.code.enclosing(path, call.lineno)
        return owner is not None and cls in {chain_of(b)[-1] for b in owner.bases if chain_of(b)}

    # -- calls ---------------------------------------------------------------------------------------
    def _call(self, node: ast.Call, scope: _Scope) -> Value:
        func = node.func
        chain = chain_of(func)
        name = chain[-1] if chain else ""
        observed = self.profile.observe(name, scope.path, scope.line) if name else None
        if observed is not None:
            return observed
        if chain[:-1] and chain[-1] == "get" and not node.args and len(chain) >= 2:
            registry = self._env_var(chain[-2])
            if registry is not None:
                return registry
        if chain[-2:] in (["os", "getenv"], ["environ", "get"]) or chain == ["getenv"]:
            return self._getenv(node, scope)
        if name == "getattr" and len(node.args) in (2, 3):
            return self._getattr(node, scope)
        if name in self.profile.words.element_size and len(node.args) == 1 and not node.keywords:
            dtype = self.expr(node.args[0], scope)
            if isinstance(dtype, Known) and isinstance(dtype.value, Dtype):
                return Known(dtype.value.size, dtype.why)
            return dtype if isinstance(dtype, Unknown) else Unknown((_text(node),))
        if name == "hasattr" and len(node.args) == 2:
            receiver, key = self.expr(node.args[0], scope), self.expr(node.args[1], scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig) and isinstance(key, Known):
                return receiver.value.has(key.value)
        if name == "isinstance" and len(node.args) == 2:
            decided = self._isinstance(node, scope)
            if decided is not None:
                return decided
        if name == "get_text_config" and not node.args and isinstance(func, ast.Attribute):
            receiver = self.expr(func.value, scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig):
                text = receiver.value.values.get("text_config")
                return Known(_config(text, receiver.value) if isinstance(text, dict) else receiver.value, receiver.why)
        if name in ("isinstance", "hasattr", "callable", "id", "type"):
            first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
            subject = self.expr(first, scope) if first is not None else None
            # an undecided object: what decides it decides this too (the model's config for isinstance(config, ...))
            return Unknown(subject.needs if isinstance(subject, Unknown) and subject.needs else (_text(node),))
        if isinstance(func, ast.Name) and func.id in _PURE or (chain[:1] and chain[0] in _MODULES and name in _PURE):
            return self._pure(_PURE[name], node, scope)
        if isinstance(func, ast.Attribute):
            method = self._on_receiver(func, node, scope)
            if method is not None:
                return method
        if isinstance(func, ast.Name):
            built = self._built(func, node, scope)
            if built is not None:
                return built
        target = self._callee(func, chain, scope)
        if target is None:
            return Unknown((_text(node),))
        path, function, cls = target
        if scope.depth >= MAX_DEPTH * 4:
            return Unknown((_text(node),))
        bound = self._bind(function, node, scope, method=_takes_self(function, cls))
        if isinstance(bound, Unknown):
            return bound
        return self._body(function, path, cls, bound, scope.depth + 1)

    def _built(self, func: ast.Name, node: ast.Call, scope: _Scope) -> Value | None:
        """An object of a dataclass of the tree, built with keywords (and positional arguments in the order of
        its fields); None when the name is no such class."""
        if self.code.naming(func.id) is None or not self._declares(func.id):
            return None
        ref = self._name(func.id, scope)
        if not (isinstance(ref, Known) and isinstance(ref.value, ClassRef)):
            return None
        if not _record_class(ref.value.node):
            if not self._plain_class(ref.value):
                return None
            where = (*ref.why, f"{func.id}(...) at {scope.path}:{node.lineno}")
            return Known(Instance(ref.value, (), plain=True), where)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return Unknown((_text(node),))
        names = [
            i.target.id for i in ref.value.node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)
        ]
        given = [*zip(names, node.args, strict=False), *((k.arg, k.value) for k in node.keywords if k.arg)]
        fields = tuple((name, self.expr(value, scope)) for name, value in given)
        return Known(Instance(ref.value, fields), (*ref.why, f"{func.id}(...) at {scope.path}:{node.lineno}"))

    def _plain_class(self, ref: ClassRef) -> bool:
        """Whether objects of *ref* can stand for themselves: an ordinary class of the tree that says nothing of
        its truth or construction (no ``__bool__``, ``__len__``, ``__new__``), each base a class of the tree that
        does neither, or ``object``/``ABC``."""
        seen: set[str] = set()
        pending = [ref]
        while pending:
            cls = pending.pop()
            if cls.node.name in seen:
                continue
            seen.add(cls.node.name)
            names = {n.name for n in cls.node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if names & {"__bool__", "__len__", "__new__", "__call__"} or cls.node.keywords:
                return False
            for base in cls.node.bases:
                spelt = chain_of(base)
                if spelt[-1:] in (["object"], ["ABC"]):
                    continue
                found = self.code.class_named(spelt[-1]) if spelt else None
                if found is None or len(seen) > MAX_DEPTH:
                    return False
                pending.append(found)
        return True

    def _family(self, ref: ClassRef) -> tuple[set[str], bool]:
        """The names of *ref*'s class and its bases, and whether every base was found in the tree."""
        names: set[str] = set()
        whole, pending = True, [ref.node]
        while pending and len(names) <= MAX_DEPTH:
            node = pending.pop()
            names.add(node.name)
            for base in node.bases:
                spelt = chain_of(base)
                if spelt[-1:] in (["object"], ["ABC"]):
                    continue
                found = self.code.class_named(spelt[-1]) if spelt else None
                if found is not None:
                    pending.append(found.node)
                else:
                    whole = False
                    names.update(spelt[-1:])
        return names, whole and not pending

    def _on_receiver(self, func: ast.Attribute, node: ast.Call, scope: _Scope) -> Value | None:
        """A method called on a decided receiver (evaluated once): a reading method of a built-in value
        (``_METHODS``), else a method of a class of the tree (see ``_on_decided``; not on ``self``/``cls``,
        whose methods ``_callee`` finds); None when it is neither."""
        on_self = isinstance(func.value, ast.Name) and func.value.id in _SELF
        if on_self and not any(func.attr in names for names in _METHODS.values()):
            return None
        receiver = self.expr(func.value, scope)
        if not isinstance(receiver, Known):
            return None
        if func.attr in _METHODS.get(type(receiver.value), ()):
            return self._method(receiver, func.attr, node, scope)
        return None if on_self else self._on_decided(receiver, func.attr, node, scope)

    def _on_decided(self, receiver: Known, name: str, node: ast.Call, scope: _Scope) -> Value | None:
        """A method of a class of the tree called on a decided *receiver*: a class the code names (a classmethod or
        staticmethod: ``SpeculativeAlgorithm.from_string(name)``), or a member of an enum of the tree
        (``algorithm.is_none()``, run with ``self`` the member); None when the receiver is neither."""
        if isinstance(receiver.value, Instance):
            found = method_of(self.code, receiver.value.ref, name)
            if found is None or _kind(found[1]) != "instance":
                return None
            bound = self._bind(found[1], node, scope, method=True)
            if isinstance(bound, Unknown):
                return bound
            first = [*found[1].args.posonlyargs, *found[1].args.args][:1]
            if first:
                bound[first[0].arg] = receiver
            return self._body(found[1], found[0], found[2], bound, scope.depth + 1)
        if isinstance(receiver.value, ClassRef):
            ref: ClassRef | None = receiver.value
        elif isinstance(receiver.value, Member):
            ref = self.code.class_named(receiver.value.enum)
        else:
            return None
        if ref is None:
            return None
        path, cls = ref.path, ref.node
        method = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if method is None:
            return None
        kind = _kind(method)
        if kind == "instance" and isinstance(receiver.value, ClassRef):
            return None  # an instance method called on its class: its first argument is the instance
        bound = self._bind(method, node, scope, method=kind != "static")
        if isinstance(bound, Unknown):
            return bound
        first = [*method.args.posonlyargs, *method.args.args][:1]
        if kind != "static" and first:
            bound[first[0].arg] = receiver if kind == "instance" else Known(ClassRef(path, cls), receiver.why)
        return self._body(method, path, cls, bound, scope.depth + 1)

    def _method(self, receiver: Known, name: str, node: ast.Call, scope: _Scope) -> Value:
        """A reading method of a decided built-in value (see ``_METHODS``) with the call's arguments."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return Unknown((_text(node),))
        evaluated = self._arguments(node, scope)
        if isinstance(evaluated, Unknown):
            return evaluated
        args, kwargs = evaluated
        try:
            result = getattr(receiver.value, name)(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
        except (TypeError, ValueError, AttributeError):
            return Unknown((_text(node),))
        if isinstance(result, (KeysView, ValuesView, ItemsView)):
            result = list(result)
        return Known(result, tuple(dict.fromkeys(w for v in (receiver, *args, *kwargs.values()) for w in v.why)))

    def _arguments(self, node: ast.Call, scope: _Scope) -> tuple[list[Known], dict[str, Known]] | Unknown:
        """The call's arguments, evaluated (a starred one as the value it spreads; keywords by name), or what the
        undecided ones need."""
        args = [self.expr(a.value if isinstance(a, ast.Starred) else a, scope) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords if k.arg}
        unknown = [v for v in [*args, *kwargs.values()] if isinstance(v, Unknown)]
        if unknown:
            return Unknown(tuple(dict.fromkeys(n for u in unknown for n in u.needs)))
        return [a for a in args if isinstance(a, Known)], {k: v for k, v in kwargs.items() if isinstance(v, Known)}

    def _pure(self, function: Callable[..., Any], node: ast.Call, scope: _Scope) -> Value:
        if node.keywords and function not in (min, max, round, sorted):
            return Unknown((_text(node),))
        if len(node.args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            items = self._generated(node.args[0], scope, function in (any, all))
            if isinstance(items, Unknown):
                return items
            return Known(_as_run(function, items.value), items.why)
        evaluated = self._arguments(node, scope)
        if isinstance(evaluated, Unknown):
            return evaluated
        args, kwargs = evaluated
        values = []
        for a, v in zip(node.args, args, strict=True):
            values.extend(_as_run(list, v.value)) if isinstance(a, ast.Starred) else values.append(v.value)
        result = _as_run(function, *values, **{k: v.value for k, v in kwargs.items()})
        return Known(result, tuple(dict.fromkeys(w for v in args for w in v.why)))

    def _generated(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, scope: _Scope, lazy: bool) -> Value:
        """The items of a one-``for`` comprehension over a known sequence (conditions known per item)."""
        if len(node.generators) != 1 or not isinstance(node.generators[0].target, ast.Name):
            return Unknown((_text(node),))
        generator = node.generators[0]
        assert isinstance(generator.target, ast.Name)
        iterable = self.expr(generator.iter, scope)
        if isinstance(iterable, Unknown):
            return iterable
        items = _as_run(list, iterable.value)[:MAX_ITEMS]
        out = []
        needs: list[str] = []
        env = dict(scope.env or {})
        inner = _Scope(scope.path, scope.function, scope.cls, scope.line, env, scope.depth)
        target = generator.target.id
        for item in items:
            env[target] = Known(item)
            if not all(_truthy(self.expr(c, inner), needs) for c in generator.ifs):
                continue
            value = self.expr(node.elt, inner)
            if isinstance(value, Unknown):
                needs += value.needs
                continue
            out.append(value.value)
            if lazy and value.value and not needs:
                break
        if needs and not (lazy and any(out)):
            return Unknown(tuple(dict.fromkeys(needs)))
        return Known(out, iterable.why)

    def _isinstance(self, node: ast.Call, scope: _Scope) -> Value | None:
        """``isinstance(config, A | B)`` for the model's config: a configuration class of the tree is known by
        its ``model_type`` (as Hugging Face tells them apart); None when it is not about the model's config."""
        receiver = self.expr(node.args[0], scope)
        classes = _union(node.args[1])
        if isinstance(node.args[1], ast.Attribute):  # a class held by an object (spec.config_class)
            held = self.expr(node.args[1], scope)
            if isinstance(held, Known) and isinstance(held.value, ClassRef):
                classes = [held.value.node.name]
            elif isinstance(held, Unknown):
                return held
        if isinstance(receiver, Known) and receiver.value is None:
            if classes and not {"object", "NoneType", "type(None)"} & set(classes):
                return Known(False, receiver.why)  # None is an instance of no class the code names
        if isinstance(receiver, Known) and classes and set(classes) <= {*_BUILTIN_TYPES, "dtype"}:
            return self._builtin_instance(receiver, classes)
        if isinstance(receiver, Known) and isinstance(receiver.value, Instance):
            family, whole = self._family(receiver.value.ref)
            if family & set(classes) or whole:
                return Known(bool(family & set(classes)), receiver.why)
            return Unknown((_text(node),))
        if not (isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig)):
            return None
        model_type = receiver.value.get("model_type")
        if isinstance(model_type, Unknown):
            return model_type
        needs: list[str] = []
        spelt: list[str] = []
        for name in classes:
            declared, named = self._model_type(name), tuple[str, ...]()
            if declared is None and name.endswith("Config") and self._declares(name):
                # a subclass of a configuration outside the tree: its type by Hugging Face's naming, said so
                declared = model_type_of([name.removesuffix("Config")])
                named = (f"{name}.model_type assumed {declared!r} from its name ({CLASS_ASSUMED})",)
            if declared is None:
                needs.append(f"isinstance(config, {name})")
            elif declared == model_type.value:
                return Known(True, (*model_type.why, f"{name}.model_type", *named))
            spelt.extend(named)
        if needs:
            return Unknown(tuple(needs))
        return Known(False, (*model_type.why, f"not {' | '.join(classes)}", *spelt))

    @staticmethod
    def _builtin_instance(receiver: Known, classes: Sequence[str]) -> Value | None:
        """``isinstance(x, str)`` (or ``int``, ``dict``..., or the tensor library's ``dtype``) for a decided value:
        a model config is a configuration object, not a dict; None for a value of no such kind."""
        value = receiver.value
        if isinstance(value, (ModelConfig, Dtype)):
            kinds: tuple[str, ...] = ("dtype",) if isinstance(value, Dtype) else ()
        elif type(value) in _BUILTIN_TYPES.values():
            kinds = tuple(name for name, kind in _BUILTIN_TYPES.items() if isinstance(value, kind))
        else:
            return None
        return Known(bool(set(kinds) & set(classes)), receiver.why)

    def _declares(self, name: str) -> bool:
        """Whether a class of the tree is named *name*."""
        return any(isinstance(node, ast.ClassDef) for _, node in self.code.definitions(name))

    def _model_type(self, name: str) -> str | None:
        """The ``model_type`` a configuration class of the tree declares (None: not found, or no literal)."""
        for _, node in self.code.definitions(name):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (
                        isinstance(item, (ast.Assign, ast.AnnAssign))
                        and any(isinstance(t, ast.Name) and t.id == "model_type" for t in _targets(item))
                        and isinstance(item.value, ast.Constant)
                        and isinstance(item.value.value, str)
                    ):
                        return item.value.value
        return None

    def _getattr(self, node: ast.Call, scope: _Scope) -> Value:
        name = self.expr(node.args[1], scope)
        if isinstance(name, Unknown) or not isinstance(name.value, str):
            return Unknown((_text(node),))
        receiver = self.expr(node.args[0], scope)
        default = self.expr(node.args[2], scope) if len(node.args) == 3 else None
        if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig):
            if default is None or isinstance(default, Unknown):
                return receiver.value.get(name.value)
            return receiver.value.get(name.value, default.value)
        if isinstance(receiver, Known):
            member = _member(receiver, name.value)
            if receiver.value is None and isinstance(default, Known):
                return _why(default, receiver.why)  # None has no attribute of a name the code asks for
            return member
        if isinstance(default, Known) and (chain_of(node.args[0])[-1:] or [""])[0] in self.profile.words.loaded_model:
            return self._loaded(name.value, default)
        attribute = ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Load())
        return self._attribute(attribute, scope)

    def _loaded(self, name: str, default: Known) -> Value:
        """An attribute of the loaded model asked for with a default: the default, assumed and said so, where the
        run has one pipeline stage (the model holds every layer); unknown otherwise."""
        argument, value = self.profile.words.loaded_when
        stages = self.facts.named(argument) if argument else None
        if stages is None and argument:
            return Unknown((argument,))
        if isinstance(stages, Unknown) or (isinstance(stages, Known) and stages.value != value):
            return Unknown((f"the loaded model's {name}",))
        why = stages.why if isinstance(stages, Known) else ()
        return Known(default.value, (*why, f"the loaded model's {name} assumed its default ({LOADED_ASSUMED})"))

    def _env_var(self, name: str) -> Value | None:
        """``envs.NAME.get()``: --env's value, else the default its registry declares (None: no registry entry)."""
        if not name.isupper():
            return None
        declared = self.registry(name)
        if declared is None:
            return None
        kind, default, where = declared
        if name in self.facts.env:
            text = self.facts.env[name]
            return Known(_env_value(kind, text, default), (f"{name}={text} (--env)",))
        if isinstance(default, Unknown):
            return default
        return Known(default, (f"{name} unset: the release's default ({where})",))

    def _getenv(self, node: ast.Call, scope: _Scope) -> Value:
        """``os.getenv(NAME, default)``, ``os.environ.get(NAME, default)``: --env's text, else the default (None
        without one: the variable unset). A function of the tree that wraps them (``get_int_env_var``) is
        followed to this call, as any other."""
        if not node.args:
            return Unknown((_text(node),))
        given = (
            node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
        )
        default = self.expr(given, scope) if given is not None else Known(None)
        return self._environ(self.expr(node.args[0], scope), default, node)

    def _environ(self, name: Value, default: Value | None, node: ast.expr) -> Value:
        """The environment variable *name* as a read of ``os.environ`` gives it: --env's text, else *default*
        (None: reading it unset raises, which no start-up that got this far did, so it is not known)."""
        if not isinstance(name, Known) or not isinstance(name.value, str):
            return Unknown((_text(node),))
        if name.value in self.facts.env:
            text = self.facts.env[name.value]
            return Known(text, (*name.why, f"{name.value}={text} (--env)"))
        if default is None:
            return Unknown((f"--env {name.value}",))
        if isinstance(default, Unknown):
            return default
        return Known(default.value, (*default.why, f"{name.value} unset (no --env)"))

    def reads_env(self, name: str) -> bool:
        """Whether a file of the tree reads the environment variable *name* by its name, in any idiom the slicer
        knows (``os.getenv("NAME")``, ``os.environ.get``/``[...]``, a helper such as ``get_int_env_var("NAME")``)."""
        spelt = re.compile(
            rb"(?:env|environ)\w*(?:\.get)?\s*[(\[]\s*[rRuU]?[\"']" + re.escape(name.encode()) + rb"[\"']"
        )
        return any(spelt.search(self.code.text(path)) for path in self.code.naming(name) or ())

    def registry(self, name: str) -> tuple[str, Any, str] | None:
        """(its kind, its default, ``path:line``) of an environment variable the release's registry declares
        (``NAME = EnvInt(100)`` in a class body), None if none does."""
        declared = re.compile(rb"^[ \t]+" + re.escape(name.encode()) + rb"\s*(?::[^=\n]*)?=\s*\w", re.M)
        for path in (p for p in self.code.naming(name) or () if declared.search(self.code.text(p))):
            tree = self.code.tree(path)
            for cls in _statements(tree.body, ast.ClassDef) if tree else ():
                for item in cls.body:
                    if (
                        isinstance(item, (ast.Assign, ast.AnnAssign))
                        and any(isinstance(t, ast.Name) and t.id == name for t in _targets(item))
                        and isinstance(item.value, ast.Call)
                    ):
                        kind = chain_of(item.value.func)[-1:] or [""]
                        args = item.value.args
                        default: Value = Known(None)
                        if args:
                            default = self.node_at(args[0], path, item.lineno)
                        elif any(k.arg == "default" for k in item.value.keywords):
                            keyword = next(k for k in item.value.keywords if k.arg == "default")
                            default = self.node_at(keyword.value, path, item.lineno)
                        elif kind[0].lower().endswith("bool"):
                            default = Known(False)
                        value = default.value if isinstance(default, Known) else default
                        return kind[0], value, f"{path}:{item.lineno}"
        return None

    def _callee(
        self, func: ast.expr, chain: Sequence[str], scope: _Scope
    ) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The tree's function a call runs, when the name says which: a module function, or a method of self."""
        if isinstance(func, ast.Name):
            local = self.code.function_in(scope.path, func.id)
            if local is not None:
                return scope.path, local, None
            imported = self.code.imported(scope.path, func.id, scope.function)
            return self._function_in(*imported) if imported is not None else None
        if len(chain) == 2 and chain[0] not in _SELF and not _bound(scope.env, chain[0]):
            module = self.code.module_named(scope.path, chain[0], scope.function)
            if module is not None:  # module.function(...)
                return self._function_in(module, chain[1])
            method = self._annotated_method(chain[0], chain[1], scope)
            if method is not None:  # kvc.method(...), kvc a parameter annotated with a class of the tree
                return method
        if len(chain) == 2 and chain[0] in ("self", "cls") and scope.cls is not None:
            for node in scope.cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == chain[1]:
                    return scope.path, node, scope.cls
            found = [(p, d) for p, d in self.code.definitions(chain[1]) if isinstance(d, ast.FunctionDef)]
            found = [(p, d) for p, d in found if self.code._class_of(p, d) is not None]
            if len(found) == 1:
                path, node = found[0]
                return path, node, self.code._class_of(path, node)
        return None

    def _annotated_method(
        self, receiver: str, name: str, scope: _Scope
    ) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The method *name* of the class a parameter *receiver* of the running function is annotated with (run as
        that class's methods are: its ``self.x`` are the class's writes of x)."""
        for cls in _annotated(scope.function, receiver):
            ref = self.code.class_named(cls, True)
            if ref is None:
                continue
            method = next((n for n in ref.node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
            if method is not None and _kind(method) == "instance":
                return ref.path, method, ref.node
        return None

    def _function_in(self, path: str, name: str) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The module-level function *name* of the file *path*, as :meth:`_callee` gives it."""
        function = self.code.function_in(path, name)
        return (path, function, None) if function is not None else None

    def _bind(self, function: ast.AST, call: ast.Call, scope: _Scope, method: bool) -> dict[str, Value] | Unknown:
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args][1 if method else 0 :]
        bound: dict[str, Value] = {}
        for parameter, argument in zip(positional, call.args, strict=False):
            if isinstance(argument, ast.Starred):
                return Unknown((_text(call),))
            bound[parameter.arg] = self.expr(argument, scope)
        for keyword in call.keywords:
            if keyword.arg is None:
                return Unknown((_text(call),))
            bound[keyword.arg] = self.expr(keyword.value, scope)
        defaults = dict(zip([p.arg for p in positional][-len(arguments.defaults) :], arguments.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d})
        for name in [p.arg for p in positional] + [p.arg for p in arguments.kwonlyargs]:
            if name not in bound:
                bound[name] = self.expr(defaults[name], scope) if name in defaults else Unknown((name,))
        return bound

    def _body(
        self, function: ast.AST, path: str, cls: ast.ClassDef | None, bound: dict[str, Value], depth: int
    ) -> Value:
        """What *function* returns with parameters *bound* (remembered for known, hashable arguments)."""
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        try:
            key = (id(function), repr(sorted((k, v) for k, v in bound.items())))
        except TypeError:
            key = (id(function), "")
        if self._kept(self._calls, key):
            return self._calls[key]
        if key in self._busy:
            return self._cut_short(Unknown((f"{function.name}()",), cycle=function.name))
        if depth > MAX_DEPTH * 4:
            return Unknown((f"{function.name}()",))
        self._busy.add(key)
        refused = self.code.refused
        try:
            scope = _Scope(path, function, cls, function.lineno, dict(bound), depth)
            try:
                self._run(function.body, scope)
                result: Value = Known(None, (f"{path}:{function.lineno}",))
            except _Return as done:
                result = done.value
            if isinstance(result, Known):
                why = (*scope.decided, *result.why, f"{function.name}() at {path}:{function.lineno}")
                result = Known(result.value, tuple(dict.fromkeys(why)))
        finally:
            self._busy.discard(key)
        self._keep(self._calls, key, result, refused, isinstance(result, Unknown))
        return result

    # -- statements ----------------------------------------------------------------------------------
    def _run(self, body: Sequence[ast.stmt], scope: _Scope, top: bool = False, until: int | None = None) -> bool:
        """Run *body* in *scope*'s env, up to the statement holding line *until* (True once there); raises
        _Return with the value a ``return`` gives (Unknown when an earlier ``return`` may have been taken)."""
        env = scope.env
        assert env is not None
        for statement in body:
            end = statement.end_lineno or statement.lineno
            if until is not None and statement.lineno > until:
                return True
            scope.line = statement.lineno
            if until is not None and statement.lineno <= until <= end:
                return self._into(statement, scope, top, until)
            if self.code.changes(statement):  # an object a local holds may change: its attributes are read anew
                env[_CHANGES] = Known(next(_CHANGED))
            if isinstance(statement, ast.Return):
                value = self.expr(statement.value, scope) if statement.value else Known(None)
                earlier = scope.returned
                if earlier:
                    value = value if all(_same(value, e) for e in earlier) else Unknown(_needs(earlier))
                raise _Return(value)
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self._store(statement, scope)
            elif isinstance(statement, ast.If):
                self._if(statement, scope, top)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                self._run(statement.body, scope, top)
            elif isinstance(statement, ast.Try):
                self._run(statement.body, scope, top)
            elif isinstance(statement, ast.Expr) and top:
                self._mutate(statement.value, scope)
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.NamedExpr):
                self.expr(statement.value, scope)
            elif isinstance(statement, ast.Raise) and not top:
                raise _Return(Unknown(("an exception",)) if not scope.returned else Unknown(_needs(scope.returned)))
            elif isinstance(statement, ast.For) and not top and self._loop(statement, scope):
                pass
            elif isinstance(statement, (ast.For, ast.While, ast.AsyncFor)) and not top:
                for name in _stored(statement):
                    env[name] = Unknown((name,))
                if any(isinstance(n, ast.Return) for n in ast.walk(statement)):
                    scope.returned.append(
                        Unknown((_text(statement.iter) if isinstance(statement, ast.For) else "a loop",))
                    )
        return False

    def _loop(self, statement: ast.For, scope: _Scope) -> bool:
        """A ``for`` over a decided sequence of at most MAX_LOOP items, with no ``break`` or ``continue``: its body
        run for each item (a ``return`` in it returns); False (not run) otherwise."""
        if any(isinstance(n, (ast.Break, ast.Continue)) for s in statement.body for n in ast.walk(s)):
            return False
        names = [statement.target] if isinstance(statement.target, ast.Name) else getattr(statement.target, "elts", [])
        if not names or not all(isinstance(n, ast.Name) for n in names):
            return False
        iterable = self.expr(statement.iter, scope)
        if not isinstance(iterable, Known) or not isinstance(iterable.value, (list, tuple, set, frozenset, dict, str)):
            return False
        items = list(iterable.value)
        if len(items) > MAX_LOOP:
            return False
        env = scope.env
        assert env is not None
        scope.decided.extend(iterable.why)
        for item in items:
            if isinstance(statement.target, ast.Name):
                env[statement.target.id] = Known(item, iterable.why)
            elif isinstance(item, (list, tuple)) and len(item) == len(names):
                for name, part in zip(names, item, strict=True):
                    env[name.id] = Known(part, iterable.why)
            else:
                return False
            self._run(statement.body, scope)
        self._run(statement.orelse, scope)
        return True

    def _into(self, statement: ast.stmt, scope: _Scope, top: bool, until: int) -> bool:
        """Run into the part of compound *statement* that holds line *until* (the read is on that way)."""
        assert scope.env is not None
        parts: list[Sequence[ast.stmt]] = []
        if isinstance(statement, ast.If):
            parts = [statement.body, statement.orelse]  # the read is on that branch: its test need not be known
        elif isinstance(statement, (ast.For, ast.While, ast.AsyncFor)):
            for name in _stored(statement):
                scope.env[name] = Unknown((name,))
            parts = [statement.body, statement.orelse]
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            parts = [statement.body]
        elif isinstance(statement, ast.Try):
            parts = [statement.body, *[h.body for h in statement.handlers], statement.orelse, statement.finalbody]
        for part in parts:
            if _holds(part, until):
                return self._run(part, scope, top, until)
        return True

    def _store(self, statement: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope) -> None:
        env = scope.env
        assert env is not None
        if statement.value is None:
            return
        value = self._later(statement.value, scope)
        if isinstance(statement, ast.AugAssign):
            if isinstance(statement.target, ast.Name):
                name = statement.target.id
                before = env.get(name) or self._name(name, scope)
                op = _BINARY.get(type(statement.op), _unknown_op)
                env[name] = _Lazy(lambda: _apply(op, _force(before), _force(value)), self.code)
            return
        for target in _targets(statement):
            if isinstance(target, ast.Name):
                env[target.id] = _Lazy(functools.partial(_one_value, value), self.code)
            elif isinstance(target, ast.Attribute) and chain_of(target) == ["self", target.attr]:
                env[f"self.{target.attr}"] = value  # the instance's attribute, as the function's flow sets it
            elif isinstance(target, (ast.Tuple, ast.List)):
                for i, element in enumerate(target.elts):
                    if isinstance(element, ast.Name):
                        env[element.id] = _Lazy(functools.partial(_item, value, i), self.code)
                    elif isinstance(element, ast.Attribute) and chain_of(element) == ["self", element.attr]:
                        env[f"self.{element.attr}"] = _Lazy(functools.partial(_item, value, i), self.code)

    def _later(self, node: ast.expr, scope: _Scope) -> _Lazy:
        """*node*'s value as the names stand now, worked out when first read."""
        at = _Scope(scope.path, scope.function, scope.cls, scope.line, dict(scope.env or {}), scope.depth)
        return _Lazy(lambda: self.expr(node, at), self.code)

    def _if(self, statement: ast.If, scope: _Scope, top: bool) -> None:
        env = scope.env
        assert env is not None
        if not top and not self.code.exits(statement):
            # no way out of the function in it: its test is worked out only if a name it decides is read
            test_later = self._later(statement.test, scope)
            ran = []
            for body in (statement.body, statement.orelse):
                inner = _Scope(scope.path, scope.function, scope.cls, scope.line, dict(env), scope.depth)
                self._run(body, inner, top)
                ran.append(inner.env or {})
            for name in {n for b in ran for n in b}:
                values = [b.get(name, env.get(name, Unknown((name,)))) for b in ran]
                if not all(v is values[0] for v in values):
                    env[name] = _Lazy(functools.partial(_choose, test_later, values), self.code)
            return
        test = self.expr(statement.test, scope)
        if isinstance(test, Known):
            scope.decided.extend(test.why)
            self._run(statement.body if test.value else statement.orelse, scope, top)
            return
        branches: list[dict[str, Value | _Lazy]] = []
        returned: list[Value] = []
        for body in (statement.body, statement.orelse):
            inner = _Scope(
                scope.path, scope.function, scope.cls, scope.line, dict(env), scope.depth, list(scope.returned)
            )
            try:
                self._run(body, inner, top)
                branches.append(inner.env or {})
            except _Return as done:
                returned.append(done.value)
        if len(returned) == 2:
            raise _Return(returned[0] if _same(*returned) else Unknown(_needs([test, *returned])))
        if returned:
            scope.returned.append(Unknown(test.needs) if not isinstance(returned[0], Unknown) else returned[0])
            scope.returned.append(returned[0])
        for name in {n for b in branches for n in b}:
            values = [b.get(name, env.get(name, Unknown((name,)))) for b in branches]
            if all(v is values[0] for v in values):
                env[name] = values[0]
            else:
                env[name] = _Lazy(functools.partial(_merge, values, test), self.code)

    def _mutate(self, node: ast.expr, scope: _Scope) -> None:
        """A module's own ``NAME.append(x)``/``extend``/``add``/``update`` on a constant it holds."""
        env = scope.env
        assert env is not None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return
        receiver = node.func.value
        if not isinstance(receiver, ast.Name) or receiver.id not in env:
            return
        method = node.func.attr
        if method not in ("append", "extend", "add", "update", "insert"):
            return
        before = _force(env[receiver.id])
        args = [self.expr(a, scope) for a in node.args]
        if isinstance(before, Unknown) or any(isinstance(a, Unknown) for a in args):
            env[receiver.id] = Unknown((receiver.id,))
            return
        try:
            copy = _as_run(type(before.value), before.value)
            _as_run(getattr(copy, method, _no_method), *(a.value for a in args if isinstance(a, Known)))
        except _Raises:  # the program would fail here: what the name holds after it is not known
            env[receiver.id] = Unknown((receiver.id,))
            return
        env[receiver.id] = Known(copy, before.why)


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


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return type(node).__name__


def chain_of(node: ast.expr) -> list[str]:
    """``self.a.b`` -> ["self", "a", "b"]; a call's result ends the chain at its function (``get_x().y``)."""
    names: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Call)):
        if isinstance(node, ast.Call):
            node = node.func
            continue
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def _spelt(text: bytes, word: str, after: re.Pattern[bytes], before: re.Pattern[bytes]) -> bool:
    """Whether *text* holds *word* matching *after* from the word on and *before* up to it, as the one pattern
    ``before + after`` would (the word is looked for first, which the pattern's alternation at its head would
    not let the regular expression engine do)."""
    at = 0
    while (found := after.search(text, at)) is not None:
        start = found.start()
        if before.search(text, text.rfind(b"\n", 0, start) + 1, start) is not None:
            return True
        at = start + 1
    return False


@functools.lru_cache(maxsize=512)
def _written_after(attr: str) -> re.Pattern[bytes]:
    return re.compile(re.escape(attr.encode()) + rb"\b(?:(?:\s*:[^=\n]*)?(?:\s*=[^=]|\()|\s*:[^=\n]*$)", re.M)


@functools.lru_cache(maxsize=512)
def _defined_after(name: str) -> re.Pattern[bytes]:
    return re.compile(re.escape(name.encode()) + rb"\b")


#: What comes before a written attribute (on its line) and a defined name, up to the name.
_WRITTEN_BEFORE = re.compile(rb"(?:\.|^[ \t]+|def )\Z", re.M)
_DEFINED_BEFORE = re.compile(rb"(?:def|class)\s+\Z")


#: A node kind -> its fields that hold statements (a block, a ``try``'s handlers, a ``match``'s cases).
_STATEMENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _walk_statements(node: ast.AST) -> Iterator[ast.AST]:
    """*node* and the statements, handlers and cases at any depth under it, in :func:`ast.walk`'s order (breadth
    first), without walking expressions (which hold no statements). *node*'s own body is parsed if it is not yet;
    the functions of an outline under it are walked only as far as they are parsed."""
    root = node
    pending = collections.deque([node])
    while pending:
        node = pending.popleft()
        kind = type(node)
        fields = _STATEMENT_FIELDS.get(kind)
        if fields is None:
            fields = _STATEMENT_FIELDS[kind] = tuple(f for f in kind._fields if f in _BLOCK_FIELDS)
        for name in fields:
            pending.extend((getattr(node, name, None) if node is root else _block(node, name)) or ())
        yield node


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


def _statements(body: Sequence[ast.stmt], kind: type | tuple[type, ...]) -> Iterator[Any]:
    """The statements of *kind* in *body* and the blocks inside it (not inside functions or classes of other
    kinds), without walking expressions."""
    pending: list[Any] = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, kind):
            yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not isinstance(
            statement, kind
        ):
            continue
        for name in _BLOCK_FIELDS:
            block = _block(statement, name)
            if isinstance(block, list):
                pending.extend(b for b in block if isinstance(b, (ast.stmt, ast.ExceptHandler, ast.match_case)))


#: Statements whose lines are searched through their own statements (a block's header is searched with it).
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of *statement* outside the blocks it holds (those are statements of their own)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        yield node
        statement_node = isinstance(node, ast.stmt)
        for name in node._fields:
            if statement_node and name in _BLOCK_FIELDS:
                continue
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                pending.append(value)
            elif isinstance(value, list):
                pending.extend(v for v in value if isinstance(v, ast.AST))


def _parameter_of(statement: ast.stmt, function: ast.AST | None) -> tuple[ast.AST, str, ast.expr | None] | None:
    """(the ``__init__``, the parameter, its default) when *statement* is ``self.x = <a parameter>`` there."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name != "__init__":
        return None
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or not isinstance(statement.value, ast.Name):
        return None
    found = _default_of(function, statement.value.id)
    return (function, statement.value.id, found[0]) if found is not None else None


def _default_of(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[ast.expr | None] | None:
    """(its default) when *name* is a named parameter of *function* other than ``self``; None when it is not."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, ast.expr | None] = {p.arg: None for p in [*positional, *arguments.kwonlyargs]}
    defaults.update(zip([p.arg for p in positional][-len(arguments.defaults) :], arguments.defaults, strict=False))
    defaults.update({p.arg: d for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d})
    if name not in defaults or name == "self":
        return None
    return (defaults[name],)


def _is_super(call: ast.Call) -> bool:
    """``super().__init__(...)``."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and chain_of(func.value.func) == ["super"]
    )


def _passed(
    call: ast.Call, init: ast.FunctionDef | ast.AsyncFunctionDef | None, name: str, bound: bool = True
) -> ast.expr | bool | None:
    """What a construction passes for parameter *name* of *init* (the class's ``__init__``; any function, with
    *bound* False for one called without ``self``): the argument (a keyword, or the positional one at its
    place), a Starred ``*args``/``**kwargs`` through which it passes it, None when it passes nothing for it,
    True when that cannot be told."""
    keyword = next((k for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword.value
    mapping = next((k.value for k in call.keywords if k.arg is None), None)
    if init is None:
        return True if mapping is not None or call.args else None
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1 if bound else 0 :]  # without self
    if name in positional:
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return argument if index <= positional.index(name) else None
            if index == positional.index(name):
                return argument
    elif name not in {a.arg for a in init.args.kwonlyargs}:  # only through the __init__'s *args or **kwargs
        if init.args.vararg is not None and (
            len(call.args) > len(positional) or any(isinstance(a, ast.Starred) for a in call.args)
        ):
            return True
        if init.args.kwarg is None:
            return None
    return ast.Starred(mapping, ast.Load()) if mapping is not None else None


def _held(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, key: str) -> list[ast.expr] | None:
    """The values local dict *name* of *function* may hold under *key*, when the function builds it as a literal
    (``dict(k=v)``, ``{"k": v}``) and fills it only under literal keys (``name["k"] = v``, ``name.update(k=v)``,
    ``name.setdefault("k", v)``); None when it is a parameter or built or filled any other way."""
    if name in _parameters(function):
        return None
    values: list[ast.expr] = []
    built = False
    for node in ast.walk(function):
        for target in _targets(node) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else []:
            assert isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            mine = chain_of(target.value) == [name] if isinstance(target, ast.Subscript) else False
            if isinstance(target, ast.Name) and target.id == name or mine and isinstance(node, ast.AugAssign):
                entries = _literal_entries(node.value) if not isinstance(node, ast.AugAssign) else None
                if entries is None:
                    return None
                values += [value for k, value in entries if k == key]
                built = True
            elif mine:
                assert isinstance(target, ast.Subscript)
                if not (isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                    return None
                values += [node.value] if target.slice.value == key and node.value is not None else []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and chain_of(node.func.value) == [name]:
            method = node.func.attr
            if method == "update" and not node.args and all(k.arg is not None for k in node.keywords):
                values += [k.value for k in node.keywords if k.arg == key]
            elif method == "setdefault" and len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
                values += [node.args[1]] if node.args[0].value == key else []
            elif method not in ("get", "pop", "items", "keys", "values", "copy"):
                return None
    return values if built else None


def _literal_entries(node: ast.expr | None) -> list[tuple[str, ast.expr]] | None:
    """The (key, value) entries of ``dict(k=v, ...)`` or ``{"k": v, ...}``; None for any other expression."""
    if isinstance(node, ast.Call) and chain_of(node.func) == ["dict"] and not node.args:
        if any(k.arg is None for k in node.keywords):
            return None
        return [(k.arg, k.value) for k in node.keywords if k.arg is not None]
    if isinstance(node, ast.Dict):
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in node.keys]
        if any(k is None for k in keys):
            return None
        return [(str(k), value) for k, value in zip(keys, node.values, strict=True)]
    return None


def _kept_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether *name* is a named parameter of *function* that the function never assigns again."""
    if _default_of(function, name) is None:
        return False
    return not any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    )


def _union(node: ast.expr) -> list[str]:
    """The class names of ``A | B`` or ``(A, B)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(node.left) + _union(node.right)
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _union(element)]
    chain = chain_of(node)
    return chain[-1:] if chain else [_text(node)]


def _targets(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return [statement.target]
    return []


def _record_class(node: ast.ClassDef) -> bool:
    """Whether a class is a record of fields built by keyword: a dataclass, a ``msgspec.Struct``."""
    decorators = [(chain_of(d if not isinstance(d, ast.Call) else d.func)[-1:] or [""])[0] for d in node.decorator_list]
    return "dataclass" in decorators or any(chain_of(b)[-1:] == ["Struct"] for b in node.bases)


def _unpacked(statement: ast.stmt, attr: str) -> int | None:
    """The position of ``self.attr`` in the tuple an assignment unpacks (``a, self.attr = f()``), if it is one."""
    for target in _targets(statement):
        if isinstance(target, (ast.Tuple, ast.List)):
            for position, element in enumerate(target.elts):
                if isinstance(element, ast.Attribute) and chain_of(element) == ["self", attr]:
                    return position
    return None


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


def _stored(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)} | {
            n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    if isinstance(node, ast.While):
        return {
            n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return {
            n.id for i in node.items if i.optional_vars for n in ast.walk(i.optional_vars) if isinstance(n, ast.Name)
        }
    if isinstance(node, ast.NamedExpr):
        return {node.target.id}
    return set()


def _parameters(function: ast.AST) -> set[str]:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def _owner_classes(owner: str, scope: _Scope) -> list[str]:
    """The classes whose writes an attribute read on *owner* means: for ``self`` the reading class and its bases;
    else the class the owner's name spells (``model_config``: ``ModelConfig``) and the one its annotation names
    (``kvc: KVCacheConfigurator``); none without an owner."""
    if owner == "self":
        if scope.cls is None:
            return []
        return list(dict.fromkeys([scope.cls.name, *(chain_of(b)[-1] for b in scope.cls.bases if chain_of(b))]))
    if not owner:
        return []
    spelt = "".join(word.capitalize() for word in owner.split("_"))
    return list(dict.fromkeys([spelt, *_annotated(scope.function, owner)]))


def _annotated(function: ast.AST | None, name: str) -> list[str]:
    """The class a parameter *name* of *function* is annotated with (``kvc: KVCacheConfigurator``), if any."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    arguments = function.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if argument.arg == name and argument.annotation is not None:
            annotation = argument.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                return [annotation.value.strip()]
            spelt = chain_of(annotation)
            return spelt[-1:]
    return []


def _typed(values: Mapping[str, Any], profile: Words) -> dict[str, Any]:
    """A config's element types as the tensor library's (Hugging Face's configs turn ``"torch_dtype":
    "bfloat16"`` into ``torch.bfloat16`` when they load), in nested configs too."""
    module = min(profile.tensor_modules, default="")
    typed: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            value = _typed(value, profile)
        elif key in _ALIASES and isinstance(value, str) and value in profile.dtypes and module:
            value = Dtype(module, value, profile.dtypes[value])
        typed[key] = value
    return typed


def _bound(env: Mapping[str, Value | _Lazy] | None, name: str) -> bool:
    """Whether *name* holds a decided value in the running body (a parameter or a local); an undecided parameter
    is still known by its annotation."""
    return env is not None and name in env and isinstance(_force(env[name]), Known)


def _bound_receiver(env: Mapping[str, Value | _Lazy] | None, name: str) -> bool:
    """Whether ``self``/``cls`` is bound to a decided class or enum member (a method run on one), whose
    attributes are its own, not the tree's writes of them."""
    value = env.get(name) if env is not None and name in _SELF else None
    return isinstance(value, Known) and isinstance(value.value, (ClassRef, Member, Instance))


def _expression(source: str) -> ast.expr | Unknown:
    """*source* parsed as an expression (a condition that binds, ``if x := f():``, as its parentheses make it
    one); an Unknown naming it when it is none."""
    for text in (source.strip(), f"({source.strip()})"):
        try:
            return ast.parse(text, mode="eval").body
        except SyntaxError:
            continue
    return Unknown((source.strip(),))


def _takes_self(function: ast.AST, owner: ast.ClassDef | None) -> bool:
    """Whether a call of *function* passes its first parameter itself (a method of *owner* not static)."""
    return owner is not None and _kind(function) != "static"


def _kind(function: ast.AST) -> str:
    """``static``, ``class`` or ``instance``: how a method is bound, by its decorators."""
    names = {(chain_of(d)[-1:] or [""])[0] for d in getattr(function, "decorator_list", ())}
    return "static" if "staticmethod" in names else "class" if "classmethod" in names else "instance"


def _member(receiver: Known, name: str) -> Value:
    value = receiver.value
    if isinstance(value, ModelConfig):
        return value.get(name)
    if isinstance(value, dict) and name in ("keys", "values", "items"):
        return Unknown((name,))
    if hasattr(type(value), name) and not callable(getattr(type(value), name)):
        return Known(getattr(value, name), receiver.why)
    return Unknown((name,))


def _apply(function: Callable[[Any, Any], Any], left: Value, right: Value) -> Value:
    if isinstance(left, Unknown) or isinstance(right, Unknown):
        needs = [
            *(left.needs if isinstance(left, Unknown) else ()),
            *(right.needs if isinstance(right, Unknown) else ()),
        ]
        return Unknown(tuple(dict.fromkeys(needs)))
    if _too_large(function, left.value, right.value):
        return Unknown(("a value too large to follow",))
    result = _as_run(function, left.value, right.value)
    if isinstance(result, (str, list, tuple, set, dict)) and len(result) > _MAX_SIZE:
        return Unknown(("a value too large to follow",))
    return Known(result, tuple(dict.fromkeys((*left.why, *right.why))))


def _too_large(function: Callable[[Any, Any], Any], left: Any, right: Any) -> bool:
    """Whether an operation would build a value too large to follow (before it is built)."""
    sized = (str, bytes, list, tuple)
    if function is operator.mul:
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, sized) and isinstance(times, int) and len(seq) * max(times, 0) > _MAX_SIZE:
                return True
    if function in (operator.pow, operator.lshift) and isinstance(right, int) and not isinstance(right, bool):
        return abs(right) > 4096 and isinstance(left, int) and abs(left) > 1
    return False


def _and(left: Value, right: Value) -> Value:
    if isinstance(left, Known) and not left.value:
        return left
    if isinstance(right, Known) and not right.value:
        return right
    if isinstance(left, Unknown) or isinstance(right, Unknown):
        return _apply(lambda a, b: a and b, left, right)
    return Known(True, tuple(dict.fromkeys((*left.why, *right.why))))


def _why(value: Value, why: tuple[str, ...]) -> Value:
    return Known(value.value, tuple(dict.fromkeys((*why, *value.why)))) if isinstance(value, Known) else value


def _agreed(values: Sequence[Value]) -> Known:
    """The value several writes agree on, with the reasons of them all: the facts that decided them first (an
    environment default, a server argument), then the places (``path:line``)."""
    first = values[0]
    assert isinstance(first, Known)
    why = list(dict.fromkeys(w for v in values if isinstance(v, Known) for w in v.why))
    facts = [w for w in why if not _PLACE.search(w)]
    return Known(first.value, tuple([*facts, *(w for w in why if w not in facts)][:MAX_WHY]))


#: A reason that is a place of the code (``path:line``, ``f() at path:line``), not a fact.
_PLACE = re.compile(r":\d+\Z")
#: Reasons kept for a value several writes agree on.
MAX_WHY = 16


#: Where a run of a function keeps the last statement that may have changed an object its locals hold (a number
#: of its own for each such statement run: the same number, no change between).
_CHANGES = "\0changes"
_CHANGED = itertools.count(1)
#: Comparisons an undecided value decides with itself (NaN aside): what they give.
_IDENTITY: dict[type, bool] = {ast.Eq: True, ast.Is: True, ast.NotEq: False, ast.IsNot: False}


def _one_value(lazy: _Lazy) -> Value:
    """A name's value: undecided, it is still one value (every read of the name until it is bound again)."""
    value = lazy.force()
    return dataclasses.replace(value, same=Same()) if isinstance(value, Unknown) and value.same is None else value


def _one(left: Unknown, right: Unknown) -> bool:
    return left.same is not None and left.same == right.same


def _changes(statement: ast.stmt) -> bool:
    """Whether *statement* (its own expressions, not the blocks it holds; a loop's whole body) may change an object a
    local holds: an assignment to an attribute or item of it, a call it is passed to or called on (``self`` and
    ``cls`` aside: an object they hold is not a local's)."""
    looped = isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
    nodes = ast.walk(statement) if looped else _expressions(statement)
    for node in nodes:
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if _root_name(node) not in (None, *_SELF):
                return True
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and _root_name(node.func.value) not in (None, *_SELF):
                return True
            for argument in (*node.args, *(k.value for k in node.keywords)):
                inner = argument.value if isinstance(argument, ast.Starred) else argument
                if isinstance(inner, ast.Name) and inner.id not in _SELF:
                    return True
    return False


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``a`` of ``a.b[0].c``), None for another start."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _same(one: Value, other: Value) -> bool:
    if isinstance(one, Known) and isinstance(other, Known):
        try:
            return bool(one.value == other.value) and type(one.value) is type(other.value)
        except (TypeError, ValueError):
            return False
    return False


def _truthy(value: Value, needs: list[str]) -> bool:
    if isinstance(value, Unknown):
        needs += value.needs
        return False
    return bool(value.value)


def _unknown_op(left: Any, right: Any) -> Any:
    raise _Raises("an operator the evaluator does not follow")


class _Raises(Exception):
    """An operation on the program's values fails as it would when the program runs (``None + 1``,
    ``{}["k"]``, ``int("x")``): the value is unknown. Raised only by :func:`_as_run`, so that an exception of
    the evaluator's own is never taken for one."""


#: What an operation on the program's values may raise, as the program would.
_PROGRAM_ERRORS = (TypeError, ValueError, ArithmeticError, LookupError, AttributeError)


def _as_run(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """*function* applied to values of the program, its failure as the program's (``_Raises``)."""
    try:
        return function(*args, **kwargs)
    except _PROGRAM_ERRORS as exc:
        raise _Raises(f"{type(exc).__name__}: {exc}") from None


def _no_method(*args: Any) -> Any:
    raise _Raises("no such method")


def _env_value(kind: str, text: str, default: Any) -> Any:
    lowered = kind.lower()
    if "bool" in lowered or isinstance(default, bool):
        return text.strip().lower() in ("1", "true", "yes", "y", "on")
    if "int" in lowered or isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            return text
    if "float" in lowered or isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            return text
    return text
