"""DOT renderer of the graph: deterministic (sorted), clustered by file and class."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from sgtrace.analyses.focus import FOLDED, ROLE, ROLES
from sgtrace.graph.points import Point
from sgtrace.graph.store import node_id
from sgtrace.report.graph_view import op_group, subtitle
from sgtrace.report.graph_view import title as box_title

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


#: Fill colours of the focused graph's roles (as the HTML report draws them).
_ROLE_COLOURS = {"knob": "#fde2c4", "budget": "#ffd6d6", "cap": "#d9e8fb", "pool": "#d7f0dd", "reader": "#ece6f5"}
#: Edge colours of the op groups (``report.graph_view.OP_GROUPS``).
_OP_COLOURS = {"copy": "#8d94a3", "arithmetic": "#2f6fb2", "min / max / reduce": "#d62728", "call": "#8e44ad",
               "other": "#b8860b"}  # fmt: skip


def render_focus(graph: nx.DiGraph, title: str = "sgtrace") -> str:
    """The focused graph (``analyses.focus``) in DOT: one column per role, left to right, and a legend."""
    lines = [
        f"digraph {_quote(title)} {{",
        "  graph [rankdir=LR, fontname=Helvetica, fontsize=10, newrank=true, nodesep=0.15, ranksep=1.1];",
        '  node [fontname=Helvetica, fontsize=9, shape=box, style="rounded,filled", fillcolor=white];',
        '  edge [fontname=Helvetica, fontsize=8, color="#8d94a3"];',
    ]
    for role in ROLES:
        nodes = sorted(n for n in graph.nodes if graph.nodes[n].get(ROLE) == role)
        if not nodes:
            continue
        lines.append(f"  subgraph {_quote('role_' + role)} {{ rank=same;")
        for node in nodes:
            data = graph.nodes[node]
            label = f"{box_title(node, data)}\\n{subtitle(node, data)}"
            extra = ", penwidth=2" if data.get("why") == "the budget knob" else ""
            lines.append(
                f"    {_quote(node_id(node))} [label={_quote(label)}, fillcolor={_quote(_ROLE_COLOURS[role])}{extra}];"
            )
        lines.append("  }")
    for source, target in sorted(graph.edges):
        data = graph.edges[source, target]
        group = op_group(str(data.get("op", "")))
        label = "" if group == "copy" else f", label={_quote(str(data.get('op')))}"
        style = ", style=dashed" if data.get(FOLDED) else ""
        colour = _quote(_OP_COLOURS[group])
        lines.append(f"  {_quote(node_id(source))} -> {_quote(node_id(target))} [color={colour}{label}{style}];")
    lines += _legend()
    lines.append("}")
    return "\n".join(lines) + "\n"


def _legend() -> list[str]:
    """A cluster naming the roles' colours and the edges' colours and styles."""
    lines = ["  subgraph cluster_legend {", '    label="legend"; style=rounded; color=gray60; fontsize=9;']
    for role in ROLES:
        lines.append(f"    {_quote('legend_' + role)} [label={_quote(role)}, fillcolor={_quote(_ROLE_COLOURS[role])}];")
    names = list(ROLES)
    for a, b in zip(names, names[1:], strict=False):
        lines.append(f"    {_quote('legend_' + a)} -> {_quote('legend_' + b)} [style=invis];")
    for group, colour in _OP_COLOURS.items():
        left, right = _quote(f"legend_op_{group}"), _quote(f"legend_op_{group}_end")
        lines.append(f'    {left} [label={_quote(group)}, shape=plaintext, style=""];')
        lines.append(f'    {right} [label="", shape=point, width=0.05];')
        lines.append(f"    {left} -> {right} [color={_quote(colour)}];")
    lines.append('    "legend_folded" [label="dashed: through steps not shown", shape=plaintext, style=""];')
    lines.append("  }")
    return lines
