"""A layered drawing of a graph, left to right: networkx chooses the layers, grandalf orders and places.

The layers are networkx's topological generations of the graph made acyclic
(within a strongly connected component, an edge against the nodes' order is
turned round), so every edge goes one or more columns to the right, or back for a
turned one; the sources take the first column, and the sinks asked for the last. Each
connected component is drawn by grandalf's Sugiyama layout (the algorithm of
Graphviz's dot: crossings reduced by barycentres, coordinates by Brandes and
Köpf, a dummy vertex where an edge crosses a column, which routes it) and the
components are stacked top to bottom. See docs/report.md for why grandalf.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
from grandalf.graphs import Edge as GEdge
from grandalf.graphs import Vertex, graph_core
from grandalf.layouts import Layer, SugiyamaLayout
from grandalf.utils.poset import Poset

#: Width and height of a node's box, and the gaps between columns and between boxes of a column (px).
NODE_WIDTH, NODE_HEIGHT, COLUMN_GAP, ROW_GAP = 200.0, 34.0, 80.0, 12.0
#: Margin around the drawing (px).
MARGIN = 16.0


@dataclass(frozen=True, slots=True)
class Box:
    """Where a node is drawn: its centre and its column."""

    #: The node of the graph.
    node: Any
    #: Centre, px from the left.
    x: float
    #: Centre, px from the top.
    y: float
    #: Column, 0 on the left.
    column: int


@dataclass(frozen=True, slots=True)
class Route:
    """The way an edge is drawn: its points from the source's box to the target's."""

    #: The edge's source node.
    source: Any
    #: The edge's target node.
    target: Any
    #: Points, px: on the source's border, through the columns between, on the target's border.
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Drawing:
    """A laid out graph."""

    #: One box per node, in the graph's node order.
    boxes: tuple[Box, ...]
    #: One route per edge.
    routes: tuple[Route, ...]
    #: Size of the whole drawing, px.
    width: float
    height: float
    #: The x of each column's centre.
    columns: tuple[float, ...]


def layout(
    graph: nx.DiGraph,
    key: Callable[[Any], Any],
    column: Callable[[Any], int] | None = None,
    passes: float = 3,
) -> Drawing:
    """*graph* laid out left to right; *key* orders nodes (and decides which edge of a cycle turns round).

    *column* gives each node's column; without it, the columns are the generations (see the module doc).
    Edges between nodes of one column are drawn as arcs on its right.
    """
    if column is None:
        forward = _acyclic(graph, key)
        ranks = _ranks(forward)
    else:
        ranks = {n: column(n) for n in graph.nodes}
        forward = nx.DiGraph()
        forward.add_nodes_from(sorted(graph.nodes, key=key))
        forward.add_edges_from(
            sorted((u, v) if ranks[u] < ranks[v] else (v, u) for u, v in graph.edges if ranks[u] != ranks[v])
        )
    columns = tuple(
        MARGIN + NODE_WIDTH / 2 + c * (NODE_WIDTH + COLUMN_GAP) for c in range(max(ranks.values(), default=0) + 1)
    )
    boxes: dict[Any, Box] = {}
    routes: dict[tuple[Any, Any], tuple[tuple[float, float], ...]] = {}
    top = MARGIN
    parts = sorted(nx.weakly_connected_components(forward), key=lambda c: (-len(c), key(min(c, key=key))))
    for part in parts:
        placed, routed, height = _component(forward, sorted(part, key=key), ranks, columns, top, passes)
        boxes.update(placed)
        routes.update(routed)
        top += height + ROW_GAP * 2
    drawn = tuple(_route(boxes, u, v, routes) for u, v in graph.edges)
    width = (columns[-1] + NODE_WIDTH / 2 + MARGIN) if columns else 2 * MARGIN
    return Drawing(
        tuple(boxes[n] for n in graph.nodes), drawn, width, max(top - ROW_GAP * 2 + MARGIN, 2 * MARGIN), columns
    )


def _acyclic(graph: nx.DiGraph, key: Callable[[Any], Any]) -> nx.DiGraph:
    """The graph with every edge that goes against *key* inside a cycle turned round."""
    component = {n: i for i, part in enumerate(nx.strongly_connected_components(graph)) for n in part}
    forward = nx.DiGraph()
    forward.add_nodes_from(sorted(graph.nodes, key=key))
    for u, v in sorted(graph.edges, key=lambda e: (key(e[0]), key(e[1]))):
        if u == v:
            continue
        if component[u] == component[v] and key(v) < key(u):
            u, v = v, u
        forward.add_edge(u, v)
    return forward


def _ranks(forward: nx.DiGraph) -> dict[Any, int]:
    """Column of each node: its topological generation, a source just before the first node it feeds."""
    ranks = {n: i for i, layer in enumerate(nx.topological_generations(forward)) for n in layer}
    for node in [n for n in forward.nodes if forward.in_degree(n) == 0 and forward.out_degree(n)]:
        ranks[node] = min(ranks[s] for s in forward.successors(node)) - 1
    return ranks


class _Given(SugiyamaLayout):  # type: ignore[misc]
    """grandalf's Sugiyama layout on layers chosen beforehand (networkx's generations) rather than its own."""

    def __init__(self, core: Any, ranks: dict[Any, int]) -> None:
        super().__init__(core)
        self.given = ranks

    def rank_all(self, roots: Any, optimize: bool = False) -> None:
        self.layers = [Layer([]) for _ in range(max(self.given.values()) + 1)]
        for vertex in self.g.sV:
            self.grx[vertex].rank = self.given[vertex]
            self.layers[self.given[vertex]].append(vertex)

    def _detect_alignment_conflicts(self) -> None:
        """grandalf's, kept as a set: it asks ``pair in self.conflicts`` for every median of every layer
        (a list made that quadratic: 0.9 s of the whole slice's layout on SGLang 0.5.23)."""
        super()._detect_alignment_conflicts()
        self.conflicts: set[Any] = set(self.conflicts)

    def dummyctrl(self, r: int, ctrl: dict[int, Any]) -> Any:
        """A dummy vertex (where an edge crosses a column) as thin as a line, not as tall as a node."""
        dummy = super().dummyctrl(r, ctrl)
        dummy.view.w = ROW_GAP
        return dummy


class _Connected(Poset):  # type: ignore[misc]
    """The component of every vertex, known connected beforehand (networkx split the graph): grandalf's
    ``graph_core`` checks connectivity by comparing each vertex's component with the graph's as sets, a set
    of the whole component per vertex (0.19 s of the whole slice's layout on SGLang 0.5.23); one object
    shared by all is the same component."""

    def __ne__(self, other: object) -> bool:
        return self is not other


class _View:
    """What grandalf reads of a vertex: its size (turned: grandalf lays out top to bottom) and, after, its centre."""

    def __init__(self) -> None:
        self.w, self.h = NODE_HEIGHT + ROW_GAP, NODE_WIDTH
        self.xy = (0.0, 0.0)


def _component(
    forward: nx.DiGraph, nodes: list[Any], ranks: dict[Any, int], columns: tuple[float, ...], top: float, passes: float
) -> tuple[dict[Any, Box], dict[tuple[Any, Any], tuple[tuple[float, float], ...]], float]:
    """One connected component laid out by grandalf, its rows starting at *top*: boxes, routes, height."""
    low = min(ranks[n] for n in nodes)
    vertices = {n: Vertex(n) for n in nodes}
    component = _Connected([])
    for vertex in vertices.values():
        vertex.view = _View()
        vertex.c = component
    edges = {(u, v): GEdge(vertices[u], vertices[v]) for u, v in forward.subgraph(nodes).edges}
    core = graph_core(list(vertices.values()), list(edges.values()), directed=True)
    sugiyama = _Given(core, {vertices[n]: ranks[n] - low for n in nodes})
    sugiyama.init_all(roots=[vertices[n] for n in nodes if forward.in_degree(n) == 0], inverted_edges=[])
    sugiyama.draw(passes)
    across = [v.view.xy[0] for v in vertices.values()]
    across += [d.view.xy[0] for e in edges.values() for d in sugiyama.ctrls.get(e, {}).values()]
    shift = top + NODE_HEIGHT / 2 - min(across)
    boxes = {n: Box(n, columns[ranks[n]], vertices[n].view.xy[0] + shift, ranks[n]) for n in nodes}
    routes = {}
    for (u, v), edge in edges.items():
        inner = sugiyama.ctrls.get(edge, {})
        middle = [
            (columns[r + low], inner[r].view.xy[0] + shift)
            for r in sorted(inner)
            if r not in (ranks[u] - low, ranks[v] - low)
        ]
        routes[(u, v)] = tuple(middle)
    return boxes, routes, max(across) - min(across) + NODE_HEIGHT


def _route(
    boxes: dict[Any, Box], u: Any, v: Any, inner: dict[tuple[Any, Any], tuple[tuple[float, float], ...]]
) -> Route:
    """An edge's points: out of the source's right side, through its dummies, into the target's left side."""
    source, target = boxes[u], boxes[v]
    middle = inner.get((u, v))
    if middle is None:
        middle = tuple(reversed(inner.get((v, u), ())))
    half = NODE_WIDTH / 2
    if target.column > source.column:
        points = ((source.x + half, source.y), *middle, (target.x - half, target.y))
    elif target.column < source.column:
        points = ((source.x - half, source.y), *middle, (target.x + half, target.y))
    else:  # the same column: out of the right side and back in
        points = ((source.x + half, source.y), (target.x + half, target.y))
    return Route(u, v, points)
