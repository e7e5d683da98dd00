"""The command line: options into a query, one api call, one render, one exit code."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sgtrace import __version__
from sgtrace.model import ExitCode

_FIND_EPILOG = """\b
Examples:
  sgtrace find max_total_num_tokens                      # installed sglang, else the sample
  sgtrace find max_total_num_tokens ~/src/sglang/python
  sgtrace find max_total_num_tokens sglang==0.5.9        # fetched with pip into the cache
  sgtrace find page_size sglang==0.5.9 --format json | jq '.writes | length'
  sgtrace find max_running_requests . --reads --names

\b
Exit codes: 0 writes found, 1 none found, 2 usage or input error.
Files that cannot be parsed are listed on stderr (path:line: message) and in
the JSON "errors"; every other file is still analysed.
"""


def _warn(message: str) -> None:
    click.echo(f"sgtrace: {message}", err=True)


def _attribute(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.isidentifier():
        raise click.BadParameter(f"{value!r} is not a Python identifier")
    return value


def _run_options(jobs: int | None, cache_dir: Path | None, no_cache: bool) -> Any:
    from sgtrace.api import RunOptions
    from sgtrace.cache import default_dir

    return RunOptions(jobs=jobs, cache_dir=None if no_cache else (cache_dir or default_dir()))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sgtrace")
def cli() -> None:
    """Find where a Python tree writes an attribute, and how SGLang's KV pool gets its size.

    \b
    Examples:
      sgtrace find max_total_num_tokens /path/to/sglang
      sgtrace find max_total_num_tokens sglang==0.5.9 --format json
    """


@cli.command(epilog=_FIND_EPILOG)
@click.argument("attribute", callback=_attribute)
@click.argument("targets", metavar="[PATH|SPEC]...", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--reads", is_flag=True, help="Also list reads of the attribute.")
@click.option("--names", is_flag=True, help="Also list bare names bound with that spelling (kind 'name').")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per CPU).")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="SGTRACE_CACHE_DIR",
    help="Cache directory [env SGTRACE_CACHE_DIR; default ~/.cache/sgtrace].",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the per-file cache.")
@click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors.")
def find(
    attribute: str,
    targets: Sequence[str],
    fmt: str,
    reads: bool,
    names: bool,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """Every write of ATTRIBUTE, in every syntactic form, under PATH or a release SPEC.

    PATH is a directory or a .py file (or a .whl); SPEC is NAME==VERSION, e.g.
    sglang==0.5.9, fetched with pip (no dependencies, nothing installed or run).
    """
    from sgtrace import api
    from sgtrace.report import json as json_report
    from sgtrace.report import text as text_report

    options = _run_options(jobs, cache_dir, no_cache)
    try:
        resolved = api.resolve_targets(targets, options.cache_dir, _warn)
        result = api.find(api.FindQuery(attribute, names=names, reads=reads), resolved, options)
    except api.InputError as exc:
        _warn(f"error: {exc}")
        sys.exit(ExitCode.ERROR)
    except Exception as exc:  # the api boundary: one clear line unless --debug
        if debug:
            raise
        _warn(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        sys.exit(ExitCode.ERROR)
    for error in result.errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    if fmt == "json":
        click.echo(json_report.render(result), nl=False)
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        click.echo(text_report.render(result, width), nl=False)
        _warn(text_report.summary(result))
    sys.exit(ExitCode.FOUND if result.writes else ExitCode.NOT_FOUND)


_TRACE_EPILOG = """\b
Examples:
  sgtrace trace max_total_num_tokens                       # installed sglang, else the sample
  sgtrace trace max_total_num_tokens sglang==0.5.9
  sgtrace trace max_total_num_tokens sglang==0.5.9 --depth 12
  sgtrace trace max_total_num_tokens . --format json > slice.json

