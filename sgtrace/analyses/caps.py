"""Which code paths cap the pool below the budget: budget sites, and the caps on the value's path.

Works on the graph alone. The budget enters where a value copied from the
budget knob is combined with something else (``rest = avail - total * (1 -
fraction)``): a *budget site*. Everything downstream of a site that also
flows into a write of the attribute is the value's path; each write on it is
classified by the operation that produced it (one table below); writes of the
same names that replace the value without coming from the budget are
overrides (none when the budget has no site: then nothing comes from it).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import networkx as nx

from sgtrace.analyses.categories import CATEGORIES as CATEGORIES  # re-exported: the table beside its analysis
from sgtrace.graph.paths import pool_writes, reachable
from sgtrace.graph.points import Point
from sgtrace.model import BudgetSite, Cap

#: Edge operations that pass a value on unchanged.
_COPIES = frozenset({"copy", "param", "field", "property", "read", "default", "return", "element"})
#: A divisor that shares the pool out: a parallel size (``pipeline_parallel_size``, ``pp_size``) or a ratio.
_SHARE = re.compile(r"parallel_size|world_size|(^|_)[tpde]p_size$|num_stages|ratio")
#: ``x //= y`` / ``x /= y``.
_DIVIDED = re.compile(r"[^/]//?=(?!=)")
_ROUND = re.compile(r"//\s*\(?\s*([\w.]+)\s*\)?\s*\*\s*\1\b|\balign\w*\(|\bround_up\w*\(|\bceil_align\(")
_SOURCE_KINDS = ("knob", "env")


def budget_nodes(graph: nx.DiGraph, budget: str) -> set[Point]:
    """Nodes that are the budget knob itself, or a plain copy of it."""
    roots = {p for p in graph.nodes if _name(p) == budget}
    copies = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for _, successor, op in graph.out_edges(node, data="op"):
            if op in _COPIES and successor not in copies and _name(successor) == budget:
                copies.add(successor)
                stack.append(successor)
    return copies


def budget_sites(graph: nx.DiGraph, budget: str) -> list[Point]:
    """Nodes where a copy of the budget is combined with another quantity."""
    copies = budget_nodes(graph, budget)
    sites = {v for u in copies for _, v, op in graph.out_edges(u, data="op") if op not in _COPIES and v not in copies}
    return sorted(sites, key=_order)


def check(graph: nx.DiGraph, budget: str) -> tuple[list[BudgetSite], list[Cap]]:
    """Budget sites and caps of the attribute whose writes are the graph's seeds."""
    pool, core = pool_writes(graph)
    upstream_of_core = reachable(graph, core, downstream=False)
    sites = [s for s in budget_sites(graph, budget) if s in upstream_of_core]
    derived = reachable(graph, sites)
    upstream_of_pool = upstream_of_core | pool | _own_locals(graph, pool)
    path = derived & upstream_of_pool
    steps = [p for p in path if p.kind in ("write", "local", "field", "return") and p not in sites]
    caps = [c for c in (_classify(graph, p, derived) for p in steps) if c is not None]
    caps += [_cap(graph, n, "reserve", derived) for n in _reserved_before(graph, sites, upstream_of_core)]
    # with no budget site nothing is derived from the budget: "not from the budget" would call every
    # guarded write an override (metrics copies among them)
    overrides = {
        n
        for n in upstream_of_pool - derived
        if sites
        and n.kind in ("write", "local")
        and graph.nodes[n].get("guard")
        and _replaces(graph, n)
        and not _copies_a_figure(str(graph.nodes[n].get("code", "")), _attribute(graph))
    }
    # of one name's steps in one branch (``x = a`` then ``x = round(x)``), the last replaces the pool
    by_label: dict[str, set[Point]] = {}
    for point in overrides:
        by_label.setdefault(point.label, set()).add(point)
    caps += [_cap(graph, n, "override", derived) for n in overrides if not _followed(graph, n, by_label[n.label])]
    caps = _mark_approximate(graph, caps, pool, sites)
    reserves = [c for c in caps if c.category == "reserve"]
    report_sites = [_site(graph, s, derived) for s in sites]
    report_sites += [BudgetSite(c.path, c.line, c.code, c.knobs) for c in reserves]
    order = _application_order(graph.graph.get("calls") or [])
    return sorted(report_sites, key=lambda s: (s.path, s.line)), sorted(caps, key=order)


