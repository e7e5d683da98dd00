"""``sgtrace find``."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from sgtrace.cli.base import (
    _attribute,
    _run_options,
    _warn,
    cli,
)
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
