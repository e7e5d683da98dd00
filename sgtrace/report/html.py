"""``sgtrace report``: one self-contained HTML page, rendered with Jinja2 (autoescaped) from the api's ReportResult.

Everything is inline: the CSS, the script (allowed by its hash in the page's
Content-Security-Policy, which also forbids any request), the graphs as SVG laid
out in Python (``report.layout``), and the nodes' details as JSON. Code read from
the analysed tree only ever reaches the page as escaped text.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from sgtrace import __version__
from sgtrace.analyses.categories import CATEGORIES
from sgtrace.analyses.focus import ROLE, ROLES
from sgtrace.analyses.ledger import LAST_FREE, LEFT
from sgtrace.api import ReportResult
from sgtrace.fetch import SPEC, is_spec
from sgtrace.graph.points import Point
from sgtrace.graph.store import skeleton
from sgtrace.report import graph_view, layout
from sgtrace.report.history import verdict_line
from sgtrace.report.history_view import history_view
from sgtrace.report.operator_text import answer
from sgtrace.report.provenance import described, order_line
from sgtrace.report.upgrade import upgrade
from sgtrace.sources import Target

#: Projects whose releases link to their repository at the release's tag: name -> URL of a file at a line.
UPSTREAM = {"sglang": "https://github.com/sgl-project/sglang/blob/v{version}/python/{path}#L{line}"}
#: The focused graph's columns, left to right.
_COLUMNS = ("knob", "budget", "cap", "pool", "reader")
_HEADINGS = ("knobs", "budget sites", "caps", "pool writes", "readers")
#: Colours of the ledger's parts, in order (the total is not drawn).
_LEDGER_COLOURS = ("#4e79a7", "#e15759", "#f28e2b", "#76b7b2", "#ff9da7", "#edc948", "#59a14f", "#9c755f", "#bab0ac")


@dataclass(frozen=True, slots=True)
class Links:
    """How the page links a line of the tree, and what it says about it."""

    #: path, line -> URL.
    url: Callable[[str, int], str]
    #: A sentence for the page.
    note: str


def render(result: ReportResult, ahead: WholeAhead | None = None) -> str:
    """The page; *ahead* may hold the whole slice laid out already (see :class:`WholeAhead`)."""
    links = links_for(result.target)
    template = _environment().get_template("report.html.j2")
    script = _asset("report.js")
    return template.render(
        title=f"sgtrace report: .{result.caps.attribute} in {result.target.display}",
        version=__version__,
        tree=described(result.target.identity),
        backwards=order_line(result.against[2].order, result.old.display, result.target.display)
        if result.against is not None and result.old is not None
        else "",
        result=result,
        links=links,
        css=_asset("report.css"),
        script=script,
        script_hash=base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii"),
        explained=_explained(result),
        caps=_caps(result, links),
        categories=CATEGORIES,
        box=(layout.NODE_WIDTH, layout.NODE_HEIGHT),
        focus=_focus(result, links),
        whole=_Whole(result, links, ahead),
        upgrade=upgrade(result.against, result.old.display if result.old else "", result.target.display, links.url)
        if result.against is not None
        else None,
        history=history_view(result.history[0], result.history[1], verdict_line(result.history[0]))
        if result.history is not None
        else None,
    )


def links_for(target: Target) -> Links:
    """Upstream links at the release's tag for a release of a known project, else local ``file:`` links."""
    match = SPEC.match(target.display)
    pattern = UPSTREAM.get(match["name"].lower()) if match and is_spec(target.display) else None
    if match and pattern:
        version = match["version"]
        return Links(
            lambda path, line: pattern.format(version=version, path=path, line=line),
            f"Links open the upstream repository at the tag of {target.display} (v{version}).",
        )
    root = Path(target.path).resolve()
    base = root if root.is_dir() else root.parent
    return Links(lambda path, line: (base / path).as_uri(), f"Links open the local files under {base}.")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("sgtrace.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _asset(name: str) -> str:
    return (resources.files("sgtrace.report") / "templates" / name).read_text(encoding="utf-8")


def _explained(result: ReportResult) -> dict[str, Any] | None:
    """Section (a) and (b): the answer, the figures, the start-ups, the ledger as a chart."""
    if result.explained is None:
        return None
    explanation, context = result.explained
    run = context.runs[context.run - 1] if context.runs else None
    product = context.multiplied
    cell = explanation.cell
    by_cell = f"; {cell.tokens:,} tokens by its cell size" if cell is not None and cell.tokens is not None else ""
    figures = [("predicted KV pool", _gb(explanation.kv_budget_gb), f"the budget formula, evaluated{by_cell}")]
    if explanation.observed_kv_gb is not None:
        tokens = f", {explanation.observed_tokens:,.0f} tokens" if explanation.observed_tokens else ""
        figures.append(("observed KV pool", _gb(explanation.observed_kv_gb), f"the log{tokens}"))
    if product is not None and product.value is not None:
        fraction = explanation.inputs.get(result.caps.budget)
        what = f"{result.caps.budget} = {fraction:g} multiplies it" if isinstance(fraction, float) else ""
        figures.append((product.source, _gb(product.value), what))
    left = next((row for row in context.ledger if row.item in (LEFT, LAST_FREE)), None)
    if left is not None:
        figures.append((left.item, _gb(left.gb), f"log line {left.line}"))
    return {
        "answer": answer(result.caps.budget, explanation, context),
        "figures": figures,
        "runs": context.runs,
        "run": run,
        "steps": explanation.steps,
        "ledger": _ledger(context.ledger, result.log_lines),
        "missing": sorted(explanation.missing.items()),
    }


def _ledger(rows: Any, log_lines: dict[int, str]) -> dict[str, Any] | None:
    """The ledger's parts as a stacked bar (shares of 1000 units) with their log lines."""
    if not rows:
        return None
    parts = [row for row in rows[1:] if row.gb > 0]
    total = sum(row.gb for row in parts) or 1.0
    bars, start = [], 0.0
    for index, row in enumerate(parts):
        width = row.gb / total * 1000
        colour = _LEDGER_COLOURS[index % len(_LEDGER_COLOURS)]
        bars.append({"row": row, "x": round(start, 2), "width": round(width, 2), "colour": colour,
                     "share": row.gb / total, "text": log_lines.get(row.line or 0, "")})  # fmt: skip
        start += width
    return {"total": rows[0], "total_text": log_lines.get(rows[0].line or 0, ""), "bars": bars}


def _caps(result: ReportResult, links: Links) -> list[dict[str, Any]]:
    """Section (c): each cap in application order, with its status for the run when one was explained."""
    statuses = {}
    if result.explained is not None:
        statuses = {(c.path, c.line, c.category): (s, why) for c, s, why in result.explained[0].caps}
    rows = []
    for index, cap in enumerate(result.caps.caps, 1):
        status, why = statuses.get((cap.path, cap.line, cap.category), ("", ""))
        rows.append({"index": index, "cap": cap, "status": status, "why": why, "link": links.url(cap.path, cap.line),
                     "status_class": graph_view.css_name(status)})  # fmt: skip
    return rows


def _focus(result: ReportResult, links: Links) -> dict[str, Any]:
    """Section (d): the focused graph drawn, its legend and its nodes' details."""
    graph = result.focus
    statuses = {(c.path, c.line): s for c, s, _ in result.explained[0].caps} if result.explained else {}
    for node in graph.nodes:
        if graph.nodes[node].get(ROLE) == "cap" and (node.path, node.line) in statuses:
            graph.nodes[node]["status"] = statuses[(node.path, node.line)]
    columns = {role: i for i, role in enumerate(_COLUMNS)}
    drawing = layout.layout(graph, _order(graph), column=lambda n: columns[graph.nodes[n][ROLE]])
    shaped = graph_view.shape(graph, drawing, "f", _focus_classes, _HEADINGS)
    ids = {box.node: node.ident for box, node in zip(drawing.boxes, shaped.nodes, strict=True)}
    roles = [(role, ROLES[role], sum(1 for n in graph.nodes if graph.nodes[n].get(ROLE) == role)) for role in _COLUMNS]
    ops = [(graph_view.css_name(group), group, note) for group, note in graph_view.OP_NOTES.items()]
    details = graph_view.details(graph, ids, links.url)
    return {"shape": shaped, "details": details, "roles": roles, "ops": ops,
            "nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}  # fmt: skip


def whole_drawing(graph: Any) -> layout.Drawing:
    """The whole slice laid out (by generations), for the control that expands to it."""
    return layout.layout(graph, _slice_order, passes=1.5)


def _slice_order(node: Point) -> tuple[Any, ...]:
    return (node.path, node.line, node.label, node.kind)


class WholeAhead:
    """The whole slice laid out in another process while the rest of the report is worked out.

    Its layout is the page's largest single step (0.35 s of a cold report of SGLang 0.5.23); handed to a
    process of its own as soon as the slice exists, it runs beside the caps, the way in, ``explain``,
    ``diff`` and the page's other parts. Only when a core is idle at that moment
    (:func:`~sgtrace.index.findpass.spare_cpus`) or ``-j`` asks for 2 or more, never with ``-j 1``;
    otherwise, or if the process fails, it is laid out here, the same drawing either way.
    """

    def __init__(self, jobs: int | None = None) -> None:
        #: ``-j``: 1 keeps everything in this process.
        self.jobs = jobs
        self._pool: Any = None
        self._future: Any = None

    def start(self, graph: Any) -> None:
        """Lay *graph* out in another process, if a core is idle now (and ``-j`` is not 1)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from sgtrace.index.findpass import spare_cpus

        if self._pool is not None or self.jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
            return
        if self.jobs is None and spare_cpus() < 2:
            return
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
        # in the order the cache gives the finished graph back: the same drawing (the layout reads no attribute)
        self._future = self._pool.submit(whole_drawing, skeleton(graph))

    def drawing(self) -> layout.Drawing | None:
        """The drawing the other process made; None if there is none (lay it out here)."""
        if self._future is None:
            return None
        try:
            found: layout.Drawing = self._future.result()
            return found
        except Exception:  # noqa: BLE001 (a worker that died or failed: the parent lays it out itself)
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the other process (dropping its work if not needed)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool, self._future = None, None


class _Whole:
    """The whole slice's part of the page: its counts at once, its drawing when the template first needs it.

    The drawing is asked for late in the page (the graph section), so that a layout made in another
    process (:class:`WholeAhead`) has the page's earlier parts to run beside.
    """

    def __init__(self, result: ReportResult, links: Links, ahead: WholeAhead | None) -> None:
        graph = result.traced.graph
        self.nodes, self.edges, self.truncated = (
            graph.number_of_nodes(),
            graph.number_of_edges(),
            result.traced.truncated,
        )
        self._result, self._links, self._ahead = result, links, ahead
        self._made: dict[str, Any] | None = None

    @property
    def shape(self) -> Any:
        return self._parts()["shape"]

    @property
    def details(self) -> Any:
        return self._parts()["details"]

    def _parts(self) -> dict[str, Any]:
        if self._made is None:
            drawing = self._ahead.drawing() if self._ahead is not None else None
            self._made = _whole(self._result, self._links, drawing)
        return self._made


def _whole(result: ReportResult, links: Links, drawing: layout.Drawing | None = None) -> dict[str, Any]:
    """The whole slice, drawn by generations, for the control that expands to it."""
    graph = result.traced.graph
    drawing = drawing if drawing is not None else whole_drawing(graph)
    shaped = graph_view.shape(graph, drawing, "s", _slice_classes)
    ids = {box.node: node.ident for box, node in zip(drawing.boxes, shaped.nodes, strict=True)}
    details = graph_view.details(graph, ids, links.url)
    return {"shape": shaped, "details": details, "nodes": graph.number_of_nodes(),
            "edges": graph.number_of_edges(), "truncated": result.traced.truncated}  # fmt: skip


def _order(graph: Any) -> Callable[[Point], tuple[Any, ...]]:
    columns = {role: i for i, role in enumerate(_COLUMNS)}
    return lambda n: (columns[graph.nodes[n][ROLE]], n.path, n.line, n.label)


def _focus_classes(node: Point, data: dict[str, Any]) -> str:
    names = ["node", f"role-{data.get(ROLE)}", f"kind-{node.kind}"]
    if data.get("category"):
        names.append(f"cat-{graph_view.css_name(str(data['category']))}")
    if data.get("status"):
        names.append(f"status-{graph_view.css_name(str(data['status']))}")
    if data.get("why") == "the budget knob":
        names.append("budget-knob")
    return " ".join(names)


def _slice_classes(node: Point, data: dict[str, Any]) -> str:
    seed = data.get("seed")
    return f"node kind-{node.kind}" + (f" seed-{seed}" if seed else "")


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} GB"