def _own_locals(graph: nx.DiGraph, pool: set[Point]) -> set[Point]:
    """Locals of the attribute's name copied into a write of it (``n //= pp`` then ``self.n = n``)."""
    return {
        u
        for p in pool
        for u, _, op in graph.in_edges(p, data="op")
        if op == "copy" and u.kind == "local" and _in_family(graph, u)
    }


def _reserved_before(graph: nx.DiGraph, sites: list[Point], upstream: set[Point]) -> list[Point]:
    """Reservations taken before the fraction: ``free = [m - reserved for m in free]`` upstream of a site.

    A step that takes an amount off the value it replaces (``x = x - r``, or an element of ``x``
    minus ``r``), on the memory side of a budget site.
    """
    found = []
    for node in reachable(graph, sites, downstream=False) - set(sites):
        if node.kind not in ("local", "write", "return") or node not in upstream:
            continue
        subtracted = [u for u, _, op in graph.in_edges(node, data="op") if op == "sub"]
        itself = [u for u in subtracted if _is_itself(graph, u, _name(node))]
        if itself and any(u not in itself and u.kind not in _SOURCE_KINDS for u in subtracted):
            found.append(node)
    return found


def _is_itself(graph: nx.DiGraph, node: Point, name: str) -> bool:
    """Whether *node* is the value named *name*, or an element of it."""
    if _name(node) == name:
        return True
    return any(op == "element" and _name(u) == name for u, _, op in graph.in_edges(node, data="op"))


def _mark_approximate(graph: nx.DiGraph, caps: list[Cap], pool: set[Point], sites: list[Point]) -> list[Cap]:
    """Caps linked to the budget or to the pool only through a call resolved by method name are approximate."""
    if not any(a for _, _, a in graph.edges(data="approximate")):
        return caps
    exact_view = nx.subgraph_view(graph, filter_edge=lambda u, v: not graph.edges[u, v].get("approximate"))
    to_pool = {(p.path, p.line) for p in reachable(exact_view, pool, downstream=False)}
    derived = {(p.path, p.line) for p in reachable(graph, sites)}
    exactly = {(p.path, p.line) for p in reachable(exact_view, sites)}
    return [
        replace(c, approximate=True)
        if (c.path, c.line) not in to_pool or ((c.path, c.line) in derived and (c.path, c.line) not in exactly)
        else c
        for c in caps
    ]


def _application_order(calls: list[list[Any]]) -> Any:
    """Sort key: owner, then the order a class applies its caps (a callee's at its call's line)."""
    called_from: dict[tuple[str, str], tuple[str, int]] = {}
    for owner, caller, callee, line in calls:
        called_from.setdefault((str(owner), str(callee)), (str(caller), int(line)))

    def position(owner: str, function: str, line: int) -> tuple[int, ...]:
        chain = [line]
        seen = {function}
        while (owner, function) in called_from:
            function, line = called_from[(owner, function)]
            if function in seen:
                break
            seen.add(function)
            chain.append(line)
        return tuple(reversed(chain))

    def key(cap: Cap) -> tuple[Any, ...]:
        owner = cap.owner or ""
        return (owner, cap.path, position(owner, cap.function or "", cap.line), cap.category)

    return key


