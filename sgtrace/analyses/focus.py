"""The budget's view of the slice: knobs -> budget sites -> caps -> the pool's writes -> its readers.

What a person needs to see of a slice of hundreds of nodes: the knobs the budget
and the caps depend on, the statements where the budget meets other quantities,
the caps, the writes of the attribute, and the files that read it. Every other
node of the slice is folded into the edges: an edge ``u -> v`` of the view stands
for a shortest path of the slice from ``u`` to ``v`` that passes no other node of
the view. It carries the operation of the path's last step and how many nodes of
the slice it folds.

The readers of the attribute that feed nothing else shown (the scheduler, metrics,
the API) are grouped by file: one node per file, its first read's line, and the
reads as members.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from sgtrace.analyses.caps import budget_nodes
from sgtrace.analyses.categories import CATEGORIES
from sgtrace.graph.paths import pool_writes, reachable
from sgtrace.graph.points import SOURCES, Point
from sgtrace.graph.slicer import HUB
from sgtrace.model import BudgetSite, Cap

#: Each role of a node in the view, left to right, and why a node of that role is shown.
ROLES: dict[str, str] = {
    "knob": "a knob or environment variable the budget or a cap depends on",
    "budget": "a budget site: where the budget knob meets other quantities",
    "cap": "a cap: a step that sets, lowers or replaces the pool's size on the budget's way to it",
    "pool": "a write of the attribute (the pool's size) that is not itself a cap and that another write takes from",
    "reader": "reads of the attribute, and copies kept for reports, that feed nothing else shown (by file or folder)",
}

#: Node attribute of the view: one of ROLES.
ROLE = "role"
#: Node attribute of a reader node: ((path, line, code), ...) of the reads and copies it groups.
MEMBERS = "members"
#: Edge attribute of the view: how many nodes of the slice the edge folds (0: an edge of the slice).
FOLDED = "folded"
#: Node kinds that are steps of the computation (a cap or a budget site is one of these).
_STEPS = ("write", "local", "field", "return")


def focus(graph: nx.DiGraph, sites: Sequence[BudgetSite], caps: Sequence[Cap], budget: str) -> nx.DiGraph:
    """The view of *graph* (a slice with its seeds) around *budget*, its *sites* and *caps*; see the module doc."""
    members = _members(graph, sites, caps, budget)
    view = nx.DiGraph(attribute=graph.graph.get("attribute"), budget=budget)
    for point, (node, attributes) in sorted(members.items()):
        if node not in view:
            view.add_node(node, **attributes)
        if attributes[ROLE] == "reader":
            listed = view.nodes[node].setdefault(MEMBERS, [])
            listed.append((point.path, point.line, str(graph.nodes[point].get("code", ""))))
    for point in sorted(members):
        for target, data in _folded_edges(graph, point, members).items():
            source, shown = members[point][0], members[target][0]
            if source != shown:
                view.add_edge(source, shown, **data)
    for node in view.nodes:
        if MEMBERS in view.nodes[node]:
            view.nodes[node][MEMBERS] = tuple(sorted(view.nodes[node][MEMBERS]))
    return view


def _members(
    graph: nx.DiGraph, sites: Sequence[BudgetSite], caps: Sequence[Cap], budget: str
) -> dict[Point, tuple[Point, dict[str, Any]]]:
    """Each slice node shown -> (the node of the view standing for it, its attributes)."""
    shown: dict[Point, tuple[Point, dict[str, Any]]] = {}
    by_line = _steps_by_line(graph)
    for cap in caps:
        for point in by_line.get((cap.path, cap.line), ()):
            note = f"{cap.category}: {CATEGORIES.get(cap.category, '')}"
            shown[point] = (point, _attributes(graph, point, "cap", category=cap.category, why=note))
    for site in sites:
        for point in by_line.get((site.path, site.line), ()):
            shown.setdefault(point, (point, _attributes(graph, point, "budget", why=ROLES["budget"])))
    for point in _knobs(graph, sites, caps, budget):
        why = "the budget knob" if _is_budget(point, budget) else ROLES["knob"]
        shown[point] = (point, _attributes(graph, point, "knob", why=why))
    pool, core = pool_writes(graph)
    for point in sorted(core):
        shown.setdefault(point, (point, _attributes(graph, point, "pool", why=ROLES["pool"])))
    for point in sorted(p for p in graph.nodes if graph.nodes[p].get(HUB)):  # shown, or n writes fold into n x m edges
        why = f"the attribute of a class, fed by its {graph.nodes[point][HUB]} writes and read where it flows on"
        shown.setdefault(point, (point, _attributes(graph, point, "pool", why=why)))
    reads = [p for p in graph.nodes if graph.nodes[p].get("seed") == "read"]
    feeding = reachable(graph, list(shown), downstream=False)
    ends = [p for p in [*reads, *pool] if p not in shown and p not in feeding]
    for point, group in _grouped(ends).items():
        shown[point] = (group, _attributes(graph, point, "reader", why=ROLES["reader"], label=group.label))
    return shown


def _grouped(points: Sequence[Point], most: int = 10) -> dict[Point, Point]:
    """Each point -> the node of its group: by file, or by folder (shallower until *most* groups or fewer)."""
    depth = max((p.path.count("/") + 1 for p in points), default=0)
    keys = {p: p.path for p in points}
    while len(set(keys.values())) > most and depth > 1:
        depth -= 1
        keys = {p: "/".join(p.path.split("/")[:depth]) + ("/" if p.path.count("/") >= depth else "") for p in points}
    groups: dict[str, Point] = {}
    for point in sorted(points, key=lambda p: (p.path, p.line, p.label)):
        key = keys[point]
        label = key.rstrip("/").rsplit("/", 1)[-1] + ("/" if key.endswith("/") else "")
        groups.setdefault(key, Point("read", label, point.path, point.line))
    return {point: groups[keys[point]] for point in points}


def _steps_by_line(graph: nx.DiGraph) -> dict[tuple[str, int], list[Point]]:
    """The computation's steps of the slice by (path, line): what a cap or a budget site is in the graph."""
    found: dict[tuple[str, int], list[Point]] = {}
    for point in sorted(graph.nodes):
        if point.kind in _STEPS:
            found.setdefault((point.path, point.line), []).append(point)
    return found


