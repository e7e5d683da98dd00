"""Stage 3 (index): a lazy index of a whole tree -- modules, imports, classes, MRO, functions.

Nothing is parsed up front. Discovery lists the files; a file is parsed
(tree-sitter, for its outline) the first time a question needs it, and a
function body is read from that tree-sitter tree the first time a slice
reaches it (libcst only words syntax errors: :mod:`sgtrace.parse`). Questions that
need the whole tree, such as "which classes inherit from this mixin?", first
narrow it with a byte search for the name.
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sgtrace.cache import TreeDigest
from sgtrace.discover import Listing
from sgtrace.index.body import ReadBodies, read_body, read_statement
from sgtrace.index.chunks import Parses, Workers
from sgtrace.index.exprs import DEPTH, NestingError
from sgtrace.index.identifiers import IdentifierIndex
from sgtrace.index.outline import outline
from sgtrace.index.packing import pack_body, unpack_body
from sgtrace.index.prefetch import Outlined, outline_file
from sgtrace.index.store import ContentStore, ModuleEntry, content_digest, error_of
from sgtrace.model import FileError, SourceFile
from sgtrace.parse import first_child_ending_after, parse, parse_range, parse_tree, read_bytes, source
from sgtrace.records import Assignment, Body, ClassDef, Expr, Function, Outline


@dataclass(frozen=True, slots=True)
class Module:
    """A module of the tree and what it defines."""

    #: Its file.
    source: SourceFile
    #: Its outline.
    outline: Outline
    #: Its UTF-8 text (tree-sitter byte ranges refer to it).
    data: bytes
    #: pattern -> sorted offsets where it matches (filled on demand).
    found: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)

    def matches(self, pattern: str) -> list[int]:
        """Sorted start offsets of *pattern* in the text (searched once per pattern)."""
        if pattern not in self.found:
            self.found[pattern] = [m.start() for m in compiled(pattern).finditer(self.data)]
        return self.found[pattern]


#: Byte searches of a tree kept in the store, past which a run keeps only its own (a slice asks 150 to
#: 500: the searches of ten to thirty queries, not of every query ever asked of the tree).
MENTIONS_KEPT = 5_000

#: Source bytes whose tree-sitter trees are kept (a tree takes about 19 times its source: measured on
#: the 217 largest modules of SGLang 0.5.23's srt, 17 MB of source, 327 MiB of trees).
TREE_BYTES = 4 << 20


def write_pattern(name: str) -> str:
    """Regex for a place that may write ``.name``: ``.name =``, ``.name += ``, ``.name: T =``, ``.name,``."""
    operators = r"(?:[-+*/%&|^@]|//|\*\*|<<|>>)?"
    return rf"\.{re.escape(name)}\b\s*(?:[,)\]]|(?::[^=\n]*)?{operators}=(?!=))"


def call_pattern(name: str) -> str:
    """Regex for a place that may call *name*: ``name(`` or ``.name(``."""
    return rf"\b{re.escape(name)}\s*\("


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> re.Pattern[bytes]:
    """A byte regex, compiled once."""
    return re.compile(pattern.encode("utf-8"))


def contains(module: Module, function: Function, pattern: str) -> bool:
    """Whether the function's source matches *pattern* (a cheap filter before reading its body)."""
    positions = module.matches(pattern)
    index = bisect.bisect_left(positions, function.start)
    return index < len(positions) and positions[index] < function.end


class Project:
    """The tree under one root, indexed on demand."""

    def __init__(
        self,
        listing: Listing,
        store: ContentStore | None = None,
        identifiers: IdentifierIndex | None = None,
        digests: dict[str, bytes] | None = None,
        depth: int = DEPTH,
        workers: Workers | None = None,
        parses: Parses | None = None,
        read_bodies: ReadBodies | None = None,
    ):
        #: What is learnt of each file, by its content (outlines and bodies are read from it and kept in it).
        self.store = store or ContentStore(None)
        #: Module -> the content digest of its file, as find's pass took it (else taken on load).
        self._digests = dict(digests or {})
        #: Module -> its entry in the store, as loaded or made this run; and the modules whose entry grew.
        self._entries: dict[str, ModuleEntry] = {}
        self._grown: set[str] = set()
        #: Levels of nested blocks and expressions read; a file nested deeper is an error (NestingError).
        self.depth = depth
        self._too_deep: set[str] = set()
        self.errors: list[FileError] = list(listing.errors)
        self.files: dict[str, SourceFile] = {}
        for item in listing.files:
            self.files.setdefault(item.module, item)
        #: Module -> bytes, read on first use.
        self._raw: dict[str, bytes | None] = {}
        self._modules: dict[str, Module | None] = {}
        self._bodies: dict[tuple[str, str], Body] = {}
        self._assigned: dict[tuple[str, str], dict[str, tuple[Assignment, ...]]] = {}
        self._mentions: dict[str, tuple[str, ...]] = {}
        #: The byte searches an earlier run of this tree stored (None until first asked), and whether this
        #: run made new ones.
        self._stored: dict[str, list[int]] | None = None
        self._searched = False
        self._sorted: list[str] | None = None
        self._tree_digest: bytes | None = None
        self._unlisted = bool(listing.errors)
        self._subclasses: dict[str, frozenset[str]] = {}
        #: Memos of what each class is, its bases and its linearisation (deep and wide hierarchies ask often).
        self._classes: dict[str, tuple[Module, ClassDef] | None] = {}
        self._bases: dict[str, tuple[str, ...]] = {}
        self._mros: dict[str, tuple[str, ...]] = {}
        self._direct: dict[str, frozenset[str]] = {}
        self._trees: dict[str, Any] = {}
        self._tree_bytes = 0
        self._callers: dict[str, tuple[str, ...]] = {}
        self._methods: dict[str, tuple[tuple[Module, Function], ...]] = {}
        self._identifiers = identifiers
        #: The run's worker processes (for :meth:`prefetch`), and the modules handed to them.
        self._workers = workers
        self._pending: dict[str, Future[Outlined | None]] = {}
        #: The files find's pass parsed in this process (taken, not parsed again).
        self._parses = parses or Parses()
        #: The bodies this process read in the trees before (when it reads trees in turn).
        self._read_bodies = read_bodies
        if read_bodies is not None:
            read_bodies.begin()

    # -- files and modules -------------------------------------------------

    def raw(self, module: str) -> bytes | None:
        """The bytes of a module's file, or None if it cannot be read."""
        if module not in self._raw:
            source = self.files.get(module)
            data = None
            if source is not None:
                try:
                    data = read_bytes(source.abspath)
                except OSError as exc:
                    self.errors.append(FileError(source.path, 0, f"cannot read file: {exc.strerror}"))
            self._raw[module] = data
        return self._raw[module]

    def module(self, name: str) -> Module | None:
        """A module of the tree, parsed for its outline on first use; None if not in the tree."""
        if name not in self._modules:
            self._modules[name] = self._load(name)
        return self._modules[name]

    def prefetch(self, names: Iterable[str]) -> None:
        """Hand the modules about to be loaded (not loaded yet, not in the store) to the workers to parse."""
        if self._workers is None or self._workers.inline:
            return
        for name in names:
            source = self.files.get(name)
            if source is None or name in self._modules or name in self._pending:
                continue
            content = self._digests.get(name)
            if content is not None and self.store.has_module(content, self.depth):
                continue
            self._pending[name] = self._workers.submit(outline_file, source.abspath, source.path, self.depth)

    def _load(self, name: str) -> Module | None:
        data = self.raw(name)
        if data is None:
            return None
        source = self.files[name]
        content = self._digests.get(name) or self._digests.setdefault(name, content_digest(data))
        entry = self.store.module(content, self.depth, source.path)
        if entry is not None:
            try:
                module = Module(source, entry.outline, cached_text(data))
            except (UnicodeError, SyntaxError, LookupError):
                module = None
            if module is not None:
                error = error_of(entry, source.path)
                if error is not None:
                    self.errors.append(error)
                self._entries[name] = entry
                return module
        pending = self._pending.pop(name, None)
        outlined = pending.result() if pending is not None else None
        if outlined is not None:
            return self._outlined(name, source, data, outlined)
        parsed = self._parses.take(source.path, content) or parse(source.path, data)
        if isinstance(parsed, FileError):
            self.errors.append(parsed)
            return None
        if parsed.error is not None:
            self.errors.append(parsed.error)
        self._keep(name, parsed.tree)
        try:
            result = outline(parsed.tree, self.depth)
        except NestingError as exc:
            self._nested(source.path, exc)
            return None
        located = (parsed.error.line, parsed.error.message) if parsed.error is not None else None
        self._entries[name] = ModuleEntry(result, located)
        self._grown.add(name)
        return Module(source, result, parsed.data)

    def _outlined(self, name: str, source: SourceFile, data: bytes, outlined: Outlined) -> Module | None:
        """A module a worker parsed (as :meth:`_load` would have, but with no tree kept)."""
        if outlined.error is not None:
            self.errors.append(outlined.error)
        if outlined.nested is not None:
            self._nested(source.path, NestingError(outlined.nested))
        if outlined.outline is None:
            return None
        error = outlined.error
        self._entries[name] = ModuleEntry(outlined.outline, (error.line, error.message) if error else None)
        self._grown.add(name)
        return Module(source, outlined.outline, cached_text(data))

    def save(self) -> None:
        """Keep in the store what this run learnt of each module (its outline, the bodies read)."""
        for name in sorted(self._grown):
            self.store.put_module(self._digests[name], self.depth, self._entries[name])
        self._grown.clear()
        tree = self._tree_key() if self._searched else None
        if tree is not None:
            where = {module: n for n, module in enumerate(self._order())}
            earlier = self._stored if self._stored is not None and len(self._stored) < MENTIONS_KEPT else {}
            found = {**earlier, **{p: [where[m] for m in ms] for p, ms in self._mentions.items()}}
            self.store.put_mentions(tree, found)
            self._stored, self._searched = found, False

    def matching(self, pattern: str) -> tuple[str, ...]:
        """Modules whose bytes match the regular expression *pattern* (searched once, remembered).

        Each word of the pattern (a run of three or more identifier characters outside an escape) must
        stand in a match as a whole identifier of the source: the rarest of them, by the identifier
        index, narrows the search to the modules that contain it, and a pattern that starts with it is
        tried only where it stands.
        """
        if pattern not in self._mentions:
            if self._stored is None:
                self._stored = self._stored_mentions()
            positions = self._stored.get(pattern)
            self._mentions[pattern] = (
                self._from_positions(positions) if positions is not None else self._search(pattern)
            )
        return self._mentions[pattern]

    def _search(self, pattern: str) -> tuple[str, ...]:
        """The modules whose bytes match *pattern*, searched now (see :meth:`matching`)."""
        self._searched = True
        regex = compiled(pattern)
        literals = _literals(pattern)
        index = self.identifiers() if literals else None
        literal = min(literals, key=lambda word: len(index.get(word, ()))) if index is not None else ""
        candidates = index.get(literal, ()) if index is not None else tuple(self.files)
        # a pattern that starts with its literal is tried only where the literal stands
        leading = literal and re.match(rf"(?:\\b)?{re.escape(re.escape(literal))}(?![A-Za-z0-9_])", pattern)
        search = _anchored(regex, literal.encode("utf-8")) if leading else regex.search
        found = []
        for module in candidates:
            data = self.raw(module)
            if data is not None and search(data):
                found.append(module)
        return tuple(sorted(found))

    def _tree_key(self) -> bytes | None:
        """What names this tree's byte searches in the store: every module's name and content digest; None when
        a file was not read by find's pass (or could not be listed): what it holds is not known."""
        if self._tree_digest is None:
            self._tree_digest = b""
            if not self._unlisted and len(self._digests) == len(self.files) and self.store.enabled:
                digest = TreeDigest()
                for module in self._order():
                    digest.add_digest(module, self._digests[module])
                self._tree_digest = digest.digest()
        return self._tree_digest or None

    def _stored_mentions(self) -> dict[str, list[int]]:
        tree = self._tree_key()
        found = self.store.mentions(tree) if tree is not None else None
        return found if found is not None else {}

    def _from_positions(self, positions: list[int]) -> tuple[str, ...]:
        order = self._order()
        return tuple(order[n] for n in positions if 0 <= n < len(order))

    def _order(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.files)
        return self._sorted

    def identifiers(self) -> IdentifierIndex:
        """Identifier -> modules that contain it, for the whole tree (built once, on first use)."""
        if self._identifiers is None:
            self._identifiers = IdentifierIndex([(m, self.raw(m) or b"") for m in self._order()])
        return self._identifiers

    def callers_of(self, name: str) -> tuple[str, ...]:
        """Modules that may call *name* (``name(`` or ``.name(``), tests left out."""
        pattern = call_pattern(name)
        if pattern not in self._callers:
            self._callers[pattern] = tuple(m for m in self.matching(pattern) if not is_test_module(m))
        return self._callers[pattern]

    # -- definitions ---------------------------------------------------------

    def split(self, qualified: str) -> tuple[str, str] | None:
        """(module, qualname) of a qualified name defined in the tree, by the longest module prefix."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.files:
                return module, ".".join(parts[cut:])
        return None

    def class_def(self, qualified: str) -> tuple[Module, ClassDef] | None:
        """The class of that qualified name, if the tree defines it."""
        if qualified not in self._classes:
            loaded, name = self._where(qualified)
            found = next((c for c in loaded.outline.classes if c.qualname == name), None) if loaded else None
            self._classes[qualified] = (loaded, found) if loaded is not None and found is not None else None
        return self._classes[qualified]

    def function(self, qualified: str) -> tuple[Module, Function] | None:
        """The function or method of that qualified name, if the tree defines it."""
        loaded, name = self._where(qualified)
        found = next((f for f in loaded.outline.functions if f.qualname == name), None) if loaded else None
        return (loaded, found) if loaded is not None and found is not None else None

    def _where(self, qualified: str) -> tuple[Module | None, str]:
        where = self.split(qualified)
        return (self.module(where[0]), where[1]) if where else (None, "")

    def methods(self, cls: str) -> tuple[tuple[Module, Function], ...]:
        """The methods a class defines itself."""
        if cls not in self._methods:
            found = self.class_def(cls)
            methods: list[tuple[Module, Function]] = []
            if found is not None:
                module, definition = found
                prefix = f"{definition.qualname}."
                for function in module.outline.functions:
                    rest = function.qualname[len(prefix) :]
                    if function.qualname.startswith(prefix) and "." not in rest:
                        methods.append((module, function))
            self._methods[cls] = tuple(methods)
        return self._methods[cls]

    def body(self, module: Module, function: Function) -> Body:
        """How values flow in one function: from the store, else read on first use from the module's tree."""
        memo = (module.source.module, function.qualname)
        if memo not in self._bodies:
            entry = self._entries.get(memo[0])
            where = f"{function.start}:{function.end}"
            stored = entry.bodies.get(where) if entry is not None else None
            body = self._unpacked(stored, module) if stored is not None else None
            if body is None:
                body = self._read(module, function, entry is not None and entry.error is None)
                if entry is not None and body.error != "too deeply nested":
                    entry.bodies[where] = pack_body(body)
                    self._grown.add(memo[0])
            self._bodies[memo] = body
        return self._bodies[memo]

    def assigned(self, module: Module, function: Function, name: str) -> tuple[Assignment, ...]:
        """The assignments of one function that bind local *name*, in order (indexed once per function:
        a function of thousands of assignments is asked of each name it reads)."""
        memo = (module.source.module, function.qualname)
        names = self._assigned.get(memo)
        if names is None:
            grouped: dict[str, list[Assignment]] = {}
            for assignment in self.body(module, function).assignments:
                if assignment.target.kind == "name":
                    grouped.setdefault(assignment.target.name, []).append(assignment)
            names = self._assigned[memo] = {k: tuple(v) for k, v in grouped.items()}
        return names.get(name, ())

    def _read(self, module: Module, function: Function, clean: bool) -> Body:
        """Read the body of *function* (or take it from the bodies this process read, when its module parses
        *clean*: tree-sitter may read a function beside a syntax error otherwise than alone)."""
        known = self._read_bodies if clean else None
        if known is None:
            return self._read_alone(module, function)
        key = ReadBodies.key(module.data, function.start, function.end, self.depth)
        body = known.get(key, function.line)
        if body is None:
            body = self._read_alone(module, function)
            known.put(key, function.line, body)
        return body

    def _read_alone(self, module: Module, function: Function) -> Body:
        node = self._definition(module, function)
        return self._read_body(module, node) if node is not None else Body((), (), (), "not found")

    def _definition(self, module: Module, function: Function) -> Any:
        """The ``def`` node of *function*: from the module's tree when it is kept, else from a parse of the
        function's bytes alone (positions as in the file), else (that parse not clean) from the module's tree."""
        tree = self._trees.get(module.source.module)
        if tree is None:
            node = _definition_in(parse_range(module.data, function.start, function.end), function)
            if node is not None:
                return node
            tree = self._tree(module)
        return _definition_in(tree, function, clean=False)

    @staticmethod
    def _unpacked(stored: Any, module: Module) -> Body | None:
        try:
            return unpack_body(stored)
        except (TypeError, ValueError, RecursionError) as exc:
            print(f"sgtrace: warning: ignoring damaged cache entry for {module.source.path}: {exc}", file=sys.stderr)
            return None

    def _read_body(self, module: Module, node: Any) -> Body:
        try:
            return read_body(node, self.depth)
        except NestingError as exc:
            self._nested(module.source.path, exc)
            return Body((), (), (), "too deeply nested")

    def _statement(self, module: Module, statement: Any) -> tuple[Assignment, ...]:
        """The assignments of one statement (none, and the file reported, if it is nested too deeply)."""
        try:
            return read_statement(statement, self.depth)
        except NestingError as exc:
            self._nested(module.source.path, exc)
            return ()

    def _nested(self, path: str, exc: NestingError) -> None:
        """Report a file nested past the bound (once): it is analysed only where it is not."""
        if path not in self._too_deep:
            self._too_deep.add(path)
            message = f"nested more than {self.depth} levels deep: not analysed there (--max-depth raises the bound)"
            self.errors.append(FileError(path, exc.line, message))

    def global_value(self, module: str, name: str) -> Expr | None:
        """The value last bound to *name* at the top level of *module* (``WORKERS = {...}``), if any."""
        loaded = self.module(module)
        if loaded is None or not loaded.matches(rf"(?m)^{re.escape(name)}\b\s*(?::[^=\n]*)?=(?!=)"):
            return None
        found: Expr | None = None
        for statement in self._tree(loaded).root_node.named_children:
            if statement.type == "expression_statement":
                for assignment in self._statement(loaded, statement):
                    if assignment.target.kind == "name" and assignment.target.name == name:
                        found = assignment.value
        return found

    def writes_matching(self, module: Module, pattern: str) -> list[tuple[Function, Assignment]]:
        """Assignments in the statements where *pattern* matches, with their functions (module level left out).

        Reads one statement per match instead of whole function bodies.
        """
        positions = module.matches(pattern)
        if not positions:
            return []
        starts = [f.start for f in module.outline.functions]
        found: list[tuple[Function, Assignment]] = []
        seen: set[int] = set()
        covered = -1  # the end of the last statement read: later matches inside it are in it (a chain a.x = a.x = ...)
        for position in positions:
            if position < covered:
                continue
            index = bisect.bisect_right(starts, position) - 1
            if index < 0 or position >= module.outline.functions[index].end:
                continue
            definition = self._definition(module, module.outline.functions[index])
            if definition is None:
                continue
            statement = _statement_holding(definition, position)
            if statement is None or statement.type != "expression_statement" or statement.start_byte in seen:
                continue
            seen.add(statement.start_byte)
            covered = statement.end_byte
            found.extend((module.outline.functions[index], a) for a in self._statement(module, statement))
        return found

    def _tree(self, module: Module) -> Any:
        """The module's tree-sitter tree (the last used are kept, up to TREE_BYTES of their sources)."""
        name = module.source.module
        tree = self._trees.get(name)
        if tree is None:
            tree = parse_tree(module.data)
        self._keep(name, tree)
        return tree

    def _keep(self, name: str, tree: Any) -> None:
        """Keep *tree* as the most recently used; drop the least recently used past TREE_BYTES."""
        old = self._trees.pop(name, None)
        if old is not None:
            self._tree_bytes -= old.root_node.end_byte
        self._trees[name] = tree
        self._tree_bytes += tree.root_node.end_byte
        while self._tree_bytes > TREE_BYTES and len(self._trees) > 1:
            oldest = next(iter(self._trees))
            self._tree_bytes -= self._trees.pop(oldest).root_node.end_byte

    # -- names ---------------------------------------------------------------

    def resolve(self, module: str, dotted: str, depth: int = 0) -> str:
        """The qualified name that *dotted* means inside *module* (external names keep their spelling)."""
        head, _, rest = dotted.partition(".")
        loaded = self.module(module)
        if loaded is None or head in ("self", "cls") or depth > 8:
            return dotted
        target = _defined_here(loaded, head, module)
        if target is None:
            imported = [i for i in loaded.outline.imports if i.local == head]
            if not imported:
                return dotted
            target = _absolute(imported[0].target, module, loaded.source.path.endswith("__init__.py"))
            if loaded.source.script:
                target = self._beside_script(module, target)
        qualified = f"{target}.{rest}" if rest else target
        return self._follow_reexport(qualified, depth)

    def _beside_script(self, script: str, target: str) -> str:
        """What a script's ``import target`` names: a module in the script's own folder first, as Python
        runs a script with its folder first on the import path."""
        folder = script.rpartition(".")[0]
        if not folder:
            return target
        beside = f"{folder}.{target}"
        return beside if beside in self.files or self.split(beside) is not None else target

    def _follow_reexport(self, qualified: str, depth: int) -> str:
        """``pkg.Name`` where ``pkg/__init__.py`` only imports Name: the defining module's name."""
        if qualified in self.files:
            return qualified
        where = self.split(qualified)
        if where is None:
            return qualified
        module, name = where
        loaded = self.module(module)
        head = name.split(".")[0]
        if loaded is None or _defined_here(loaded, head, module) is not None:
            return qualified
        if any(i.local == head for i in loaded.outline.imports):
            return self.resolve(module, name, depth + 1)
        return qualified

    # -- classes ---------------------------------------------------------------

    def bases(self, cls: str) -> list[str]:
        """Qualified names of a class's bases."""
        if cls not in self._bases:
            found = self.class_def(cls)
            if found is None:
                self._bases[cls] = ()
            else:
                module, definition = found
                named = (_strip_generic(b) for b in definition.bases)
                self._bases[cls] = tuple(self.resolve(module.source.module, b) for b in named)
        return list(self._bases[cls])

    def mro(self, cls: str) -> list[str]:
        """C3 linearisation, within the tree (external bases end the walk); each class's is worked out once."""
        if cls not in self._mros:
            for klass in _bases_first(self, cls):
                bases = self.bases(klass)
                self._mros[klass] = _c3(klass, [self._mros.get(b, (b,)) for b in bases], bases)
        return list(self._mros[cls])

    def mro_definitions(self, cls: str) -> Iterator[tuple[str, Module, ClassDef]]:
        """(name, module, definition) of each class of the MRO that the tree defines, in MRO order."""
        for klass in self.mro(cls):
            definition = self.class_def(klass)
            if definition is not None:
                yield klass, *definition

    def subclasses(self, cls: str) -> frozenset[str]:
        """Every class in the tree that inherits from *cls*, directly or not (each class's set is made
        once, from its children's: a walk, not a recursion, so a chain of a thousand is as deep as one)."""
        if cls not in self._subclasses:
            order = post_order(cls, self._direct_subclasses, lambda klass: klass in self._subclasses)
            for klass in order:  # each after its children (a child on a cycle of bases adds what it has so far)
                found: set[str] = set()
                for child in self._direct_subclasses(klass):
                    found.add(child)
                    found |= self._subclasses.get(child, frozenset())
                found.discard(klass)
                self._subclasses[klass] = frozenset(found)
        return self._subclasses[cls]

    def _direct_subclasses(self, cls: str) -> frozenset[str]:
        if cls in self._direct:
            return self._direct[cls]
        short = cls.rsplit(".", 1)[-1]
        direct = set()
        subclassing = self.matching(rf"class\s+\w+\s*\([^)]*\b{re.escape(short)}\b")
        self.prefetch(subclassing)
        for module in subclassing:
            loaded = self.module(module)
            if loaded is None:
                continue
            for definition in loaded.outline.classes:
                if any(short in b for b in definition.bases):
                    qualified = f"{module}.{definition.qualname}"
                    if cls in self.bases(qualified):
                        direct.add(qualified)
        self._direct[cls] = frozenset(direct)
        return self._direct[cls]


#: Statements that hold blocks of statements.
_COMPOUND = frozenset({
    "if_statement", "for_statement", "while_statement", "with_statement", "try_statement", "match_statement",
    "function_definition", "class_definition", "decorated_definition",
})  # fmt: skip


def _statement_holding(definition: Any, position: int) -> Any:
    """The innermost statement of *definition* that holds the byte at *position* (None if none does).

    Found going down (tree-sitter's ``Node.parent`` walks down from the root at every step): a child of
    a block is a statement; a simple one holds no other, a compound one is gone into.
    """
    node, found = definition, None
    while node is not None and node.child_count and node.start_byte <= position < node.end_byte:
        child = first_child_ending_after(node, position)
        if child is None or child.start_byte > position:
            break
        if node.type in ("block", "module"):
            found = child
            if child.type not in _COMPOUND:
                break
        node = child
    return found


def _definition_in(tree: Any, function: Function, clean: bool = True) -> Any:
    """The ``function_definition`` node of *function* in *tree*; None if absent (or, with *clean*, if the tree
    has a syntax error or the node is not exactly the function's bytes)."""
    if clean and tree.root_node.has_error:
        return None
    node = tree.root_node.descendant_for_byte_range(function.start, function.end)
    outer = node
    while node is not None and node.type == "decorated_definition":
        node = node.child_by_field_name("definition")
    if clean and (node is None or node.type != "function_definition" or outer.start_byte != function.start
                  or outer.end_byte != function.end):  # fmt: skip
        return None
    return node


def _defined_here(loaded: Module, head: str, module: str) -> str | None:
    if any(c.qualname == head for c in loaded.outline.classes) or any(
        f.qualname == head for f in loaded.outline.functions
    ):
        return f"{module}.{head}"
    return None


def _absolute(target: str, module: str, is_package: bool) -> str:
    """Resolve leading dots of a relative import target against *module*."""
    if not target.startswith("."):
        return target
    dots = len(target) - len(target.lstrip("."))
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (dots - 1)] if dots > 1 else package
    rest = target[dots:]
    return ".".join([*base, rest] if rest else base)


def _strip_generic(base: str) -> str:
    """``Generic[T]`` -> ``Generic``; ``pkg.Base`` stays."""
    return base.split("[", 1)[0].strip()


def post_order(start: str, following: Callable[[str], Iterable[str]], known: Callable[[str], bool]) -> list[str]:
    """*start* and what *following* leads to from it that is not *known* yet, each after all it leads to (a
    walk, not a recursion: a chain of a thousand classes is no deeper than one). A node on a cycle is taken
    as it is met; the node that closes the cycle then counts as known."""
    order: list[str] = []
    visited: set[str] = set()
    stack: list[tuple[str, bool]] = [(start, False)]
    while stack:
        node, after_the_rest = stack.pop()
        if after_the_rest:
            order.append(node)
        elif node not in visited and not known(node):
            visited.add(node)
            stack.append((node, True))
            stack.extend((other, False) for other in following(node))
    return order


def _bases_first(project: Project, cls: str) -> list[str]:
    """The classes of *cls*'s hierarchy whose MRO is not known yet, each after its bases (the first base
    first); a base that closes a cycle of bases counts as a class outside the tree."""
    return post_order(cls, lambda klass: reversed(project.bases(klass)), lambda klass: klass in project._mros)


def _c3(cls: str, linearisations: list[tuple[str, ...]], bases: list[str]) -> tuple[str, ...]:
    """C3's merge of the bases' linearisations and the bases' list, in time linear in their length.

    Each sequence keeps a cursor; a count of the places each class stands in a sequence's tail (behind
    its cursor) says in one look-up whether a head may be taken. An inconsistent hierarchy falls back to
    the first head left, as CPython would refuse but a reader of the code still wants an order.
    """
    if len(bases) == 1:  # single inheritance: the base's order, after the class
        return (cls, *(klass for klass in linearisations[0] if klass != cls))
    sequences = [*linearisations, tuple(bases)]
    cursors = [0] * len(sequences)
    in_tails: dict[str, int] = {}
    for sequence in sequences:
        for klass in sequence[1:]:
            in_tails[klass] = in_tails.get(klass, 0) + 1
    result = [cls]
    taken = {cls}

    def advance(index: int) -> None:
        sequence = sequences[index]
        while cursors[index] < len(sequence) and sequence[cursors[index]] in taken:
            cursors[index] += 1
            if cursors[index] < len(sequence):
                in_tails[sequence[cursors[index]]] -= 1  # it leaves the tail for the head

    for index in range(len(sequences)):
        advance(index)
    while True:
        heads = [sequences[i][cursors[i]] for i in range(len(sequences)) if cursors[i] < len(sequences[i])]
        if not heads:
            return tuple(result)
        head = next((h for h in heads if not in_tails.get(h, 0)), heads[0])
        result.append(head)
        taken.add(head)
        for index in range(len(sequences)):
            advance(index)


def _literals(pattern: str) -> list[str]:
    """The runs of plain identifier characters in a regex (three or more), each a word a match contains."""
    return re.findall(
        r"(?<!\\)[A-Za-z_][A-Za-z0-9_]{2,}", pattern.replace("\\b", " ").replace("\\s", " ").replace("\\w", " ")
    )


def _anchored(regex: re.Pattern[bytes], literal: bytes) -> Callable[[bytes], bool]:
    """A search for *regex*, which starts with *literal*, tried only where the literal's bytes stand."""

    def search(data: bytes) -> bool:
        start = data.find(literal)
        while start >= 0:
            if regex.match(data, start):
                return True
            start = data.find(literal, start + 1)
        return False

    return search


def is_test_module(module: str) -> bool:
    """Test code calls everything with made-up values; data flow from it is noise."""
    return any(part in ("test", "tests", "testing") or part.startswith("test_") for part in module.split("."))


def cached_text(data: bytes) -> bytes:
    """The UTF-8 text tree-sitter parsed, without parsing (as :func:`sgtrace.parse.parse` makes it)."""
    return source(data)[1]
