"""A graph and its drawing as what the page's SVG needs: boxes with labels, curved edges, a legend, node details."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import networkx as nx

from sgtrace.analyses.focus import FOLDED, MEMBERS, ROLE, ROLES
from sgtrace.graph.points import Point
from sgtrace.report.layout import COLUMN_GAP, NODE_HEIGHT, NODE_WIDTH, Drawing, Route

#: Edge operations by the group the legend names and the page colours.
OP_GROUPS: dict[str, tuple[str, ...]] = {
    "copy": ("copy", "param", "field", "property", "read", "default", "return", "element", "unpack", "for"),
    "arithmetic": ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "neg"),
    "min / max / reduce": ("min", "max", "reduce"),
    "call": ("call", "arg"),
}
#: The legend's words for each op group.
OP_NOTES = {
    "copy": "passes the value on (assignment, argument, return, field)",
    "arithmetic": "combines it with another quantity",
    "min / max / reduce": "bounds it by another quantity, or across ranks",
    "call": "a call's argument or result",
    "other": "any other operation (condition, subscript, ...)",
}
#: Characters of a label kept on a box.
_LABEL = 31


@dataclass(frozen=True, slots=True)
class NodeShape:
    """One node as drawn."""

    #: Its id in the page (``n12``).
    ident: str
    #: ``path:line``, or the label for a node outside the code (a knob).
    where: str
    #: CSS classes: role, kind, category, status.
    classes: str
    #: Top-left corner, px.
    x: float
    y: float
    #: The box's two lines.
    title: str
    subtitle: str
    #: The tooltip (shown without JavaScript too).
    tooltip: str


@dataclass(frozen=True, slots=True)
class EdgeShape:
    """One edge as drawn."""

    #: SVG path data.
    d: str
    #: CSS classes: the op group, folded or not, approximate.
    classes: str
    #: The label (the op) and where it goes, "" for a plain copy.
    label: str
    lx: float
    ly: float
    #: The tooltip.
    tooltip: str
    #: Ids of its source and target nodes.
    source: str = ""
    target: str = ""


@dataclass(frozen=True)
class GraphShape:
    """A whole drawn graph."""

    nodes: tuple[NodeShape, ...]
    edges: tuple[EdgeShape, ...]
    width: float
    height: float
    #: Column headings and their x.
    headings: tuple[tuple[str, float], ...]


def shape(
    graph: nx.DiGraph,
    drawing: Drawing,
    prefix: str,
    classes: Callable[[Point, dict[str, Any]], str],
    headings: tuple[str, ...] = (),
) -> GraphShape:
    """The SVG's parts of *graph* drawn as *drawing*; node ids start with *prefix*."""
    ids = {box.node: f"{prefix}{i}" for i, box in enumerate(drawing.boxes)}
    nodes = tuple(
        NodeShape(
            ident=ids[box.node],
            where=where(box.node),
            classes=classes(box.node, graph.nodes[box.node]),
            x=round(box.x - NODE_WIDTH / 2, 1),
            y=round(box.y - NODE_HEIGHT / 2, 1),
            title=_cut(title(box.node, graph.nodes[box.node])),
            subtitle=_cut(subtitle(box.node, graph.nodes[box.node]), middle=True),
            tooltip=_tooltip(box.node, graph.nodes[box.node]),
        )
        for box in drawing.boxes
    )
    same_column = {
        (r.source, r.target) for r in drawing.routes if len(r.points) == 2 and r.points[0][0] == r.points[1][0]
    }
    edges = tuple(
        replace(_edge(graph, route, (route.source, route.target) in same_column), source=ids[route.source],
                target=ids[route.target])
        for route in drawing.routes
    )  # fmt: skip
    named = tuple(zip(headings, drawing.columns, strict=False))
    return GraphShape(nodes, edges, round(drawing.width, 1), round(drawing.height + 8, 1), named)


def where(node: Point) -> str:
    """``path:line`` of a node in the code, its label otherwise (a knob, an environment variable)."""
    return f"{node.path}:{node.line}" if node.path else node.label


def title(node: Point, data: dict[str, Any]) -> str:
    """The box's first line: what the node is, in few words."""
    role = data.get(ROLE)
    if role == "cap":
        return f"{data.get('category', 'cap')} · {str(data.get('function') or node.label).rsplit('.', 1)[-1]}"
    if role == "reader":
        count = len(data.get(MEMBERS) or ())
        return f"{node.label} ({count} read{'s' if count != 1 else ''})"
    if role in ("pool", "budget"):
        owner = str(data.get("function") or node.label)
        return f"{_short(owner)}" if role == "pool" else node.label.rsplit(".", 1)[-1]
    return node.label


