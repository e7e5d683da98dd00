"""The graph to and from ``networkx.node_link_data`` JSON (string node ids, Point fields as attributes)."""

from __future__ import annotations

from collections.abc import Callable
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
    """The graph back, with Point nodes; raises KeyError/TypeError/ValueError on foreign data (anything
    but what :func:`to_data` writes: every record, attribute and graph attribute is checked first)."""
    _check(data)
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


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _rows(*kinds: type) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return False
        shaped = (isinstance(row, list) and len(row) == len(kinds) for row in value)
        return all(shaped) and all(type(v) is k for row in value for v, k in zip(row, kinds, strict=True))

    return check


def _of(kind: type) -> Callable[[Any], bool]:
    return lambda value: type(value) is kind


#: Node, edge and graph attributes the slice writes, and what each must be.
_NODE: dict[str, Callable[[Any], bool]] = {
    "id": _of(str), "kind": _of(str), "label": _of(str), "path": _of(str), "line": _of(int), "code": _of(str),
    "owner": _of(str), "function": _of(str), "seed": _of(str), "hub": _of(int), "guard": _strings,
    "exits": _strings, "knobs": _strings,
}  # fmt: skip
_EDGE: dict[str, Callable[[Any], bool]] = {
    "source": _of(str), "target": _of(str), "op": _of(str), "approximate": _of(bool), "side": _of(bool),
    "enter": _strings, "exit": _strings,
}  # fmt: skip
_GRAPH: dict[str, Callable[[Any], bool]] = {
    "attribute": _of(str), "truncated": _of(bool), "errors": _rows(str, int, str), "calls": _rows(str, str, str, int),
    "reach": lambda value: isinstance(value, dict),  # read field by field where it is used (analyses.reached)
    "loads": lambda value: isinstance(value, dict),  # the same shape, read the same way
    "sizing": lambda value: isinstance(value, dict),  # the same shape, read the same way
}  # fmt: skip


def _check(data: Any) -> None:
    """ValueError unless *data* has the shape :func:`to_data` gives (a cache entry may be forged)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("links"), list):
        raise ValueError("not a graph")
    graph = data.get("graph", {})
    if not isinstance(graph, dict) or not all(k in _GRAPH and _GRAPH[k](v) for k, v in graph.items()):
        raise ValueError("a graph attribute of the wrong shape")
    shapes = ((data["nodes"], _NODE, ("id", *_POINT_FIELDS)), (data["links"], _EDGE, ("source", "target")))
    for records, kinds, required in shapes:
        for record in records:
            if not isinstance(record, dict) or not all(k in record for k in required):
                raise ValueError("a node or edge that is not a record")
            if not all(k in kinds and kinds[k](v) for k, v in record.items()):
                raise ValueError("a node or edge attribute of the wrong shape")
