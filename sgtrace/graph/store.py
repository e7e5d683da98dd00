"""The graph to and from ``networkx.node_link_data`` JSON (string node ids, Point fields as attributes)."""

from __future__ import annotations

from typing import Any

import networkx as nx

from sgtrace.graph.points import Point

#: Node attributes that make up a Point.
_POINT_FIELDS = ("kind", "label", "path", "line")


def node_id(point: Point) -> str:
    """A stable, readable id: ``kind:path:line:label``."""
    return f"{point.kind}:{point.path}:{point.line}:{point.label}"


def to_data(graph: nx.DiGraph) -> dict[str, Any]:
    """node-link data with sorted nodes and edges (deterministic output)."""
    relabelled = nx.DiGraph()
    for point in sorted(graph.nodes):
        relabelled.add_node(node_id(point), **_plain(graph.nodes[point]))
    for source, target in sorted(graph.edges):
        relabelled.add_edge(node_id(source), node_id(target), **_plain(graph.edges[source, target]))
    relabelled.graph.update(_plain(graph.graph))
    data: dict[str, Any] = nx.node_link_data(relabelled, edges="links")
    return data


def skeleton(graph: nx.DiGraph) -> nx.DiGraph:
    """The nodes and edges alone, in the order ``from_data(to_data(graph))`` gives them back (sorted)."""
    ordered = nx.DiGraph()
    ordered.add_nodes_from(sorted(graph.nodes))
    ordered.add_edges_from(sorted(graph.edges))
    return ordered


def from_data(data: dict[str, Any]) -> nx.DiGraph:
    """The graph back, with Point nodes; raises KeyError/TypeError/ValueError on foreign data."""
    loaded = nx.node_link_graph(data, directed=True, multigraph=False, edges="links")
    graph = nx.DiGraph()
    graph.graph.update(loaded.graph)
    points = {}
    for name, attributes in loaded.nodes(data=True):
        point = Point(
            str(attributes["kind"]), str(attributes["label"]), str(attributes["path"]), int(attributes["line"])
        )
        points[name] = point
        graph.add_node(point, **attributes)
    for source, target, attributes in loaded.edges(data=True):
        graph.add_edge(points[source], points[target], **attributes)
    return graph


def _plain(attributes: dict[str, Any]) -> dict[str, Any]:
    """JSON-friendly attributes: tuples become lists, None is dropped."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items() if v is not None}
