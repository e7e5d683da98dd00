"""``sgtrace report``: one HTML page with the answer, the ledger, the caps, the graph and an upgrade's diff."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    ServerFlags,
    _budget_options,
    _common,
    _echo_errors,
    _guarded,
    _hold,
    _one_tree,
    _query,
    _server_options,
    _settings,
    _warn,
    cli,
)
from sgtrace.cli.constraints import constraints
from sgtrace.cli.history_cmd import HistoryProgress
from sgtrace.cli.output import emit, output_path, write_file
from sgtrace.model import ExitCode

_REPORT_EPILOG = """\b
Examples:
  sgtrace report sglang==0.5.9 --log server.log -o r.html     # open r.html in a browser
  journalctl -u sglang | sgtrace report sglang==0.5.9 --log - -o r.html
  sgtrace report sglang==0.5.23 --against sglang==0.5.9 --log server.log
  sgtrace report sglang==0.5.23 --history sglang==0.5.9..0.5.23 --log server.log
  sgtrace report . --set mem_fraction_static=0.88 --set avail_before_weights_gb=94.04 -o -

\b
The page is one file with everything inline (no network when it is viewed):
the answer of explain (with --log or --set), the ledger as a chart, the caps
with their status for the run, the graph from the knobs to the pool's readers
(click a node for its code; the whole slice with search, zoom and pan),
with --against the changes of diff, and with --history the pool release by
release as a chart, with the steps that change it.
Exit codes: 0 written, 1 ATTR never written (no page), 2 usage or input error.
"""


@cli.command(epilog=_REPORT_EPILOG)
@constraints(needs=[("run_index", "log_file")])
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--log", "log_file", type=click.File("rb"), help="An SGLang log or journal ('-': standard input).")
@click.option("--run", "run_index", type=click.IntRange(min=1), help="Explain start-up N (1 = the oldest).")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE", help="Supply or override an input.")
@click.option("--against", metavar="OLD", help="A PATH or SPEC to compare with (the upgrade section).")
@click.option("--history", "history_of", multiple=True, metavar="RANGE",
              help="Releases whose history the page shows (name==LOW..HIGH, name==A,B, a tree), same run.")  # fmt: skip
@click.option(
    "-o",
    "--output",
    default="sgtrace-report.html",
    show_default=True,
    metavar="FILE",
    callback=output_path,
    help="Where to write ('-': stdout).",
)
@_server_options
@_budget_options
@_common
def report(
    target: str | None,
    log_file: Any,
    run_index: int | None,
    settings: Sequence[str],
    against: str | None,
    history_of: tuple[str, ...],
    output: str,
    server: ServerFlags,
    attribute: str,
    budget: str,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """Write one self-contained HTML page about the KV pool of PATH or SPEC."""
    from sgtrace import api
    from sgtrace.analyses.operator import Want
    from sgtrace.report import html

    values = _settings(settings, budget)
    ahead = html.WholeAhead(flags.jobs)

    def run() -> Any:
        log = api.replayable(log_file, server.max_log_bytes) if log_file is not None else None
        tree, options = _one_tree(target, flags)
        old = api.resolve_targets([against], options.cache_dir, _hold, None, options.limits)[0] if against else None
        query = _query(attribute, max_nodes, strict_types)
        return api.report(
            query, budget, tree, options, log, values, Want(run_index), old, **server.keywords(), sliced=ahead.start,
            history_of=history_of, notify=HistoryProgress(),
        )  # fmt: skip

    try:
        result = _guarded(flags.debug, run)
        _echo_errors(result.caps.errors, result.caps.shadowed)
        page = _guarded(flags.debug, lambda: html.render(result, ahead))
    finally:
        ahead.close()
    if output == "-":
        emit(page)
    else:
        write_file(Path(output), page)
        size = len(page.encode("utf-8"))
        _warn(f"wrote {output} ({size / 1024:.0f} KB; {result.focus.number_of_nodes()} nodes in the focused graph)")
    sys.exit(ExitCode.FOUND)
