"""``sgtrace trace`` and ``sgtrace graph``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    _attribute,
    _common,
    _echo_errors,
    _guarded,
    _one_tree,
    _query,
    _trace_inputs,
    _warn,
    cli,
)
from sgtrace.cli.constraints import constraints
from sgtrace.cli.output import emit, output_path, write_file
from sgtrace.model import ExitCode

_TRACE_EPILOG = """\b
Examples:
  sgtrace trace max_total_num_tokens                       # the checkout here, else installed sglang, else the sample
  sgtrace trace max_total_num_tokens sglang==0.5.9
  sgtrace trace max_total_num_tokens sglang==0.5.9 --depth 12
  sgtrace trace max_total_num_tokens . --format json > slice.json

\b
Each write of the attribute is followed back to what feeds it (<-op- lines),
to knobs (server_args.X, accessor().X), environment variables, constants and
calls outside the tree. '~' marks a link made without knowing a receiver's type.
Exit codes: 0 writes found, 1 none found, 2 usage or input error (an ATTRIBUTE
the tree does not hold at all is a typo, with a did-you-mean).
"""

_GRAPH_EPILOG = """\b
Examples:
  sgtrace graph --dot > kv.dot                             # max_total_num_tokens, default tree
  sgtrace graph max_total_num_tokens sglang==0.5.9 --dot -o kv.dot
  sgtrace graph page_size sglang==0.5.23 --graphml -o page_size.graphml
  sgtrace graph sglang==0.5.9 --render svg -o kv.svg       # needs Graphviz's dot
  sgtrace graph sglang==0.5.23 --upstream 3 --render png -o kv.png   # a picture to read
  sgtrace graph sglang==0.5.9 --focus budget --render svg -o budget.svg  # knobs to readers, with a legend

\b
Exit codes: 0 written, 1 ATTRIBUTE never written (nothing is written), 2 usage
or input error.
"""


@cli.command(epilog=_TRACE_EPILOG)
@constraints(conflicts=[("depth", "fmt=json")])
@click.argument("attribute", callback=_attribute)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--depth", type=click.IntRange(min=1), default=8, show_default=True, help="Fold trees deeper than this.")
@_common
def trace(
    attribute: str,
    target: str | None,
    fmt: str,
    depth: int,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """The data flow of ATTRIBUTE: what feeds each of its writes, and the reads they reach.

    JSON output is networkx node-link data of the slice.
    """
    from sgtrace import api

    def render(result: Any) -> str:  # imported here: a cached view needs neither them nor networkx
        from sgtrace.report import graphjson, tree

        return graphjson.render(result) if fmt == "json" else tree.render(result, depth)

    def run() -> Any:
        tree_of, options = _one_tree(target, flags)
        query = _query(attribute, max_nodes, strict_types)
        return api.trace_view(query, tree_of, options, "json" if fmt == "json" else f"tree {depth}", render)

    view = _guarded(flags.debug, run)
    _echo_errors(view.errors, view.shadowed)
    emit(view.text)
    sys.exit(ExitCode.FOUND if view.written else ExitCode.NOT_FOUND)


def _written(result: Any) -> bool:
    """Whether the slice holds a write of the attribute."""
    return any(result.graph.nodes[n].get("seed") == "write" for n in result.graph.nodes)


@cli.command(epilog=_GRAPH_EPILOG)
@constraints(
    conflicts=[
        ("as_dot", "as_json"),
        ("as_dot", "as_graphml"),
        ("as_json", "as_graphml"),
        ("render", "as_json"),
        ("render", "as_graphml"),
        ("focus", "upstream"),
    ],
    needs=[("render", "output"), ("budget", "focus")],
)
@click.argument("arguments", metavar="[ATTRIBUTE] [PATH|SPEC]", nargs=-1)
@click.option("--dot", "as_dot", is_flag=True, help="Graphviz DOT (the default).")
@click.option("--json", "as_json", is_flag=True, help="networkx node-link JSON.")
@click.option("--graphml", "as_graphml", is_flag=True, help="GraphML.")
@click.option("--render", type=click.Choice(["svg", "png"]), help="Render with Graphviz's dot.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=output_path,
    help="Write here, not to stdout.",
)
@click.option(
    "--upstream",
    type=click.IntRange(min=0),
    help="Keep only the writes and what lies this many edges upstream of them (a picture to read).",
)
@click.option(
    "--focus",
    type=click.Choice(["budget"]),
    help="Only knobs -> budget sites -> caps -> the pool's writes -> readers (the report's graph), with a legend.",
)
@click.option("--budget", default="mem_fraction_static", show_default=True, callback=_attribute,
              help="The budget knob --focus budget starts from.")  # fmt: skip
@_common
def graph(
    arguments: Sequence[str],
    as_dot: bool,
    as_json: bool,
    as_graphml: bool,
    render: str | None,
    output: Path | None,
    upstream: int | None,
    focus: str | None,
    budget: str,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """The data-flow graph of ATTRIBUTE (default max_total_num_tokens) under PATH or SPEC."""
    from sgtrace.report import graphjson
    from sgtrace.report.provenance import named

    attribute, target = _graph_arguments(arguments)
    fmt = "json" if as_json else "graphml" if as_graphml else "dot"  # one at most: see @constraints
    if focus:
        result = _guarded(flags.debug, lambda: _focus_inputs(attribute, budget, target, max_nodes, strict_types, flags))
    else:
        result = _guarded(flags.debug, lambda: _trace_inputs(attribute, target, max_nodes, strict_types, flags))
    _echo_errors(result.errors, result.shadowed)
    if not _written(result):  # as trace answers it (with --focus, the api has said it)
        _warn(f"no writes of .{attribute} under {result.root}")
        sys.exit(ExitCode.NOT_FOUND)
    if upstream is not None:
        from dataclasses import replace

        from sgtrace.graph.views import upstream as upstream_view

        result = replace(result, graph=upstream_view(result.graph, upstream))
    if fmt == "json":
        text = graphjson.render(result)
    elif fmt == "graphml":
        text = graphjson.render_graphml(result)
    else:
        text = _dot(result.graph, f"{attribute} in {named(result.root, result.tree)}", focus)
    if render:
        assert output is not None
        _render(text if fmt == "dot" else _dot(result.graph, attribute, focus), render, output)
    elif output is not None:
        write_file(output, text)
        _warn(f"wrote {output} ({result.graph.number_of_nodes()} nodes, {result.graph.number_of_edges()} edges)")
    else:
        emit(text)


def _focus_inputs(
    attribute: str, budget: str, target: str | None, max_nodes: int, strict_types: bool, flags: RunFlags
) -> Any:
    """Resolve the tree and run the api's focus."""
    from sgtrace import api

    tree, options = _one_tree(target, flags)
    return api.focus(_query(attribute, max_nodes, strict_types), budget, tree, options)


