"""What a release loads before it measures the memory its pool is sized from: the order of start-up, read.

The free memory the sizing sees is what is left after every weight load that
runs before it. The functions that load weights are those that print the log's
weights-end line (the run table's ``load_end`` message, as the code writes
it: :func:`loaders`). The graph stage records the calls that run them, up to
the tree's entry points (``LOADS``), as it records those that run the
formula's functions (``REACH``). From the sizing function up, through every
recorded way in, each calling function's calls *before* the call on the way
that lead to a weight load are counted; the least count over the ways that
load anything at all is what the first sizing of a start-up sees. One: the
release sizes the target's pool right after the target's weights. Two: another
model's weights (a speculative draft's) are loaded first, and come out of the
target's pool.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sgtrace.analyses.evaluate import Code, chain_of
from sgtrace.analyses.reached import Call, Holds, Key, Paths
from sgtrace.model import SourceFile
from sgtrace.parse import read_bytes
from sgtrace.run.messages import by_name, known

#: Loads counted at most (more says nothing more: a draft's come first).
MOST = 3
#: Calls up from the sizing function.
MAX_UP = 16


@dataclass(frozen=True)
class Load:
    """A call that runs a weight load before the pool is sized."""

    #: Where the call is: ``path:line``.
    where: str
    #: The function it is in.
    function: str


@dataclass(frozen=True)
class Order:
    """The weight loads that run before the release measures the memory its pool is sized from."""

    #: The loads before the sizing on the way with the fewest (the first is the target's), outermost first.
    before: tuple[Load, ...]
    #: The sizing function they come before: ``path:qualname``.
    sizing: str

    @property
    def draft_first(self) -> bool:
        """Whether another model's weights (a draft's) load before the target's pool is sized."""
        return len(self.before) >= 2


def draft_source(line: int) -> str:
    """Where the draft's weights figure came from: a line of the log, or ``--set draft_weights_gb`` (line 0)."""
    return f"line {line}" if line else "--set draft_weights_gb"


def loaders(files: Sequence[SourceFile]) -> list[Key]:
    """(path, qualname) of the functions that print the weights-end line (as the run table knows its forms)."""
    literal = by_name("load_end").literal.strip()
    needle = literal.encode()
    found: list[Key] = []
    for source in files:
        try:
            data = read_bytes(source.abspath)
        except OSError:
            continue
        if needle not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node, owner in _functions(tree):
            if any(literal in text and getattr(known(text), "name", "") == "load_end" for text in _texts(node)):
                found.append((source.path, f"{owner}.{node.name}" if owner else node.name))
    return found


def loads_before_sizing(
    code: Code, functions: Sequence[Key], reach: Paths | None, loads: Paths | None, holds: Holds | None = None
) -> Order | None:
    """The order of start-up before the formula's first sizing function (*functions*: the formula's, in the
    order of its statements), None when it cannot be read (no recorded load, no recorded way in).

    A class built through a factory (``cls = algorithm.create_worker(); cls(...)``) is a load when a class
    the factory returns loads weights when built. With *holds* (the run's conditions, evaluated), a call whose
    condition is false for the run is no way in and no load: a release that sizes the target's pool early
    only for another speculative algorithm (``if spec_algorithm.is_frozen_kv_mtp(): ...``) sizes it, for
    this run, where its other way says."""
    if reach is None or loads is None or not functions:
        return None
    leading: dict[Key, list[Call]] = {}
    for calls in loads.callers.values():
        for call in calls:
            leading.setdefault((call.path, call.function), []).append(call)
    for calls in loads.built.values():
        for call in calls:
            leading.setdefault((call.path, call.function), []).append(call)
    loading = {key[1].rsplit(".", 2)[-2] for key in loads.callers if key[1].endswith(".__init__")}
    ways = _Ways(reach, leading, _Factories(code, loading), holds)
    for key in dict.fromkeys(functions):
        # what runs first, from the first entry that is the program's: a benchmark's, an example's or a
        # test's way in builds the same workers in its own order, which says nothing of the program's; nor
        # does another program of the package that builds them (a diffusion pipeline beside the server)
        found = [way for way in ways.up(key, ()) if not _aside(way.root[0])]
        if found:
            first = min(
                found, key=lambda w: (-_kin(_package(code, w.root[0]), _package(code, key[0])), w.root, w.lines)
            )
            return Order(tuple(first.loads), f"{key[0]}:{key[1]}")
    return None


#: Folders of a path that name its program (``sglang/srt``: the package and its part).
PROGRAM_DEPTH = 2


def _kin(entry: list[str], sizing: list[str]) -> int:
    """How many of the packages that name the sizing's program (at most PROGRAM_DEPTH) *entry* shares: a way in
    from the sizing's own part of the package (``sglang.srt.managers`` for a sizing in ``sglang.srt.mem_cache``)
    is its program's, one from another part (``sglang.multimodal_gen``) is not."""
    return len(os.path.commonprefix([entry, sizing[:PROGRAM_DEPTH]]))


def _package(code: Code, path: str) -> list[str]:
    """The packages a module is in, by its dotted name (a checkout's ``python/sglang/srt/x.py`` is in ``sglang``,
    ``srt``, as the wheel's ``sglang/srt/x.py``), else by its path's folders."""
    source = code.by_path.get(path)
    if source is not None and source.module:
        return source.module.split(".")[:-1]
    return path.split("/")[:-1]