def _classify(graph: nx.DiGraph, node: Point, derived: set[Point]) -> Cap | None:
    incoming = [(u, op) for u, _, op in graph.in_edges(node, data="op")]
    outside = [(u, op) for u, op in incoming if u not in derived]
    code = str(graph.nodes[node].get("code", ""))
    if node.kind == "field" and not code.strip():
        return None  # declared without a value (``n: int``): it carries what its constructions pass
    if node.kind == "return":
        if any(op == "sub" and u.kind not in _SOURCE_KINDS for u, op in outside):
            return _cap(graph, node, "reserve", derived)
        if any(op == "reduce" for _, op in incoming):
            return _cap(graph, node, "reduce", derived)
        return None
    family = _in_family(graph, node)
    if family and _copies_a_figure(code, _attribute(graph)):
        return None  # the pool another component worked out, copied: a flow, not a step that moves it
    if any(op == "sub" for _, op in outside) and not family:
        return _cap(graph, node, "reserve", derived)
    if not family and _reserved_for_what_it_admits(graph, incoming, derived):
        return _cap(graph, node, "reserve", derived)
    if any(op == "reduce" for _, op in incoming):
        return _cap(graph, node, "reduce", derived)
    if _shared_out(graph, node, outside, code) or _proportional(graph, node, incoming, derived):
        return _cap(graph, node, "split", derived)
    if any(op == "min" for _, op in incoming):
        return _cap(graph, node, "min", derived)
    if family and any(op == "max" for _, op in outside):
        return _cap(graph, node, "floor", derived)
    if _rounds(code) or any(u.kind == "call" and "align" in u.label for u, _ in incoming):
        return _cap(graph, node, "round", derived)
    if any(u.kind == "call" and u.label.endswith(".item(...)") for u, _ in incoming) or "all_reduce" in code:
        return _cap(graph, node, "reduce", derived)
    if any(op in ("mul", "div", "floordiv") and "ratio" in u.label for u, op in _upstream(graph, node, 2)):
        return _cap(graph, node, "split", derived)
    if family and _name(node) == _attribute(graph) and _copies_a_relative(graph, node):
        return _cap(graph, node, "split", derived)
    if family and not any(_in_family(graph, a) and a.kind != "return" for a in nx.ancestors(graph, node) & derived):
        return _cap(graph, node, "base", derived)
    return None


@functools.lru_cache(maxsize=1024)
def _rounds(code: str) -> bool:
    """Whether a statement rounds (the targets of one statement share its code: searched once)."""
    return _ROUND.search(code) is not None


def _shared_out(graph: nx.DiGraph, node: Point, outside: list[tuple[Point, str]], code: str) -> bool:
    """``x //= n`` on the pool, or a division by a parallel size: the pool shared among stages or ranks."""
    divisors = [u for u, op in outside if op in ("div", "floordiv")]
    if _DIVIDED.search(code) and divisors and _in_family(graph, node):
        return True
    return any(_SHARE.search(_name(u)) for u in divisors)


def _proportional(graph: nx.DiGraph, node: Point, incoming: list[tuple[Point, str]], derived: set[Point]) -> bool:
    """``n = int(total_n * a / (a + b))``: the pool's size divided by other quantities, a share of it."""
    if not _in_family(graph, node):
        return False
    shares = [u for u, op in incoming if op == "div"]
    return any(u in derived and _in_family(graph, u) for u in shares) and any(u not in derived for u in shares)


def _reserved_for_what_it_admits(graph: nx.DiGraph, incoming: list[tuple[Point, str]], derived: set[Point]) -> bool:
    """``left = max(budget - fixed, 0)`` where *fixed* is itself worked out from the budget (state for as many
    requests as the budget admits): every operand of the subtraction comes from the budget, and none is a share
    of another (``total - total * ratio`` is a split, not a reservation)."""
    operands = [u for u, op in incoming if op == "sub"]
    if len(operands) < 2 or not all(u in derived for u in operands):
        return False
    shares = {v for u in operands for v, op in _upstream(graph, u, 2) if op in ("mul", "div", "floordiv")}
    return not any(u in shares for u in operands)


def _attribute(graph: nx.DiGraph) -> str:
    return str(graph.graph.get("attribute", ""))


def _in_family(graph: nx.DiGraph, node: Point) -> bool:
    """Whether *node* holds the pool size or a share of it (``max_total_num_tokens``, ``swa_max_total_num_tokens``)."""
    attribute = _attribute(graph)
    return bool(attribute) and _name(node).endswith(attribute)


def _followed(graph: nx.DiGraph, node: Point, named: set[Point]) -> bool:
    """Whether a later step of the same name (among *named*), under the same conditions or narrower ones,
    takes *node* on."""
    if len(named) < 2:
        return False
    guard = list(graph.nodes[node].get("guard") or ())
    later = nx.descendants(graph, node) & named  # the smaller set is gone through: linear in all
    return any(list(graph.nodes[o].get("guard") or ())[: len(guard)] == guard for o in later)


