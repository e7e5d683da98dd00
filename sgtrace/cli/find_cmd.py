"""``sgtrace find``."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    _attribute,
    _echo_errors,
    _guarded,
    _hold,
    _run_flags,
    _run_options,
    _warn,
    cli,
)
from sgtrace.cli.output import emit
from sgtrace.model import ExitCode

_FIND_EPILOG = """\b
Examples:
  sgtrace find max_total_num_tokens                      # the checkout here, else installed sglang, else the sample
  sgtrace find max_total_num_tokens ~/src/sglang/python
  sgtrace find max_total_num_tokens sglang==0.5.9        # fetched with pip into the cache
  sgtrace find page_size sglang==0.5.9 --format json | jq '.writes | length'
  sgtrace find max_running_requests . --reads --names

\b
Exit codes: 0 writes found, 1 none found, 2 usage or input error (an ATTRIBUTE
no tree holds at all is a typo, with a did-you-mean).
Files that cannot be parsed are listed on stderr (path:line: message) and in
the JSON "errors"; every other file is still analysed.
"""


@cli.command(epilog=_FIND_EPILOG)
@click.argument("attribute", callback=_attribute)
@click.argument("targets", metavar="[PATH|SPEC]...", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--reads", is_flag=True, help="Also list reads of the attribute.")
@click.option("--names", is_flag=True, help="Also list bare names bound with that spelling (kind 'name').")
@_run_flags
def find(
    attribute: str,
    targets: Sequence[str],
    fmt: str,
    reads: bool,
    names: bool,
    flags: RunFlags,
) -> None:
    """Every write of ATTRIBUTE, in every syntactic form, under PATH or a release SPEC.

    PATH is a directory or a .py file (or a .whl); SPEC is NAME==VERSION, e.g.
    sglang==0.5.9, fetched with pip (no dependencies, nothing installed or run).
    """
    from sgtrace import api
    from sgtrace.report import json as json_report
    from sgtrace.report import text as text_report

    def run() -> Any:
        options = _run_options(flags)
        resolved = api.resolve_targets(targets, options.cache_dir, _hold, None, options.limits)
        return api.find(api.FindQuery(attribute, names=names, reads=reads), resolved, options)

    result = _guarded(flags.debug, run)
    _echo_errors(result.errors, result.shadowed)
    if fmt == "json":
        emit(json_report.render(result))
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        emit(text_report.render(result, width))
        _warn(text_report.summary(result))
    sys.exit(ExitCode.FOUND if result.writes else ExitCode.NOT_FOUND)
