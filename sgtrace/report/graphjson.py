"""JSON renderers of the graph: node-link data (``trace --format json``, ``graph --json``) and GraphML."""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from sgtrace.graph.store import to_data
from sgtrace.model import TraceResult
from sgtrace.report.provenance import named, payload


def render(result: TraceResult) -> str:
    """``networkx.node_link_data`` of the slice; graph attributes carry the query, limits and errors."""
    data = to_data(result.graph)
    data["graph"] = {
        "attribute": result.attribute,
        "root": result.root,
        "truncated": result.truncated,
        "errors": [{"path": e.path, "line": e.line, "message": e.message} for e in result.errors],
        "tree": payload(result.tree),
    }
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def render_graphml(result: TraceResult) -> str:
    """GraphML (lists of guards and of call sites joined into one string, as GraphML holds only scalars)."""
    data = to_data(result.graph)
    graph: nx.DiGraph = nx.node_link_graph(data, directed=True, multigraph=False, edges="links")
    for _, attributes in graph.nodes(data=True):
        for name, value in list(attributes.items()):
            attributes[name] = _scalar(value)
    for _, _, attributes in graph.edges(data=True):
        for name, value in list(attributes.items()):
            attributes[name] = _scalar(value, ", ")  # call sites
    graph.graph = {"attribute": result.attribute, "root": result.root, "truncated": result.truncated}
    if result.tree is not None:  # GraphML holds scalars: what the tree is in words, and its commit when it has one
        graph.graph["tree"] = named(result.tree.display, result.tree)
        if result.tree.commit is not None:
            graph.graph["commit"] = result.tree.commit
    return '<?xml version="1.0" encoding="utf-8"?>\n' + "\n".join(nx.generate_graphml(graph)) + "\n"


def _scalar(value: Any, joint: str = " and ") -> Any:
    if isinstance(value, list):
        return joint.join(str(v) for v in value)
    return value