def _knobs(graph: nx.DiGraph, sites: Sequence[BudgetSite], caps: Sequence[Cap], budget: str) -> list[Point]:
    """The budget knob, and the knobs and environment variables the sites and caps name."""
    named = {name for site in sites for name in site.knobs} | {name for cap in caps for name in cap.knobs}
    roots = [p for p in budget_nodes(graph, budget) if p.kind in SOURCES]
    return sorted({*roots, *(p for p in graph.nodes if p.kind in ("knob", "env") and p.label in named)})


def _is_budget(point: Point, budget: str) -> bool:
    return point.label.rsplit(".", 1)[-1] == budget


def _attributes(graph: nx.DiGraph, point: Point, role: str, **extra: Any) -> dict[str, Any]:
    """The view's attributes of a node: the slice's (kind, label, code, owner, function, guard) and its role."""
    data = graph.nodes[point]
    attributes = {name: data[name] for name in ("code", "owner", "function", "guard", "seed") if data.get(name)}
    attributes.update(kind=point.kind, label=point.label, path=point.path, line=point.line, role=role)
    attributes.update(extra)
    return attributes


def _folded_edges(
    graph: nx.DiGraph, source: Point, members: dict[Point, tuple[Point, dict[str, Any]]]
) -> dict[Point, dict[str, Any]]:
    """The shown nodes *source* reaches without passing another, with the last step's op and the steps folded."""
    distance = {source: 0}
    frontier, step = [source], 0
    while frontier:  # breadth first through the nodes not shown (a filtered view cost 0.2 s on 0.5.23)
        step += 1
        reached = []
        for node in frontier:
            for successor in graph.successors(node):
                if successor not in distance and successor not in members:
                    distance[successor] = step
                    reached.append(successor)
        frontier = reached
    found: dict[Point, dict[str, Any]] = {}
    for node in sorted(distance, key=lambda n: (distance[n], n)):
        for _, target, data in graph.out_edges(node, data=True):
            if target in members and target != source and target not in found:
                found[target] = {
                    "op": str(data.get("op", "")),
                    "approximate": bool(data.get("approximate")),
                    FOLDED: distance[node],
                }
    return found