def _replaces(graph: nx.DiGraph, node: Point) -> bool:
    """Whether *node* is the pool size, or is copied into it (``sizes = replace(sizes, max_total_num_tokens=x)``)."""
    return _in_family(graph, node) or any(
        op in _COPIES and _in_family(graph, v) and v.kind in ("write", "field")
        for _, v, op in graph.out_edges(node, data="op")
    )


@functools.lru_cache(maxsize=1024)
def _copies_a_figure(code: str, attribute: str) -> bool:
    """Whether the statement copies the pool as another component holds it, by its name: a key of a dict it
    sent (``infos[0]["max_total_num_tokens"]``, ``.get("max_total_num_tokens")``) or an attribute of another
    object (``self.scheduler.model_runner.effective_max_total_num_tokens``; ``self.full_max_total_num_tokens``,
    the object's own share, is not)."""
    try:
        statement = ast.parse(code.strip()).body
    except SyntaxError:
        return False
    value = getattr(statement[0], "value", None) if len(statement) == 1 else None
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
        return isinstance(value.slice.value, str) and value.slice.value.endswith(attribute)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
        first = value.args[0] if value.args else None
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.endswith(attribute)
    if isinstance(value, ast.Attribute) and value.attr.endswith(attribute):
        return isinstance(value.value, ast.Attribute)  # self.a.b.pool, not self.pool's sibling self.full_pool
    return False


def _copies_a_relative(graph: nx.DiGraph, node: Point) -> bool:
    """``self.max_total_num_tokens = self.full_max_total_num_tokens``: the pool takes one pool's share."""
    return any(
        op == "copy" and _in_family(graph, u) and _name(u) != _attribute(graph)
        for u, _, op in graph.in_edges(node, data="op")
        for u in [u] + [w for w, _ in graph.in_edges(u)]
        if u.kind in ("read", "write")
    )


def _upstream(graph: nx.DiGraph, node: Point, hops: int) -> Iterable[tuple[Point, str]]:
    frontier = [node]
    for _ in range(hops):
        following = []
        for current in frontier:
            for u, _, op in graph.in_edges(current, data="op"):
                yield u, op
                following.append(u)
        frontier = following


def _cap(graph: nx.DiGraph, node: Point, category: str, derived: set[Point]) -> Cap:
    attributes: dict[str, Any] = graph.nodes[node]
    return Cap(
        path=node.path,
        line=node.line,
        owner=attributes.get("owner"),
        function=attributes.get("function"),
        target=_name(node),
        category=category,
        guard=tuple(attributes.get("guard") or ()),
        exits=tuple(attributes.get("exits") or ()),
        knobs=tuple(sorted({*_knobs(graph, node, derived), *(attributes.get("knobs") or ())})),
        code=str(attributes.get("code", "")),
    )


def _site(graph: nx.DiGraph, node: Point, derived: set[Point]) -> BudgetSite:
    code = str(graph.nodes[node].get("code", ""))
    return BudgetSite(node.path, node.line, code, _knobs(graph, node, derived - {node}, hops=6))


def _knobs(graph: nx.DiGraph, node: Point, derived: set[Point], hops: int = 3) -> tuple[str, ...]:
    """Knobs and environment variables feeding *node* from off the budget path (a few hops back)."""
    found: set[str] = set()
    frontier = [node]
    for _ in range(hops):
        following = []
        for current in frontier:
            for u, _ in graph.in_edges(current):
                if u.kind in _SOURCE_KINDS:
                    found.add(u.label)
                elif u not in derived and u.kind in ("local", "read", "param", "write", "field"):
                    following.append(u)
        frontier = following
    return tuple(sorted(found))


def _name(point: Point) -> str:
    """The name a node stands for: ``Class.attr`` -> attr, ``f(param)`` -> param, ``get_x().attr`` -> attr."""
    label = point.label
    if point.kind == "param" and label.endswith(")"):
        return label[label.rfind("(") + 1 : -1]
    return label.rsplit(".", 1)[-1]


def _order(point: Point) -> tuple[str, int, str]:
    return (point.path, point.line, point.label)
