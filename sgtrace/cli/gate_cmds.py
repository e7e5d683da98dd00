"""``sgtrace diff`` and ``sgtrace check``: the review gate."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    ServerFlags,
    _budget_options,
    _common,
    _echo_errors,
    _failed,
    _guarded,
    _hold,
    _one_tree,
    _query,
    _run_options,
    _server_options,
    _settings,
    _warn,
    cli,
)
from sgtrace.cli.constraints import constraints
from sgtrace.cli.output import emit, output_path, write_file
from sgtrace.model import ExitCode

_DIFF_EPILOG = """\b
Examples:
  sgtrace diff sglang==0.5.9 sglang==0.5.23
  sgtrace diff sglang==0.5.9 sglang==0.5.23 --log server.log --set mm_reservation_gb=0
  sgtrace diff v0.5.9 HEAD --git ~/src/sglang                # git revisions of a checkout
  sgtrace diff sglang==0.5.9 sglang==0.5.23 --format markdown > comment.md
  sgtrace diff sglang==0.5.9 sglang==0.5.23 --format sarif > caps.sarif
  sgtrace diff old/ new/ --fail-on added,budget,pool

\b
Caps are paired by what they do, not where they are (docs/diff.md): moved
(the same code, conditions and knobs elsewhere), changed (what differs is
shown), added and removed (nothing like them on the other side). With --log
or --set, the start-up is evaluated with both releases' budget formulas.
One verdict line goes to stderr in every format.
Exit codes (as ruff and semgrep): 0 nothing new, 1 a change named by --fail-on
(default added,changed,budget) or a cap's file that can no longer be
analysed, 2 usage or input error; --exit-zero always 0.
"""

_CHECK_EPILOG = """\b
Examples:
  sgtrace check sglang==0.5.9 --write-baseline sgtrace-baseline.json
  sgtrace check sglang==0.5.23 --baseline sgtrace-baseline.json
  sgtrace check sglang==0.5.23 --baseline sgtrace-baseline.json --log server.log --set mm_reservation_gb=0
  sgtrace check vendor/sglang --baseline sgtrace-baseline.json --format sarif > caps.sarif