\b
Each write of the attribute is followed back to what feeds it (<-op- lines),
to knobs (server_args.X, accessor().X), environment variables, constants and
calls outside the tree. '~' marks a link made without knowing a receiver's type.
Exit codes: 0 writes found, 1 none found, 2 usage or input error.
"""

_GRAPH_EPILOG = """\b
Examples:
  sgtrace graph --dot > kv.dot                             # max_total_num_tokens, default tree
  sgtrace graph max_total_num_tokens sglang==0.5.9 --dot -o kv.dot
  sgtrace graph page_size sglang==0.5.23 --graphml -o page_size.graphml
  sgtrace graph sglang==0.5.9 --render svg -o kv.svg       # needs Graphviz's dot
  sgtrace graph sglang==0.5.23 --upstream 3 --render png -o kv.png   # a picture to read
"""


def _one_tree(target: str | None, jobs: int | None, cache_dir: Path | None, no_cache: bool) -> tuple[Any, Any]:
    """(the tree to analyse, run options): PATH|SPEC resolved, or the embedded default."""
    from sgtrace import api

    options = _run_options(jobs, cache_dir, no_cache)
    return api.resolve_targets([target] if target else [], options.cache_dir, _warn)[0], options


def _trace_inputs(
    attribute: str, target: str | None, max_nodes: int, jobs: int | None, cache_dir: Path | None, no_cache: bool
) -> Any:
    """Resolve the tree and run the api's trace."""
    from sgtrace import api

    tree, options = _one_tree(target, jobs, cache_dir, no_cache)
    return api.trace(api.TraceQuery(attribute, max_nodes=max_nodes), tree, options)


def _budget_options(function: Any) -> Any:
    """--attr and --budget, shared by caps and explain."""
    function = click.option("--budget", default="mem_fraction_static", show_default=True, callback=_attribute)(function)
    return click.option("--attr", "attribute", default="max_total_num_tokens", show_default=True, callback=_attribute)(
        function
    )