@dataclass(frozen=True)
class _Way:
    """One way from an entry point down to a function: the entry, the call lines on it, the loads before."""

    root: Key
    lines: tuple[int, ...]
    loads: tuple[Load, ...]


#: Ways kept per function (the first in the order they run, by their call lines).
MAX_WAYS = 64


class _Ways:
    def __init__(
        self, reach: Paths, leading: dict[Key, list[Call]], factories: _Factories, holds: Holds | None
    ) -> None:
        self.reach = reach
        self.leading = leading
        self.factories = factories
        self.holds = holds
        self._memo: dict[Key, list[_Way]] = {}

    def up(self, key: Key, stack: tuple[Key, ...]) -> list[_Way]:
        """The ways from an entry point down to *key*, with the loads before it on each (a function whose
        callers were not followed ends no way: it is no known entry)."""
        if key in self._memo:
            return self._memo[key]
        if key in stack or len(stack) > MAX_UP or key not in self.reach.callers:
            return []
        callers = self.reach.callers[key]
        if not callers:
            return [_Way(key, (), ())]
        found: list[_Way] = []
        for call in callers:
            if not self._runs(call):
                continue
            here = tuple(self._before(call))
            for above in self.up((call.path, call.function), (*stack, key)):
                found.append(_Way(above.root, (*above.lines, call.line), (*above.loads, *here)[:MOST]))
        found = sorted(found, key=lambda way: (way.root, way.lines))[:MAX_WAYS]
        if not any(k in self._memo for k in stack):
            self._memo[key] = found
        return found

    def _before(self, call: Call) -> list[Load]:
        """The calls of *call*'s function, before it, that lead to a weight load (one a line)."""
        leading = self.leading.get((call.path, call.function), ())
        lines = {c.line for c in leading if c.line < call.line and self._runs(c)}
        lines.update(self.factories.builds(call.path, call.function, call.line))
        return [Load(f"{call.path}:{line}", call.function) for line in sorted(lines)]

    def _runs(self, call: Call) -> bool:
        """Whether *call* may run for the run: none of its conditions is known to be false."""
        if self.holds is None:
            return True
        return not any(self.holds(text, call.path, call.line)[0] is False for text in call.guard)


class _Factories:
    """Classes built through a local that a factory's call gave (``cls = f(); cls(...)``), read with ``ast``."""

    def __init__(self, code: Code, loading: set[str]) -> None:
        self.code = code
        #: Names of the classes whose construction leads to a weight load.
        self.loading = loading
        self._returns: dict[str, set[str]] = {}

    def builds(self, path: str, qualname: str, before: int, depth: int = 0) -> set[int]:
        """Lines of *qualname*'s statements before line *before* that build a loading class from a factory,
        there or in a method of its class they call (``self.maybe_init_draft_worker()``)."""
        function = _function(self.code, path, qualname)
        if function is None or not self.loading or depth > MAX_FACTORY_DEPTH:
            return set()
        owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        made: dict[str, str] = {}  # local -> the factory called for it
        lines: set[int] = set()
        for node in sorted(ast.walk(function), key=lambda n: getattr(n, "lineno", 0)):
            if getattr(node, "lineno", before) >= before:
                continue
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                factory = chain_of(node.value.func)
                for target in node.targets:
                    if isinstance(target, ast.Name) and factory:
                        made[target.id] = factory[-1]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in made:
                if self._returns_of(made[node.func.id]) & self.loading:
                    lines.add(node.lineno)
            elif (
                isinstance(node, ast.Call)
                and owner
                and (chain := chain_of(node.func))[:1] == ["self"]
                and len(chain) == 2
            ):
                if self.builds(path, f"{owner}.{chain[1]}", 1 << 30, depth + 1):
                    lines.add(node.lineno)
        return lines

    def _returns_of(self, name: str) -> set[str]:
        """The class names the tree's functions of that name return (``return EAGLEWorker``)."""
        if name not in self._returns:
            found: set[str] = set()
            definitions = self.code.definitions(name)
            for _, node in definitions[:MAX_FACTORIES]:
                for item in ast.walk(node):
                    if isinstance(item, ast.Return) and item.value is not None and (chain := chain_of(item.value)):
                        found.add(chain[-1])
            self._returns[name] = found
        return self._returns[name]


#: Methods followed down from a way's function to find a factory's construction.
MAX_FACTORY_DEPTH = 3
#: Functions of one name read as a factory (a name defined more often is not followed).
MAX_FACTORIES = 4


#: Folders whose code drives the program from the side (benchmarks, examples, scripts), not its own way in.
_ASIDE = frozenset({
    "bench", "benchmark", "benchmarks", "example", "examples", "script", "scripts", "tools", "test", "tests",
})  # fmt: skip


def _aside(path: str) -> bool:
    """Whether *path* is in a benchmark's, an example's, a script's or a test's folder, or is a module named as
    one (``bench_one_batch.py``, ``auto_benchmark.py``)."""
    *folders, name = path.split("/")
    return not _ASIDE.isdisjoint([*folders, *name.removesuffix(".py").split("_")])


def _function(code: Code, path: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = code.tree(path)
    for node, owner in _functions(tree) if tree is not None else ():
        if (f"{owner}.{node.name}" if owner else node.name) == qualname:
            return node
    return None


def _functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, ""
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield item, node.name


def _texts(function: ast.AST) -> Iterator[str]:
    """The strings a function writes, f-strings with ``{}`` for their fields (as the run table's forms)."""
    for node in ast.walk(function):
        if isinstance(node, ast.JoinedStr):
            yield "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