def _dot(graph: Any, title: str, focus: str | None) -> str:
    from sgtrace.report import dot

    return dot.render_focus(graph, title) if focus else dot.render(graph, title)


def _graph_arguments(arguments: Sequence[str]) -> tuple[str, str | None]:
    """[ATTRIBUTE] [PATH|SPEC]: a first word that is an identifier and not a path is the attribute."""
    from sgtrace.fetch import is_spec

    if len(arguments) > 2:
        raise click.UsageError("expected at most ATTRIBUTE and PATH|SPEC")
    words = list(arguments)
    attribute = "max_total_num_tokens"
    if words and words[0].isidentifier() and not Path(words[0]).exists() and not is_spec(words[0]):
        attribute = words.pop(0)
    if len(words) > 1:
        raise click.UsageError(f"{words[0]!r} is not an attribute name")
    return attribute, (words[0] if words else None)


def _render(dot_text: str, image: str, output: Path) -> None:
    """Run Graphviz; say clearly when it is not installed."""
    import shutil as _shutil
    import subprocess

    program = _shutil.which("dot")
    if program is None:
        _warn("error: Graphviz is not installed (no 'dot' on PATH); install it (e.g. apt-get install graphviz) "
              "or write DOT with --dot -o FILE.dot")  # fmt: skip
        sys.exit(ExitCode.ERROR)
    try:
        proc = subprocess.run([program, f"-T{image}", "-o", str(output)], input=dot_text, text=True,
                              capture_output=True, check=False, timeout=600)  # fmt: skip
    except subprocess.TimeoutExpired:
        _warn("error: dot did not finish within 600 s (--upstream N draws a smaller graph)")
        sys.exit(ExitCode.ERROR)
    if proc.returncode != 0:
        _warn(f"error: dot failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        sys.exit(ExitCode.ERROR)
    _warn(f"wrote {output}")
