"""Which calls run the graph's functions, and under which conditions, up to the tree's entry points.

Starts from the functions that may hold a cap whatever the budget knob: those
with a step (write, local, field, return) on the value's chain downstream of a
knob combined with something else (a budget site for some knob) and upstream
of the pool's writes, or with a guarded write that replaces the pool. For
each, the calls of the tree that may run it, with the conditions they run
under (see :class:`~sgtrace.records.CallSite`: the enclosing ``if``s, and an
earlier ``if c: return`` in their block) and the function they are in:
``self.m()`` within the class family and calls on receivers whose
class :class:`~sgtrace.graph.types.Types` resolves (the slicer's own
:class:`~sgtrace.graph.calls.CallIndex`, its memo shared), and for an
``__init__`` the constructor calls of its class and of the subclasses that
inherit it, and ``super().__init__()`` in those that do not. A call that may
run several overrides runs this one only on an instance of a class that has
it: such a call names those classes, and the calls that build them are
searched too (a configurator built only in one mode). Then the same for the
functions those calls are in, breadth first, until functions nothing in the
tree calls (entry points) or the bounds: a function whose callers were not
searched is marked so, never taken for an entry point. A method whose name is
called from too many modules to search (``initialize``, ``forward``) still has
the calls of its own class family searched (``self.initialize()`` in a base
class's ``__init__``): an override in a class built only in one mode (a
backend's stub runner) is then decided by where that class is built.

Dotted names in the conditions that denote a literal constant of a class of
the tree (``DisaggregationMode.DECODE``, an enum member) are resolved in the
module of the condition, so an analysis can evaluate them without the tree.

All of it is the graph attribute ``REACH``, JSON-friendly, cached with the graph.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

import networkx as nx

from sgtrace.graph.calls import CallIndex, functions_matching
from sgtrace.graph.paths import pool_writes, reachable
from sgtrace.graph.points import Point, Scope, scope_of
from sgtrace.graph.slicer import COPIES
from sgtrace.index.project import Project, call_pattern, is_test_module
from sgtrace.records import CallSite

#: Graph attribute: ``{"functions": [...], "classes": [...], "constants": {text: literal}}``. A function is
#: ``{path, function, owner, searched, callers}``, a class ``{class, searched, built}``; callers and built are
#: rows ``[path, owner, function, line, guard, instances]`` of the calls (owner "" outside a class; instances:
#: the classes one of which the receiver must be for the call to run this function, [] when any).
REACH = "reach"
#: Point kinds a cap can be.
STEP_KINDS = frozenset({"write", "local", "field", "return"})
#: At most this many functions and classes have their callers searched ...
MAX_SEARCHED = 100
#: ... (the sizing's own search, :func:`sizing`, this many: it follows every way in, not the first ones) ...
MAX_SIZING_SEARCHED = 400
#: ... at most this many calls up from a step's function ...
MAX_DEPTH = 12
#: ... and only when the name is called in at most this many modules (a helper called from everywhere is
#: reached on some path; proving otherwise would mean reading most of the tree).
MAX_CALLING_MODULES = 20
#: A name mentioned in more modules than this is taken to be called in too many (no regex over them all).
MAX_MENTIONING_MODULES = 200
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w(])")

_Key = tuple[str, str]
#: (caller's path, its class or "", its qualname, line, guard, instances)
_Row = tuple[str, str, str, int, tuple[str, ...], tuple[str, ...]]


def reach(calls: CallIndex, graph: nx.DiGraph, attribute: str, knobs: Knobs | None = None) -> dict[str, object]:
    """The callers of the functions that may hold a cap, and of theirs, with guards (see the module doc); *knobs*:
    :func:`knobs_combined` of the graph, when the caller has it already."""
    guards = [(p.path, tuple(a.get("guard") or ())) for p, a in graph.nodes(data=True) if a.get("guard")]
    return search(calls, candidates(graph, attribute, knobs), guards)


def search(
    calls: CallIndex,
    start: list[_Key],
    guards: Iterable[tuple[str, tuple[str, ...]]] = (),
    most: int = MAX_SEARCHED,
) -> dict[str, object]:
    """The ``REACH`` data from the functions *start* ((path, qualname)) up; *guards* ((path, conditions))
    are other conditions whose constants are wanted too. A method whose name is called from too many modules to
    search still has its calls from its own class family searched (``self.m()``)."""
    found = _Search(calls, most)
    found.run(start)
    rows = [r for made in (*found.callers.values(), *found.built.values()) for r in made]
    return {
        "functions": [
            {"path": p, "function": f, "owner": found.owners[(p, f)], "searched": (p, f) in found.callers}
            | {"callers": _plain(found.callers.get((p, f), []))}
            for p, f in sorted(found.owners)
        ],
        "classes": [
            {"class": c, "searched": c in found.built, "built": _plain(found.built.get(c, []))}
            for c in sorted(found.classes)
        ],
        "constants": constants(calls.project, found.modules, [*((r[0], r[4]) for r in rows), *guards]),
    }


def candidates(graph: nx.DiGraph, attribute: str, knobs: Knobs | None = None) -> list[_Key]:
    """(path, qualname) of the functions that may hold a cap of *attribute*, whatever the budget knob.

    The caps' own definition with every knob a budget: steps on the value's chain (paths that keep to
    matching calls, off other quantities' provenance) downstream of a knob combined with something and
    upstream of the pool's writes, and guarded writes that replace the pool.
    """
    _, upstream, copies, combined = knobs or knobs_combined(graph)
    derived = reachable(graph, combined - copies)
    found = {p for p in derived & upstream if p.kind in STEP_KINDS}
    found |= {
        p
        for p in upstream - derived
        if p.kind in ("write", "local") and graph.nodes[p].get("guard") and _pool(graph, p, attribute)
    }
    return _functions_of(graph, found)


def sizing(calls: CallIndex, graph: nx.DiGraph, knobs: Knobs | None = None) -> dict[str, object]:
    """The ``REACH`` data searched up from the functions where a knob (or its copy) first meets something on
    the way to the pool's writes: every knob's budget site, where the pool is sized. On a bound of its own:
    ``REACH``'s, spent on every cap's function breadth first, may stop short of the scheduler that calls the
    sizing, and the order of start-up is read from the sizing up."""
    _, _, _, combined = knobs or knobs_combined(graph)
    return search(calls, _functions_of(graph, combined), most=MAX_SIZING_SEARCHED)


def _functions_of(graph: nx.DiGraph, points: set[Point]) -> list[_Key]:
    """(path, qualname) of the functions *points* are in, sorted."""
    return sorted({(p.path, str(graph.nodes[p]["function"])) for p in points if graph.nodes[p].get("function")})


#: (the pool's writes, what is upstream of them, the knobs and their copies, where a knob meets something).
Knobs = tuple[set[Point], set[Point], set[Point], set[Point]]


def knobs_combined(graph: nx.DiGraph) -> Knobs:
    """(the pool's writes, what is upstream of them, the knobs and their copies, the points where a knob or
    its copy meets something on the way to the pool)."""
    pool, core = pool_writes(graph)
    upstream = reachable(graph, core, downstream=False) | pool
    copies = {p for p in graph.nodes if p.kind in ("knob", "env")}
    stack = list(copies)
    while stack:
        for _, successor, op in graph.out_edges(stack.pop(), data="op"):
            if op in COPIES and successor not in copies:
                copies.add(successor)
                stack.append(successor)
    combined = {v for u in copies for _, v, op in graph.out_edges(u, data="op") if op not in COPIES} & upstream
    return pool, upstream, copies, combined


def _pool(graph: nx.DiGraph, point: Point, attribute: str) -> bool:
    """Whether *point* holds the pool size (or a share of it), or is copied into a write that does."""
    family = [point] + [
        v for _, v, op in graph.out_edges(point, data="op") if op in COPIES and v.kind in ("write", "field")
    ]
    return bool(attribute) and any(p.label.rsplit(".", 1)[-1].endswith(attribute) for p in family)


class _Search:
    """Breadth first up the calls, within the bounds; what was found, by function and by class."""

    def __init__(self, calls: CallIndex, most: int = MAX_SEARCHED) -> None:
        self.calls = calls
        self.most = most
        self.project = calls.project
        self.modules = {source.path: name for name, source in self.project.files.items()}
        #: Every function met -> its class ("" for none); callers only for those searched.
        self.owners: dict[_Key, str] = {}
        self.callers: dict[_Key, list[_Row]] = {}
        #: Every class an instance condition names; built (its constructor calls) only for those searched.
        self.classes: set[str] = set()
        self.built: dict[str, list[_Row]] = {}

    def run(self, start: list[_Key]) -> None:
        frontier: list[_Key | str] = list(start)
        seen: set[_Key | str] = set(frontier)
        for depth in range(MAX_DEPTH + 1):
            following: list[_Key | str] = []
            for item in frontier:
                rows = self._class(item, depth) if isinstance(item, str) else self._function(item, depth)
                for row in rows:
                    met: list[_Key | str] = [(row[0], row[2]), *row[5]]
                    for found in met:
                        if found not in seen:
                            seen.add(found)
                            following.append(found)
            frontier = following  # at MAX_DEPTH nothing is searched, so nothing follows

    def _bounded(self, depth: int) -> bool:
        return depth < MAX_DEPTH and len(self.callers) + len(self.built) < self.most

    def _open(self, depth: int, name: str) -> bool:
        """Whether the callers of *name* are searched: within the bounds, and not called from everywhere."""
        if depth >= MAX_DEPTH or len(self.callers) + len(self.built) >= self.most:
            return False
        mentions = len(self.project.identifiers().get(name, ()))  # an upper bound, without a regex over them
        return mentions <= MAX_CALLING_MODULES or (
            mentions <= MAX_MENTIONING_MODULES and len(self.project.callers_of(name)) <= MAX_CALLING_MODULES
        )

    def _function(self, key: _Key, depth: int) -> list[_Row]:
        scope = self._scope(key)
        if scope is None:
            return []
        self.owners[key] = scope.cls or ""
        short = scope.function.qualname.rsplit(".", 1)[-1]
        if self._open(depth, scope.cls.rsplit(".", 1)[-1] if short == "__init__" and scope.cls else short):
            found = callers(self.calls, scope)
        elif scope.cls and short != "__init__" and self._bounded(depth):
            found = _family_calls(self.calls, scope)
        else:
            return []
        rows = sorted({self._row(caller, site, scope) for caller, site in found})
        self.callers[key] = rows
        return rows

    def _class(self, cls: str, depth: int) -> list[_Row]:
        self.classes.add(cls)
        short = cls.rsplit(".", 1)[-1]
        if not self._open(depth, short):
            return []
        rows = sorted({self._row(caller, site, None) for caller, site in _constructions(self.calls, cls)})
        self.built[cls] = rows
        return rows

    def _row(self, caller: Scope, site: CallSite, callee: Scope | None) -> _Row:
        instances = _instances(self.calls, caller, site, callee) if callee is not None else ()
        return (caller.path, caller.cls or "", caller.function.qualname, site.line, site.guard, instances)

    def _scope(self, key: _Key) -> Scope | None:
        module = self.project.module(self.modules.get(key[0], ""))
        if module is None:
            return None
        function = next((f for f in module.outline.functions if f.qualname == key[1]), None)
        return scope_of(module, function) if function is not None else None


def callers(calls: CallIndex, scope: Scope) -> Iterator[tuple[Scope, CallSite]]:
    """The calls of the tree (tests left out) that may run the function of *scope*."""
    yield from calls.sites(scope)
    if scope.cls is None or scope.function.qualname.rsplit(".", 1)[-1] != "__init__":
        return
    wanted = (scope.module.source.module, scope.function.qualname)
    for subclass in sorted(calls.project.subclasses(scope.cls)):
        own = calls.types.lookup(subclass, "__init__")
        if own is None:
            continue
        short = subclass.rsplit(".", 1)[-1]
        if (own[0].source.module, own[1].qualname) == wanted:  # inherits this __init__: its constructor runs it
            candidates = _spelled(calls.project, short)
        else:  # its own __init__ may call this one (super().__init__(...), Base.__init__(self, ...))
            candidates = _calls_in(calls.project, scope_of(*own))
        for caller, site in candidates:
            callee = site.call.base
            if callee is not None and callee.text.rsplit(".", 1)[-1] in ("__init__", short):
                resolved = calls.types.callees(site.call, caller, site.line)
                if any((m.source.module, f.qualname) == wanted for m, f in resolved):
                    yield caller, site


def _family_calls(calls: CallIndex, scope: Scope) -> Iterator[tuple[Scope, CallSite]]:
    """The calls in the methods of *scope*'s class, its bases and its subclasses that run its function."""
    assert scope.cls is not None
    project = calls.project
    wanted = (scope.module.source.module, scope.function.qualname)
    short = scope.function.qualname.rsplit(".", 1)[-1]
    family = {scope.cls, *project.mro(scope.cls), *project.subclasses(scope.cls)}
    for cls in sorted(family):
        found = project.class_def(cls)
        if found is None:
            continue
        module, definition = found
        prefix = f"{definition.qualname}." if hasattr(definition, "qualname") else f"{cls.rsplit('.', 1)[-1]}."
        for function in module.outline.functions:
            if not function.qualname.startswith(prefix):
                continue
            for caller, site in _calls_in(project, scope_of(module, function)):
                callee = site.call.base
                if callee is None or callee.text.rsplit(".", 1)[-1] != short:
                    continue
                if any(
                    (m.source.module, f.qualname) == wanted
                    for m, f in calls.types.callees(site.call, caller, site.line)
                ):
                    yield caller, site


def _constructions(calls: CallIndex, cls: str) -> Iterator[tuple[Scope, CallSite]]:
    """Calls ``Cls(...)`` of the tree that build an instance of exactly *cls*."""
    short = cls.rsplit(".", 1)[-1]
    for caller, site in _spelled(calls.project, short):
        callee = site.call.base
        if callee is not None and callee.kind in ("name", "attr") and callee.text.rsplit(".", 1)[-1] == short:
            if cls in calls.types.class_refs(callee, caller, site.line):
                yield caller, site


def _instances(calls: CallIndex, caller: Scope, site: CallSite, callee: Scope) -> tuple[str, ...]:
    """The classes whose instances run *callee* at *site*, when the call may run other overrides too; else ().

    Overrides in test modules (mocks) are left out, as their calls are.
    """
    if callee.cls is None or callee.function.qualname.rsplit(".", 1)[-1] == "__init__":
        return ()
    resolved = calls.types.callees(site.call, caller, site.line)
    if len([m for m, _ in resolved if not is_test_module(m.source.module)]) < 2:
        return ()
    name = callee.function.qualname.rsplit(".", 1)[-1]
    wanted = (callee.module.source.module, callee.function.qualname)
    found = [callee.cls]
    for subclass in sorted(calls.project.subclasses(callee.cls)):
        method = calls.types.lookup(subclass, name)
        if method is not None and (method[0].source.module, method[1].qualname) == wanted:
            found.append(subclass)
    return tuple(c for c in found if not is_test_module(c.rsplit(".", 1)[0]))


def constants(
    project: Project, modules: dict[str, str], guards: Iterable[tuple[str, tuple[str, ...]]]
) -> dict[str, str]:
    """Dotted names in *guards* (path, conditions) that are literal class constants of the tree: text -> literal.

    A name that means different values in different modules is left out.
    """
    found: dict[str, str] = {}
    ambiguous: set[str] = set()
    resolved: dict[tuple[str, str], str | None] = {}
    for path, conditions in guards:
        module = modules.get(path)
        if module is None:
            continue
        for text in sorted({m.group(0) for c in conditions for m in _DOTTED.finditer(c)}):
            if (module, text) not in resolved:
                resolved[(module, text)] = _constant(project, module, text)
            value = resolved[(module, text)]
            if value is not None and found.setdefault(text, value) != value:
                ambiguous.add(text)
    return {k: v for k, v in sorted(found.items()) if k not in ambiguous}


def _constant(project: Project, module: str, text: str) -> str | None:
    """The literal source of ``Class.NAME`` as the tree defines it, seen from *module*; None otherwise."""
    owner, _, name = text.rpartition(".")
    if owner.split(".", 1)[0] in ("self", "cls"):
        return None
    definition = project.class_def(project.resolve(module, owner))
    field = next((f for f in definition[1].fields if f.name == name), None) if definition else None
    if field is None or not field.value:
        return None
    try:
        ast.literal_eval(field.value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return field.value


def _spelled(project: Project, name: str) -> Iterator[tuple[Scope, CallSite]]:
    """The calls in the functions of the tree (tests left out) whose source calls ``name(...)``/``x.name(...)``."""
    for module_name in project.callers_of(name):
        module = project.module(module_name)
        if module is None:
            continue
        for function in functions_matching(module, call_pattern(name)):
            yield from _calls_in(project, scope_of(module, function))


def _calls_in(project: Project, scope: Scope) -> Iterator[tuple[Scope, CallSite]]:
    for site in project.body(scope.module, scope.function).calls:
        yield scope, site


def _plain(rows: list[_Row]) -> list[list[object]]:
    return [
        [path, owner, name, line, list(guard), list(instances)] for path, owner, name, line, guard, instances in rows
    ]
