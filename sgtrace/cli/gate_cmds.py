"""``sgtrace diff`` and ``sgtrace check``: the review gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    _budget_options,
    _common,
    _echo_errors,
    _guarded,
    _one_tree,
    _query,
    _run_options,
    _warn,
    cli,
)
from sgtrace.model import ExitCode

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
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """What changed in the caps and the budget formula of ATTR between OLD and NEW (path, SPEC or revision)."""
    from sgtrace import api

    def run() -> Any:
        options = _run_options(flags)
        before, after = api.resolve_targets([old, new], options.cache_dir, _warn, repository, options.limits)
        return api.diff(_query(attribute, max_nodes, strict_types), budget, before, after, options)

    before, after, result = _guarded(flags.debug, run)
    _echo_errors((*before.errors, *after.errors), (*before.shadowed, *after.shadowed))
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
    strict_types: bool,
    flags: RunFlags,
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
        tree, options = _one_tree(target, flags)
        return api.caps(_query(attribute, max_nodes, strict_types), budget, tree, options)

    current = _guarded(flags.debug, run)
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
