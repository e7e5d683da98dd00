"""Build the graph of one attribute: seed it with the attribute's writes and reads, then slice."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

import networkx as nx

from sgtrace.engine import SGLANG, Engine
from sgtrace.graph.points import Edge, Point, Scope, scope_of
from sgtrace.graph.reach import REACH, knobs_combined, reach, search, sizing
from sgtrace.graph.slicer import Slicer
from sgtrace.index.exprs import distinct
from sgtrace.index.project import Project
from sgtrace.model import Site
from sgtrace.records import Body, Expr

#: Node attribute marking the writes and reads of the traced attribute itself.
SEED = "seed"


def build(
    project: Project,
    attribute: str,
    writes: Iterable[Site],
    reads: Iterable[Site],
    limit: int = 2000,
    knob_receivers: tuple[str, ...] | None = None,
    with_reach: bool = False,
    strict: bool = False,
    sliced: Callable[[nx.DiGraph], None] | None = None,
    loads: Sequence[tuple[str, str]] = (),
    engine: Engine = SGLANG,
) -> Slicer:
    """The slicer, run: backward from every write of *attribute*, forward to its reads.

    *with_reach* adds the calls that run the cap functions and their conditions (``REACH``, for
    ``explain``; about a sixth of a cold run on the newest SGLang, so only when asked). *strict* turns
    off the guess by method name for receivers of unknown type. *sliced* is called with the graph once its
    nodes and edges are final (before the calls between methods and the way in are added to it). *loads*
    ((path, qualname) of the functions that load the weights) add the calls that run them (``LOADS``, the
    same shape as ``REACH``: the order of start-up, for ``explain``). *engine* gives the words for knobs,
    accessors and environment variables; *knob_receivers*, when given, the holders of the knobs instead of its.
    """
    slicer = Slicer(
        project, knob_receivers=knob_receivers, limit=limit, attribute=attribute, strict=strict, engine=engine
    )
    modules = {source.path: name for name, source in project.files.items()}
    for point in _seed_writes(slicer, project, modules, attribute, writes):
        slicer.graph.nodes[point][SEED] = "write"
    slicer.run()
    scopes: dict[tuple[str, str | None], Scope | None] = {}
    reads_in: dict[tuple[str, str | None], tuple[list[Expr], dict[int, list[Expr]]]] = {}
    for site in reads:
        for point in _seed_read(slicer, project, modules, attribute, site, scopes, reads_in):
            slicer.graph.nodes[point][SEED] = "read"
    slicer.run()
    if sliced is not None:
        sliced(slicer.graph)
    slicer.graph.graph[CALLS] = calls_within_classes(project, slicer.graph)
    if with_reach:
        knobs = knobs_combined(slicer.graph)  # read once for both searches
        slicer.graph.graph[REACH] = reach(slicer.calls, slicer.graph, attribute, knobs)
        if loads:
            slicer.graph.graph[LOADS] = search(slicer.calls, list(loads))
            slicer.graph.graph[SIZING] = sizing(slicer.calls, slicer.graph, knobs)
    slicer.finish()
    return slicer


#: Graph attribute: the calls that run the functions loading the weights, up to the tree's entry points (the
#: shape of ``REACH``).
LOADS = "loads"
#: Graph attribute: the calls that run the functions where the pool is sized (every knob's budget site), up to
#: the tree's entry points (the shape of ``REACH``, on a bound of its own).
SIZING = "sizing"


#: Graph attribute: [owner, caller, callee, line] for methods of one class that call each other
#: (``self.f()``), so analyses can order what a class does in the order it runs.
CALLS = "calls"


def calls_within_classes(project: Project, graph: nx.DiGraph) -> list[list[object]]:
    """Calls ``self.m(...)`` between the methods of each class that owns a node of the graph."""
    functions: dict[str, set[str]] = {}
    for point in graph.nodes:
        attributes = graph.nodes[point]
        if attributes.get("owner") and attributes.get("function"):
            functions.setdefault(str(attributes["owner"]), set()).add(str(attributes["function"]))
    found: list[list[object]] = []
    for owner, names in sorted(functions.items()):
        short = {name.rsplit(".", 1)[-1]: name for name in names}
        for module, method in project.methods(owner):
            if method.qualname not in names:
                continue
            for site in project.body(module, method).calls:
                callee = site.call.base
                if (
                    callee is not None
                    and callee.kind == "attr"
                    and callee.base is not None
                    and callee.base.text == "self"
                ):
                    target = short.get(callee.name)
                    if target is not None and target != method.qualname:
                        found.append([owner, method.qualname, target, site.line])
    return sorted(found, key=lambda row: tuple(str(v) for v in row))


def _scope(
    project: Project,
    modules: dict[str, str],
    site: Site,
    memo: dict[tuple[str, str | None], Scope | None] | None = None,
) -> Scope | None:
    key = (site.path, site.function)
    if memo is not None and key in memo:
        return memo[key]
    module = project.module(modules.get(site.path, ""))
    found = None
    if module is not None and site.function is not None:
        found = next((scope_of(module, f) for f in module.outline.functions if f.qualname == site.function), None)
    if memo is not None:
        memo[key] = found
    return found


def _seed_writes(
    slicer: Slicer, project: Project, modules: dict[str, str], attribute: str, writes: Iterable[Site]
) -> list[Point]:
    """The write points of the sites: each function's body is gone through once for all its writes' lines.

    (A write site per target of ``a.x = a.x = ... = v``, or thousands of writes in one function, would
    otherwise go through the body once per site: quadratic.)
    """
    sites = list(writes)
    lines: dict[tuple[str, str | None], set[int]] = {}
    for site in sites:
        if site.kind != "field":
            lines.setdefault((site.path, site.function), set()).add(site.line)
    found: list[Point] = []
    for site in sites:  # in the order of the sites, as the slice has always been seeded
        if site.kind == "field":
            found.extend(_seed_field(slicer, project, modules, attribute, site))
            continue
        wanted = lines.pop((site.path, site.function), None)
        scope = _scope(project, modules, site) if wanted else None
        if scope is None or wanted is None:
            continue
        for assignment in project.body(scope.module, scope.function).assignments:
            target = assignment.target
            if target.kind == "attr" and target.name == attribute and target.line in wanted:
                found.append(slicer.seed_assignment(scope, assignment))
    return found


def _seed_field(slicer: Slicer, project: Project, modules: dict[str, str], attribute: str, site: Site) -> list[Point]:
    module = project.module(modules.get(site.path, ""))
    definition = project.class_def(site.owner) if site.owner else None
    if module is None or definition is None or site.owner is None:
        return []
    for field in definition[1].fields:
        if field.name == attribute and field.line == site.line:
            point = slicer.field_point(module, site.owner, field.name, field.line)
            slicer.schedule(point, partial(slicer.field_sources, module, site.owner, field))
            return [point]
    return []


def _seed_read(
    slicer: Slicer,
    project: Project,
    modules: dict[str, str],
    attribute: str,
    site: Site,
    scopes: dict[tuple[str, str | None], Scope | None],
    reads_in: dict[tuple[str, str | None], tuple[list[Expr], dict[int, list[Expr]]]],
) -> list[Point]:
    scope = _scope(project, modules, site, scopes)
    if scope is None:
        return []
    key = (site.path, site.function)
    if key not in reads_in:  # the function's reads of the attribute by line, gone through once for all its sites
        body = project.body(scope.module, scope.function)
        every = [e for e in _attribute_exprs(body, attribute) if e.base is not None]
        by_line: dict[int, list[Expr]] = {}
        for expression in every:
            by_line.setdefault(expression.line, []).append(expression)
        reads_in[key] = (every, by_line)
    code = " ".join(site.code.split())
    every, by_line = reads_in[key]
    # the one on the read's own line first, else the first anywhere in the function that the code holds
    candidate = next((c for c in by_line.get(site.line, ()) if c.text in code), None)
    if candidate is None:
        candidate = next((c for c in every if c.text in code), None)
    if candidate is None:
        return []
    assert candidate.base is not None
    owners = slicer.types.of(candidate.base, scope, site.line)
    point = slicer.node(
        Point("read", candidate.text, scope.path, candidate.line or site.line),
        function=scope.function.qualname,
        owner=scope.cls,
    )
    if owners:
        slicer.slots(owners, attribute, point)
    else:
        slicer.edge(Point("unknown", f"?.{attribute}", "", 0), point, Edge("read", approximate=True))
    return [point]


def _attribute_exprs(body: Body, attribute: str) -> Iterator[Expr]:
    roots: list[Expr] = (
        distinct(a.value for a in body.assignments) + [r.value for r in body.returns] + [c.call for c in body.calls]
    )
    roots += [a.target.base for a in body.assignments if a.target.base is not None]
    stack = list(roots)
    while stack:
        current = stack.pop()
        if current.kind == "attr" and current.name == attribute:
            yield current
        if current.base is not None:
            stack.append(current.base)
        stack.extend(current.args)
        stack.extend(v for _, v in current.keywords)
