"""DOT renderer of the graph: deterministic (sorted), clustered by file and class."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from sgtrace.graph.points import Point
from sgtrace.graph.store import node_id

_SHAPES = {
    "write": "box",
    "field": "box",
    "local": "ellipse",
    "read": "ellipse",
    "param": "cds",
    "return": "rarrow",
    "knob": "doubleoctagon",
    "env": "hexagon",
    "const": "plaintext",
    "call": "component",
    "global": "note",
    "unknown": "egg",
}
_COLOURS = {"knob": "#f4a261", "env": "#e9c46a", "write": "#a8dadc", "field": "#cdb4db", "unknown": "#dddddd"}


def render(graph: nx.DiGraph, title: str = "sgtrace") -> str:
    """The graph in Graphviz DOT."""
    lines = [
        f"digraph {_quote(title)} {{",
        "  graph [rankdir=LR, fontname=Helvetica, fontsize=10, newrank=true];",
        "  node [fontname=Helvetica, fontsize=9, style=filled, fillcolor=white];",
        "  edge [fontname=Helvetica, fontsize=8];",
    ]
    files: dict[str, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    for point in sorted(graph.nodes):
        owner = graph.nodes[point].get("owner") or ""
        files[point.path][owner].append(point)
    for index, path in enumerate(sorted(files)):
        indent = "  "
        if path:
            lines.append(f"  subgraph cluster_{index} {{")
            lines.append(f"    label={_quote(path)}; style=rounded; color=gray60;")
            indent = "    "
        for position, owner in enumerate(sorted(files[path])):
            inner = indent
            if owner:
                lines.append(f"{indent}subgraph cluster_{index}_{position} {{")
                lines.append(f"{indent}  label={_quote(owner.rsplit('.', 1)[-1])}; style=dashed; color=gray70;")
                inner = indent + "  "
            for point in files[path][owner]:
                lines.append(f"{inner}{_node(point, graph.nodes[point])}")
            if owner:
                lines.append(f"{indent}}}")
        if path:
            lines.append("  }")
    for source, target in sorted(graph.edges):
        attributes = graph.edges[source, target]
        style = ", style=dashed" if attributes.get("approximate") else ""
        lines.append(
            f"  {_quote(node_id(source))} -> {_quote(node_id(target))} [label={_quote(attributes['op'])}{style}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node(point: Point, attributes: dict[str, Any]) -> str:
    where = f"\\n:{point.line}" if point.line else ""
    label = f"{point.label}{where}"
    shape = _SHAPES.get(point.kind, "ellipse")
    colour = _COLOURS.get(point.kind, "white")
    extra = ", penwidth=2" if attributes.get("seed") == "write" else ""
    return f"{_quote(node_id(point))} [label={_quote(label)}, shape={shape}, fillcolor={_quote(colour)}{extra}];"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n")
    return f'"{escaped}"'
