"""The click group and what every command shares: option sets, tree resolution, the error boundary."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from sgtrace import __version__
from sgtrace.model import ExitCode


def _warn(message: str) -> None:
    click.echo(f"sgtrace: {message}", err=True)


def _attribute(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.isidentifier():
        raise click.BadParameter(f"{value!r} is not a Python identifier")
    return value


def _run_options(jobs: int | None, cache_dir: Path | None, no_cache: bool) -> Any:
    from sgtrace.api import RunOptions
    from sgtrace.cache import default_dir

    progress = _Progress() if sys.stderr.isatty() else None
    return RunOptions(jobs=jobs, cache_dir=None if no_cache else (cache_dir or default_dir()), progress=progress)


class _Progress:
    """``parsed N/M files`` on stderr, on a terminal, once a run has taken more than a second."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.shown = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.start < 1.0 or (now - self.shown < 0.2 and done < total):
            return
        self.shown = now
        end = "\n" if done == total else ""
        click.echo(f"\rsgtrace: parsed {done}/{total} files", err=True, nl=False)
        if end:
            click.echo("", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sgtrace")
def cli() -> None:
    """Find where a Python tree writes an attribute, and how SGLang's KV pool gets its size.

    \b
    Examples:
      sgtrace find max_total_num_tokens /path/to/sglang
      sgtrace trace max_total_num_tokens sglang==0.5.9
      sgtrace caps sglang==0.5.9
      sgtrace explain sglang==0.5.9 --log server.log
      sgtrace diff sglang==0.5.9 sglang==0.5.23
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


#: --cache-dir, as every command that touches the cache spells it.
CACHE_DIR_OPTION = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="SGTRACE_CACHE_DIR",
    help="Cache directory [env SGTRACE_CACHE_DIR; default ~/.cache/sgtrace].",
)


def _run_flags(function: Any) -> Any:
    """--jobs, --cache-dir, --no-cache and --debug: how any analysis runs."""
    options = [
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per CPU)."),
        CACHE_DIR_OPTION,
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _common(function: Any) -> Any:
    """The run flags, and --max-nodes for the commands that build the graph."""
    return click.option(
        "--max-nodes",
        type=click.IntRange(min=10),
        default=2000,
        show_default=True,
        help="Stop growing the slice past this many nodes.",
    )(_run_flags(function))


def _echo_errors(errors: Any) -> None:
    """Files that could not be analysed, one ``path:line: message`` line each, on stderr."""
    for error in errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