def subtitle(node: Point, data: dict[str, Any]) -> str:
    """The box's second line: the file and line, or the node's kind."""
    if not node.path:
        return node.kind
    folder, _, name = node.path.rpartition("/")
    if data.get(ROLE) != "reader":
        return f"{name}:{node.line}"
    return folder.rpartition("/")[2] + "/" if folder else "./"  # a module at the top of the tree: its folder


def details(graph: nx.DiGraph, ids: dict[Point, str], link: Callable[[str, int], str]) -> dict[str, dict[str, Any]]:
    """What a click on a node shows: where, code, why it is there, its reads (for a reader group)."""
    found: dict[str, dict[str, Any]] = {}
    for node, ident in ids.items():
        data = graph.nodes[node]
        role = str(data.get(ROLE) or node.kind)
        found[ident] = {
            "label": node.label,
            "kind": node.kind,
            "role": role,
            "where": where(node),
            "link": link(node.path, node.line) if node.path else "",
            "code": str(data.get("code") or ""),
            "why": str(data.get("why") or ROLES.get(role) or f"a {node.kind} of the slice"),
            "function": str(data.get("function") or ""),
            "guard": " and ".join(data.get("guard") or ()),
            "status": str(data.get("status") or ""),
            "members": [
                {"where": f"{path}:{line}", "link": link(path, line), "code": code}
                for path, line, code in data.get(MEMBERS) or ()
            ],
        }
    return found


def op_group(op: str) -> str:
    """The legend's group of an edge operation."""
    base = op.split("[", 1)[0]
    return next((name for name, ops in OP_GROUPS.items() if base in ops), "other")


def css_name(text: str) -> str:
    """*text* as a CSS class word."""
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def _edge(graph: nx.DiGraph, route: Route, same_column: bool) -> EdgeShape:
    data = graph.edges[route.source, route.target]
    op = str(data.get("op", ""))
    folded = int(data.get(FOLDED) or 0)
    classes = (
        f"edge op-{css_name(op_group(op))}"
        + (" folded" if folded else "")
        + (" arc" if same_column else "")
        + (" approximate" if data.get("approximate") else "")
    )
    d, (lx, ly) = _path(route.points, same_column)
    label = "" if op_group(op) == "copy" or same_column else ("~" if data.get("approximate") else "") + op
    through = f", through {folded} step{'s' if folded != 1 else ''} of the slice" if folded else ""
    tooltip = f"{route.source.label} -{op}-> {route.target.label}{through}"
    return EdgeShape(d, classes, label, round(lx, 1), round(ly, 1), tooltip)


def _path(points: tuple[tuple[float, float], ...], same_column: bool) -> tuple[str, tuple[float, float]]:
    """Smooth curves through the points, leaving and entering horizontally; an arc on the right for one column."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    if same_column:
        bulge = min(COLUMN_GAP * 0.8, 14 + abs(y1 - y0) / 6)
        return f"M{x0:.1f},{y0:.1f} C{x0 + bulge:.1f},{y0:.1f} {x1 + bulge:.1f},{y1:.1f} {x1:.1f},{y1:.1f}", (
            x0 + bulge * 0.75,
            (y0 + y1) / 2,
        )
    parts = [f"M{x0:.1f},{y0:.1f}"]
    for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
        half = (bx - ax) / 2
        parts.append(f"C{ax + half:.1f},{ay:.1f} {bx - half:.1f},{by:.1f} {bx:.1f},{by:.1f}")
    (ax, ay), (bx, by) = points[-2], points[-1]
    return " ".join(parts), ((ax + bx) / 2, (ay + by) / 2 - 3)


def _tooltip(node: Point, data: dict[str, Any]) -> str:
    code = " ".join(str(data.get("code") or "").split())
    lines = [node.label, where(node) if node.path else node.kind]
    if code:
        lines.append(code if len(code) <= 160 else code[:157] + "...")
    return "\n".join(lines)


def _short(qualified: str) -> str:
    """``Class.method`` stays; a longer dotted name keeps its last two parts."""
    return ".".join(qualified.split(".")[-2:])


def _cut(text: str, middle: bool = False) -> str:
    """*text* within a box's width: its end cut off, or its middle (a file name keeps its line number)."""
    if len(text) <= _LABEL:
        return text
    if middle:
        keep = _LABEL - 1
        return text[: keep - keep // 2] + "…" + text[-(keep // 2) :]
    return text[: _LABEL - 1] + "…"
