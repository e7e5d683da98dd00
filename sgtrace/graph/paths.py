"""Reachability along paths where calls and returns match.

One graph holds every calling context, so a shared helper (``ceil_align``)
joins its callers: a path may enter it from one call and leave it to another.
Edges that enter a callee or leave it carry their call sites (``enter``,
``exit``); a path is followed only while the site it leaves by is the one it
came in by. One pending call is remembered (a path that starts inside a
function may leave it anywhere), which rules out the common false paths at
the cost of a few hundred states.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import networkx as nx

from sgtrace.graph.points import Point
from sgtrace.graph.slicer import ENTER, EXIT, SIDE


def reachable(graph: nx.DiGraph, sources: Iterable[Point], downstream: bool = True) -> set[Point]:
    """*sources* and what is reachable from them (downstream, or upstream) along the traced value's chain.

    Paths keep to matching calls and returns, and to the value's own chain: edges
    made while following another quantity's provenance (``side``) are not crossed.
    """
    start = [(s, "") for s in sources if s in graph]
    seen: set[tuple[Point, str]] = set(start)
    queue = deque(start)
    while queue:
        node, pending = queue.popleft()
        for neighbour, data in _steps(graph, node, downstream):
            state = _through(data, pending, downstream)
            if state is None:
                continue
            if (neighbour, state) not in seen:
                seen.add((neighbour, state))
                queue.append((neighbour, state))
    return {node for node, _ in seen}


def _steps(graph: nx.DiGraph, node: Point, downstream: bool) -> Iterable[tuple[Point, dict[str, Any]]]:
    if downstream:
        return ((v, data) for _, v, data in graph.out_edges(node, data=True) if not data.get(SIDE))
    return ((u, data) for u, _, data in graph.in_edges(node, data=True) if not data.get(SIDE))


def _through(data: dict[str, Any], pending: str, downstream: bool) -> str | None:
    """The pending call after crossing an edge, or None if the edge leaves by another call."""
    leave, come = (EXIT, ENTER) if downstream else (ENTER, EXIT)
    leaving = data.get(leave) or []
    if leaving:
        if pending and pending not in leaving:
            return None
        pending = ""
    coming = data.get(come) or []
    if coming:
        pending = coming[0] if len(coming) == 1 else ""
    return pending


def pool_writes(graph: nx.DiGraph) -> tuple[set[Point], list[Point]]:
    """(the writes of the traced attribute, the core of them: those that feed another or come first).

    A write nothing else takes from (a statistics or report field) is a sink: what only feeds sinks
    is not on the pool's way.
    """
    pool = {p for p in graph.nodes if graph.nodes[p].get("seed") == "write"}
    feeding = reaching_another(graph, pool)
    fed = reaching_another(graph, pool, downstream=False)
    core = [p for p in sorted(pool, key=lambda p: (p.path, p.line, p.label)) if p in feeding or p not in fed]
    return pool, core


def reaching_another(graph: nx.DiGraph, points: set[Point], downstream: bool = True) -> set[Point]:
    """The *points* from which another of them is :func:`reachable` (downstream, or upstream).

    In time linear in the graph, not once per point: the states a path can be in (a node and its
    pending call) make a plain graph, whose strongly connected components, taken from the last,
    each learn two of the points they reach (two are enough to know one is not the start).
    """
    start = [(p, "") for p in sorted(points, key=lambda p: (p.path, p.line, p.label)) if p in graph]
    states: nx.DiGraph = nx.DiGraph()
    states.add_nodes_from(start)
    seen = set(start)
    queue = deque(start)
    while queue:
        current = queue.popleft()
        for neighbour, data in _steps(graph, current[0], downstream):
            pending = _through(data, current[1], downstream)
            if pending is None:
                continue
            following = (neighbour, pending)
            states.add_edge(current, following)
            if following not in seen:
                seen.add(following)
                queue.append(following)
    condensed = nx.condensation(states)
    component = condensed.graph["mapping"]
    found: dict[int, tuple[Point, ...]] = {}
    for index in reversed(list(nx.topological_sort(condensed))):
        own = {state[0] for state in condensed.nodes[index]["members"] if state[0] in points}
        these = sorted(own, key=lambda p: (p.path, p.line, p.label))[:2]
        for successor in condensed.successors(index):
            if len(these) >= 2:
                break
            these.extend(p for p in found[successor] if p not in these)
        found[index] = tuple(these[:2])
    return {state[0] for state in start if any(p != state[0] for p in found[component[state]])}