\b
The baseline is the old side: its caps are paired with the tree's as diff
pairs them, and a start-up is evaluated with its recorded formula. A file
that held a baseline cap and cannot be read or parsed now fails the gate
(exit 1), whatever --fail-on says; exit codes otherwise as diff's.
"""


def _fail_on(_ctx: click.Context, _param: click.Parameter, value: str) -> frozenset[str]:
    from sgtrace.analyses.verdict import FAIL_ON

    kinds = frozenset(k.strip() for k in value.split(",") if k.strip())
    unknown = kinds - set(FAIL_ON)
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(sorted(unknown))}; choose from {', '.join(FAIL_ON)}")
    return kinds


@dataclass(frozen=True, slots=True)
class GateFlags:
    """How the gate reports and when it fails, and the start-up to evaluate under both trees."""

    fmt: str
    fail_on: frozenset[str]
    exit_zero: bool
    #: The log as given (a stream, read as a stream: see ``api.replayable``), or None.
    log: Any
    run: int | None
    settings: dict[str, object]


_GATE_NAMES = ("fmt", "fail_on", "exit_zero", "log_file", "run_index", "settings")


def _gate_options(function: Callable[..., Any]) -> Any:
    """--format, --fail-on, --exit-zero, and --log/--run/--set as explain takes them, handed over as ``gate``."""

    @functools.wraps(function)
    def with_gate(**kwargs: Any) -> Any:
        fmt, fail_on, exit_zero, log_file, run_index, settings = (kwargs.pop(name) for name in _GATE_NAMES)
        values = _settings(settings, kwargs["budget"])
        return function(gate=GateFlags(fmt, fail_on, exit_zero, log_file, run_index, values), **kwargs)

    options = [
        click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json", "sarif"]), default="text",
                     show_default=True, help="markdown is made for a pull-request comment."),
        click.option("--fail-on", default="added,changed,budget", show_default=True, callback=_fail_on,
                     help="Changes that exit 1: added, removed, changed, moved, budget, pool."),
        click.option("--exit-zero", is_flag=True, help="Always exit 0 (report only)."),
        click.option("--log", "log_file", type=click.File("rb"),
                     help="An SGLang log or journal ('-': standard input): its start-up under both trees."),
        click.option("--run", "run_index", type=click.IntRange(min=1), help="Evaluate start-up N (1 = the oldest)."),
        click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
                     help="Supply or override an input, as explain takes it (given to the trees that have it)."),
    ]  # fmt: skip
    wrapped: Any = with_gate
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped


def _gate(
    old: str, new: str, attribute: str, budget: str, result: Any, gate: GateFlags, debug: bool, errors: Any = ()
) -> None:
    """Render a comparison, say the verdict on stderr, and exit as the gate says."""
    from sgtrace.analyses.verdict import verdict
    from sgtrace.report import diff_markdown, diff_report, diff_text
    from sgtrace.report.diff_parts import verdict_line
    from sgtrace.report.provenance import order_line

    found = verdict(result, gate.fail_on, gate.exit_zero)

    def render() -> str:
        if gate.fmt == "json":
            return diff_report.render_json(old, new, result, found)
        if gate.fmt == "sarif":
            return diff_report.render_sarif(result, tuple(errors))
        if gate.fmt == "markdown":
            return diff_markdown.render(old, new, attribute, budget, result, found)
        return diff_text.render(old, new, attribute, budget, result, found)

    emit(_guarded(debug, render))
    if note := order_line(result.order, old, new):
        _warn(note)
    _warn(f"verdict: {verdict_line(old, new, found, result)}")
    sys.exit(ExitCode.NOT_FOUND if found.failed else ExitCode.FOUND)


def _want(gate: GateFlags) -> Any:
    from sgtrace.analyses.operator import Want

    return Want(gate.run)


@cli.command(epilog=_DIFF_EPILOG)
@constraints(needs=[("run_index", "log_file")])
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option(
    "--git", "repository", type=click.Path(file_okay=False), help="OLD and NEW are revisions of this checkout."
)
@_budget_options
@_gate_options
@_server_options
@_common
def diff(
    old: str,
    new: str,
    repository: str | None,
    attribute: str,
    budget: str,
    gate: GateFlags,
    server: ServerFlags,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """What changed in the caps and the budget formula of ATTR between OLD and NEW (path, SPEC or revision)."""
    from sgtrace import api

    def run() -> Any:
        options = _run_options(flags)
        before, after = api.resolve_targets([old, new], options.cache_dir, _hold, repository, options.limits)
        query = _query(attribute, max_nodes, strict_types)
        log = api.replayable(gate.log, server.max_log_bytes) if gate.log is not None else None
        return api.diff(query, budget, before, after, options, log, gate.settings, _want(gate), **server.keywords())

    before, after, result = _guarded(flags.debug, run)
    _echo_errors((*before.errors, *after.errors), (*before.shadowed, *after.shadowed))
    _gate(old, new, attribute, budget, result, gate, flags.debug, after.errors)


@cli.command(epilog=_CHECK_EPILOG)
@constraints(
    # writing a baseline neither evaluates a start-up nor judges a change
    conflicts=[("baseline", "write_baseline")]
    + [
        ("write_baseline", name)
        for name in (
            "log_file",
            "run_index",
            "settings",
            "fmt",
            "fail_on",
            "exit_zero",
            "command_file",
            "server_info_file",
        )
    ],  # fmt: skip
    needs=[("run_index", "log_file")],
)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Compare with this baseline.")
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=output_path,
    help="Write the baseline here.",
)
@_budget_options
@_gate_options
@_server_options
@_common
def check(
    target: str | None,
    baseline: Path | None,
    write_baseline: Path | None,
    attribute: str,
    budget: str,
    gate: GateFlags,
    server: ServerFlags,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """Gate an upgrade: compare the caps of PATH or SPEC with a committed baseline (or write one)."""
    from sgtrace import api

    if (baseline is None) == (write_baseline is None):
        raise click.UsageError("give exactly one of --baseline FILE or --write-baseline FILE")
    if write_baseline is not None:
        _write_baseline(write_baseline, target, attribute, budget, max_nodes, strict_types, flags)
    assert baseline is not None
    recorded = _baseline(baseline)

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        query = _query(attribute, max_nodes, strict_types)
        log = api.replayable(gate.log, server.max_log_bytes) if gate.log is not None else None
        return api.check(
            query, budget, tree, options, recorded, log, gate.settings, _want(gate), **server.keywords()
        )  # fmt: skip

    header, current, result = _guarded(flags.debug, run)
    _echo_errors(current.errors, current.shadowed)
    old = f"baseline ({header.get('root')})"
    _gate(old, current.root, attribute, budget, result, gate, flags.debug, current.errors)


def _baseline(path: Path) -> str:
    """The text of a baseline, read within :data:`MAX_JSON_BYTES` and checked (one line naming the file and what
    is wrong, and exit 2, before any tree is analysed)."""
    from sgtrace.analyses.baseline import from_baseline
    from sgtrace.bounded import MAX_JSON_BYTES, read_at_most

    try:
        with path.open("rb") as stream:
            text = read_at_most(stream, MAX_JSON_BYTES).decode("utf-8")
        from_baseline(text)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        _failed(f"error: cannot read baseline {path}: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)
    return text


def _write_baseline(
    path: Path, target: str | None, attribute: str, budget: str, max_nodes: int, strict_types: bool, flags: RunFlags
) -> None:
    """Write the caps of the tree as a baseline (keeping a reviewer's comments) and exit."""
    from sgtrace import api
    from sgtrace.analyses.baseline import from_baseline, to_baseline
    from sgtrace.bounded import MAX_JSON_BYTES, read_at_most

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        return api.caps(_query(attribute, max_nodes, strict_types), budget, tree, options)

    current = _guarded(flags.debug, run)
    _echo_errors(current.errors, current.shadowed)
    comments = {}
    if path.is_file():  # a regular file: /dev/full or a FIFO would be read without end
        try:
            with path.open("rb") as stream:  # within the bound: a sparse file of gigabytes is no baseline either
                comments = from_baseline(read_at_most(stream, MAX_JSON_BYTES))[3]
        except (OSError, ValueError):
            comments = {}
    write_file(path, to_baseline(current, comments))
    _warn(f"wrote {path}: {len(current.caps)} caps, {len(current.budget_sites)} budget sites")
    sys.exit(ExitCode.FOUND)
