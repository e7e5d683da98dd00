"""Smaller views of the graph, for pictures a person can read."""

from __future__ import annotations

import networkx as nx

from sgtrace.graph.points import Point


def upstream(graph: nx.DiGraph, hops: int) -> nx.DiGraph:
    """The writes of the attribute and what lies at most *hops* edges upstream of them."""
    seeds = [p for p in graph.nodes if graph.nodes[p].get("seed") == "write"]
    if not seeds:
        return graph.copy()
    distances: dict[Point, int] = nx.multi_source_dijkstra_path_length(graph.reverse(copy=False), seeds, cutoff=hops)
    view: nx.DiGraph = graph.subgraph(distances).copy()
    view.graph.update(graph.graph, upstream=hops)
    return view