def _guarded(debug: bool, run: Any) -> Any:
    """Run *run*; an input error or an unexpected exception becomes one line and exit code 2."""
    from sgtrace import api

    try:
        return run()
    except api.InputError as exc:
        _warn(f"error: {exc}")
        sys.exit(ExitCode.ERROR)
    except Exception as exc:  # the api boundary: one clear line unless --debug
        if debug:
            raise
        _warn(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        sys.exit(ExitCode.ERROR)


def _common(function: Any) -> Any:
    options = [
        click.option("--max-nodes", type=click.IntRange(min=10), default=2000, show_default=True,
                     help="Stop growing the slice past this many nodes."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes for the scan."),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="SGTRACE_CACHE_DIR",
                     help="Cache directory [env SGTRACE_CACHE_DIR; default ~/.cache/sgtrace]."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


@cli.command(epilog=_TRACE_EPILOG)
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
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """The data flow of ATTRIBUTE: what feeds each of its writes, and the reads they reach.

    JSON output is networkx node-link data of the slice.
    """
    from sgtrace.report import graphjson, tree

    result = _guarded(debug, lambda: _trace_inputs(attribute, target, max_nodes, jobs, cache_dir, no_cache))
    for error in result.errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    click.echo(graphjson.render(result) if fmt == "json" else tree.render(result, depth), nl=False)
    seeds = sum(1 for n in result.graph.nodes if result.graph.nodes[n].get("seed") == "write")
    sys.exit(ExitCode.FOUND if seeds else ExitCode.NOT_FOUND)


@cli.command(epilog=_GRAPH_EPILOG)
@click.argument("arguments", metavar="[ATTRIBUTE] [PATH|SPEC]", nargs=-1)
@click.option("--dot", "fmt", flag_value="dot", default=True, help="Graphviz DOT (the default).")
@click.option("--json", "fmt", flag_value="json", help="networkx node-link JSON.")
@click.option("--graphml", "fmt", flag_value="graphml", help="GraphML.")
@click.option("--render", type=click.Choice(["svg", "png"]), help="Render with Graphviz's dot (needs -o).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here, not to stdout.")
@click.option(
    "--upstream",
    type=click.IntRange(min=0),
    help="Keep only the writes and what lies this many edges upstream of them (a picture to read).",
)
@_common
def graph(
    arguments: Sequence[str],
    fmt: str,
    render: str | None,
    output: Path | None,
    upstream: int | None,
    max_nodes: int,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """The data-flow graph of ATTRIBUTE (default max_total_num_tokens) under PATH or SPEC."""
    from sgtrace.report import dot, graphjson

    attribute, target = _graph_arguments(arguments)
    if render and output is None:
        raise click.UsageError("--render needs -o FILE")
    result = _guarded(debug, lambda: _trace_inputs(attribute, target, max_nodes, jobs, cache_dir, no_cache))
    for error in result.errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    if upstream is not None:
        from dataclasses import replace

        from sgtrace.graph.views import upstream as upstream_view

        result = replace(result, graph=upstream_view(result.graph, upstream))
    if fmt == "json":
        text = graphjson.render(result)
    elif fmt == "graphml":
        text = graphjson.render_graphml(result)
    else:
        text = dot.render(result.graph, f"{attribute} in {result.root}")
    if render:
        assert output is not None
        _render(text if fmt == "dot" else dot.render(result.graph, attribute), render, output)
    elif output is not None:
        output.write_text(text, encoding="utf-8")
        _warn(f"wrote {output} ({result.graph.number_of_nodes()} nodes, {result.graph.number_of_edges()} edges)")
    else:
        click.echo(text, nl=False)


_CAPS_EPILOG = """\b
Examples:
  sgtrace caps                                  # installed sglang, else the sample
  sgtrace caps sglang==0.5.9
  sgtrace caps sglang==0.5.23 --format json | jq '.caps[] | select(.category == "min")'
  sgtrace caps . --format sarif > caps.sarif    # for code scanning in CI

\b
Categories: base (set from the profiled budget), reserve (subtracted from the
budget), min, round, reduce (distributed MIN), split (shared between pools),
override (replaced under a condition by a value not from the budget).
Exit codes: 0 caps found, 1 none found, 2 usage or input error.
"""


@cli.command(epilog=_CAPS_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@_budget_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@_common
def caps(
    target: str | None,
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """Which code paths cap ATTR (the KV pool size) below the BUDGET knob, under PATH or SPEC."""
    from sgtrace import api
    from sgtrace.report import caps_json, caps_text

    def run() -> Any:
        tree, options = _one_tree(target, jobs, cache_dir, no_cache)
        return api.caps(api.TraceQuery(attribute, max_nodes=max_nodes), budget, tree, options)

    result = _guarded(debug, run)
    for error in result.errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    renderers = {"json": caps_json.render, "sarif": caps_json.render_sarif, "text": caps_text.render}
    click.echo(renderers[fmt](result), nl=False)
    sys.exit(ExitCode.FOUND if result.caps else ExitCode.NOT_FOUND)


_EXPLAIN_EPILOG = """\b
Examples:
  sgtrace explain sglang==0.5.9 --log server.log
  journalctl -u sglang -o cat > server.log && sgtrace explain sglang==0.5.9 --log server.log
  sgtrace explain sglang==0.5.9 --set mem_fraction_static=0.88 \\
      --set avail_before_weights_gb=94.04 --set avail_after_weights_gb=21.71

\b
The log gives: server_args=ServerArgs(...), 'Load weight begin. avail mem=',
'Load weight end. ... avail mem=, mem usage=', 'KV Cache is allocated. #tokens: N,
K size/V size' or 'KV size', 'Memory pool end. avail mem=', 'max_total_num_tokens='.
--set supplies or overrides any input, by the formula's variable name or by the
log quantity (avail_before_weights_gb, avail_after_weights_gb, kv_gb, kv_tokens).
A missing input is named with what would supply it; exit code 2 then.
"""


@cli.command(epilog=_EXPLAIN_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--log", "log_file", type=click.File("r", errors="replace"), help="An SGLang start-up log.")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE", help="Supply or override an input.")
@_budget_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_common
def explain(
    target: str | None,
    log_file: Any,
    settings: Sequence[str],
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """Evaluate the budget formula of PATH or SPEC with the figures of a log (or --set), step by step."""
    from sgtrace import api
    from sgtrace.analyses.logs import parse_value
    from sgtrace.report import explain_report

    if log_file is None and not settings:
        raise click.UsageError("give --log FILE or --set NAME=VALUE")
    values: dict[str, object] = {}
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not sep or not name.strip().isidentifier():
            raise click.UsageError(f"--set expects NAME=VALUE, got {setting!r}")
        values[name.strip()] = parse_value(value.strip())
    log = log_file.read() if log_file is not None else None

    def run() -> Any:
        tree, options = _one_tree(target, jobs, cache_dir, no_cache)
        return api.explain(api.TraceQuery(attribute, max_nodes=max_nodes), budget, tree, options, log, values)

    found, result = _guarded(debug, run)
    render = explain_report.render_json if fmt == "json" else explain_report.render
    click.echo(render(found, result), nl=False)
    for name, how in sorted(result.missing.items()):
        _warn(f"missing input {name}: {how}")
    sys.exit(ExitCode.ERROR if result.missing or result.kv_budget_gb is None else ExitCode.FOUND)


_DIFF_EPILOG = """\b
Examples:
  sgtrace diff sglang==0.5.9 sglang==0.5.23
  sgtrace diff v0.5.9 HEAD --git ~/src/sglang                # git revisions of a checkout
  sgtrace diff sglang==0.5.9 sglang==0.5.23 --format sarif > caps.sarif
  sgtrace diff old/ new/ --fail-on added,budget

\b
Exit codes (as ruff and semgrep): 0 nothing new, 1 a change named by --fail-on
(default added,changed,budget), 2 usage or input error; --exit-zero always 0.
"""

_CHECK_EPILOG = """\b
Examples:
  sgtrace check sglang==0.5.9 --write-baseline sgtrace-baseline.json
  sgtrace check sglang==0.5.23 --baseline sgtrace-baseline.json
  sgtrace check vendor/sglang --baseline sgtrace-baseline.json --format sarif > caps.sarif
"""

_FAIL_ON = ("added", "removed", "changed", "moved", "budget")


def _fail_on(_ctx: click.Context, _param: click.Parameter, value: str) -> frozenset[str]:
    kinds = frozenset(k.strip() for k in value.split(",") if k.strip())
    unknown = kinds - set(_FAIL_ON)
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(sorted(unknown))}; choose from {', '.join(_FAIL_ON)}")
    return kinds


def _gate_options(function: Any) -> Any:
    options = [
        click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
                     show_default=True, help="text is Markdown, for a pull-request comment."),
        click.option("--fail-on", default="added,changed,budget", show_default=True, callback=_fail_on,
                     help=f"Changes that exit 1: {', '.join(_FAIL_ON)}."),
        click.option("--exit-zero", is_flag=True, help="Always exit 0 (report only)."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


def _gate(fmt: str, old: str, new: str, attribute: str, result: Any, fail_on: frozenset[str], exit_zero: bool) -> None:
    """Render a comparison and exit as the gate says."""
    from sgtrace.report import diff_report

    if fmt == "json":
        click.echo(diff_report.render_json(old, new, result), nl=False)
    elif fmt == "sarif":
        click.echo(diff_report.render_sarif(result), nl=False)
    else:
        click.echo(diff_report.render(old, new, attribute, result))
    found = {
        "added": bool(result.added),
        "removed": bool(result.removed),
        "changed": bool(result.changed),
        "moved": bool(result.moved),
        "budget": result.budget_changed is not None,
    }
    failing = any(found[kind] for kind in fail_on)
    sys.exit(ExitCode.FOUND if exit_zero or not failing else ExitCode.NOT_FOUND)


@cli.command(epilog=_DIFF_EPILOG)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option(
    "--git", "repository", type=click.Path(file_okay=False), help="OLD and NEW are revisions of this checkout."
)
@_budget_options
@_gate_options
@_common
def diff(
    old: str,
    new: str,
    repository: str | None,
    attribute: str,
    budget: str,
    fmt: str,
    fail_on: frozenset[str],
    exit_zero: bool,
    max_nodes: int,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """What changed in the caps and the budget formula of ATTR between OLD and NEW (path, SPEC or revision)."""
    from sgtrace import api

    def run() -> Any:
        options = _run_options(jobs, cache_dir, no_cache)
        before, after = api.resolve_targets([old, new], options.cache_dir, _warn, repository)
        return api.diff(api.TraceQuery(attribute, max_nodes=max_nodes), budget, before, after, options)

    before, after, result = _guarded(debug, run)
    for error in (*before.errors, *after.errors):
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    _gate(fmt, old, new, attribute, result, fail_on, exit_zero)


@cli.command(epilog=_CHECK_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Compare with this baseline.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=Path), help="Write the baseline here.")
@_budget_options
@_gate_options
@_common
def check(
    target: str | None,
    baseline: Path | None,
    write_baseline: Path | None,
    attribute: str,
    budget: str,
    fmt: str,
    fail_on: frozenset[str],
    exit_zero: bool,
    max_nodes: int,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """Gate an upgrade: compare the caps of PATH or SPEC with a committed baseline (or write one)."""
    from sgtrace import api
    from sgtrace.analyses.baseline import from_baseline, to_baseline
    from sgtrace.analyses.diff import compare

    if (baseline is None) == (write_baseline is None):
        raise click.UsageError("give exactly one of --baseline FILE or --write-baseline FILE")
    recorded = None
    if baseline is not None:
        try:
            recorded = from_baseline(baseline.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            _warn(f"error: cannot read baseline {baseline}: {exc}")
            sys.exit(ExitCode.ERROR)

    def run() -> Any:
        tree, options = _one_tree(target, jobs, cache_dir, no_cache)
        return api.caps(api.TraceQuery(attribute, max_nodes=max_nodes), budget, tree, options)

    current = _guarded(debug, run)
    if write_baseline is not None:
        comments = {}
        if write_baseline.exists():
            try:
                comments = from_baseline(write_baseline.read_text(encoding="utf-8"))[3]
            except (OSError, ValueError):
                comments = {}
        write_baseline.write_text(to_baseline(current, comments), encoding="utf-8")
        _warn(f"wrote {write_baseline}: {len(current.caps)} caps, {len(current.budget_sites)} budget sites")
        sys.exit(ExitCode.FOUND)
    assert recorded is not None
    header, sites, caps, _ = recorded
    result = compare(caps, current.caps, sites, current.budget_sites)
    _gate(fmt, f"baseline ({header.get('root')})", current.root, attribute, result, fail_on, exit_zero)


@cli.group(name="cache")
def cache_group() -> None:
    """The on-disk cache: per-file results, the index, graphs, fetched releases.

    \b
    Examples:
      sgtrace cache info
      sgtrace cache clear --keep-releases
    """


_CACHE_DIR = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="SGTRACE_CACHE_DIR",
    help="Cache directory [env SGTRACE_CACHE_DIR; default ~/.cache/sgtrace].",
)


@cache_group.command(name="info")
@_CACHE_DIR
def cache_info(cache_dir: Path | None) -> None:
    """Where the cache is, and what it holds."""
    from sgtrace.cache import default_dir, usage

    directory = cache_dir or default_dir()
    click.echo(f"cache directory: {directory}")
    parts = usage(directory)
    if not parts:
        click.echo("  (empty)")
    for name, (files, size) in parts.items():
        click.echo(f"  {name:<10} {files:>7} files {size / (1 << 20):>9.1f} MiB")


@cache_group.command(name="clear")
@_CACHE_DIR
@click.option("--keep-releases", is_flag=True, help="Keep fetched releases (they cost a download).")
def cache_clear(cache_dir: Path | None, keep_releases: bool) -> None:
    """Empty the cache."""
    from sgtrace.cache import clear, default_dir

    directory = cache_dir or default_dir()
    removed = clear(directory, ("releases",) if keep_releases else ())
    click.echo(f"removed {removed} files from {directory}")


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
    proc = subprocess.run([program, f"-T{image}", "-o", str(output)], input=dot_text, text=True,
                          capture_output=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        _warn(f"error: dot failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        sys.exit(ExitCode.ERROR)
    _warn(f"wrote {output}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: click with usage errors shortened to one line (exit code 2)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="sgtrace", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(ExitCode.ERROR)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "sgtrace"
        _warn(f"error: {exc.format_message()} (see '{command} --help')")
        sys.exit(ExitCode.ERROR)
    except click.Abort:
        _warn("aborted")
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _warn(f"error: {exc.format_message()}")
        sys.exit(ExitCode.ERROR)
