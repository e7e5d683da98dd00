"""The command line: options into a query, one api call, one render, one exit code.

Each command lives in its own module; importing this package registers them all on ``cli``.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Sequence

import click

from sgtrace.cli import (  # noqa: F401  (registers the commands)
    cache_cmd,
    caps_cmds,
    find_cmd,
    gate_cmds,
    graph_cmds,
    history_cmd,
    report_cmd,
)
from sgtrace.cli.base import MAX_DEPTH, _failed, _warn, cli
from sgtrace.model import ExitCode

__all__ = ["cli", "main", "run"]


def run() -> None:
    """The process's entry (the ``sgtrace`` script, ``python -m sgtrace``): :func:`main`, then the process
    ends without freeing its objects one by one (a cold run of SGLang 0.5.23 holds millions, and the
    interpreter's teardown took 8% of it). Only when nothing else runs: another thread (a pool not shut
    down) gets the interpreter's usual ending."""
    code: str | int | None = 0
    # A graph of the newest SGLang allocates millions of small objects and few cycles: collecting
    # less often saves about 5% of a cold run (measured on 0.5.23), for a few MB. Only for the process sgtrace
    # is (not in main(), which tests and programs call in a process of theirs: each call froze every object
    # alive then, garbage in cycles too, and the test suite's process grew past 24 GB).
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int) or threading.active_count() > 1:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (| head): nothing more can be said on it
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: click with usage errors shortened to one line (exit code 2)."""
    # An expression nested --max-depth levels is reduced, hashed and sliced by recursion, a few frames a
    # level: the interpreter's default of 1,000 frames would stop at about 300 levels.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * MAX_DEPTH + 2000))
    typed = list(argv) if argv is not None else sys.argv[1:]
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="sgtrace", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # the help on stdout, why it is no answer on stderr
        command = exc.ctx.command_path if exc.ctx else "sgtrace"
        click.echo(exc.ctx.get_help() if exc.ctx else "")
        _failed(f"error: no command given (see '{command} --help')", ExitCode.ERROR, {}, typed)
        sys.exit(ExitCode.ERROR)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "sgtrace"
        params = exc.ctx.params if exc.ctx else {}
        _failed(f"error: {exc.format_message()} (see '{command} --help')", ExitCode.ERROR, params, typed)
        sys.exit(ExitCode.ERROR)
    except click.Abort:
        _warn("aborted")
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _failed(f"error: {exc.format_message()}", ExitCode.ERROR, {}, typed)
        sys.exit(ExitCode.ERROR)
