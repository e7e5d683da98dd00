"""``sgtrace history``: the caps, formula and pool release by release, and where they first change."""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    ServerFlags,
    _budget_options,
    _common,
    _failed,
    _guarded,
    _query,
    _run_options,
    _server_options,
    _settings,
    _warn,
    cli,
)
from sgtrace.cli.constraints import constraints
from sgtrace.cli.output import emit
from sgtrace.model import ExitCode

_EPILOG = """\b
Examples:
  sgtrace history sglang==0.5.9..0.5.23
  sgtrace history sglang==0.5.9..0.5.23 --log server.log --set mm_reservation_gb=0
  sgtrace history sglang==0.5.9..0.5.23 --log server.log --first-change
  sgtrace history sglang==0.5.9,0.5.14,0.5.23 --format markdown > history.md
  sgtrace history num_gpu_blocks vllm==0.6.5,0.6.6.post1 --budget gpu_memory_utilization
  sgtrace history --git ~/src/sglang v0.5.9..v0.5.23 --first-change --watch budget

\b
RANGE is name==LOW..HIGH (every release the registry has between them,
post-releases included, pre-releases with --pre), name==A,B,C, or trees
(paths, wheels, specs) one per argument; with --git, LOW..HIGH of the
checkout (both ends, and the first-parent commits between them that touch
a file the slice reads or carry a tag, and where a tagged release branch
leaves the line) or revisions. A row is marked (*) when its step from the row before changes
what --watch names (default: the formula and the pool with a start-up,
else the formula and added, removed or changed caps). --first-change reads
only the releases a binary search needs to find the first change of what
--watch names (default: the pool with a start-up, else the formula); as
git bisect, it assumes that once changed, it stays changed. A release that cannot be fetched is a row
that says so. Releases are read two at a time in child processes where two
cores are idle (-j 1: one after the other). Exit codes: 0 answered, 2 usage
or input error.
"""


def _watch(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[str, ...]:
    from sgtrace.analyses.history import KINDS

    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    return kinds


@cli.command(epilog=_EPILOG)
@constraints(needs=[("run_index", "log_file")])
@click.argument("words", nargs=-1, required=True, metavar="[ATTR] RANGE...")
@click.option("--git", "repository", type=click.Path(file_okay=False, exists=True),
              help="RANGE is LOW..HIGH (or revisions) of this checkout.")  # fmt: skip
@click.option("--pre", is_flag=True, help="Take pre-releases into a name==LOW..HIGH range.")
@click.option("--first-change", "first", is_flag=True,
              help="Read only the releases a binary search needs to find the first change of --watch.")  # fmt: skip
@click.option("--watch", default="", callback=_watch, metavar="KINDS",
              help="Changes that mark a step: added, removed, changed, moved, budget, pool.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--log", "log_file", type=click.File("rb"),
              help="An SGLang log or journal ('-': standard input): its start-up's pool on every release.")  # fmt: skip
@click.option("--run", "run_index", type=click.IntRange(min=1), help="Evaluate start-up N (1 = the oldest).")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="Supply or override an input, as explain takes it (given to each release that has it).")  # fmt: skip
@click.option("--max-stops", type=click.IntRange(min=2), default=50, show_default=True,
              help="Most releases or commits read whole (--first-change reads about log2 of them).")  # fmt: skip
@click.option("--fetch-jobs", type=click.IntRange(min=1, max=16), default=4, show_default=True,
              help="Releases fetched at once.")  # fmt: skip
@_budget_options
@_server_options
@_common
def history(
    words: tuple[str, ...],
    repository: str | None,
    pre: bool,
    first: bool,
    watch: tuple[str, ...],
    fmt: str,
    log_file: Any,
    run_index: int | None,
    settings: tuple[str, ...],
    max_stops: int,
    fetch_jobs: int,
    attribute: str,
    budget: str,
    server: ServerFlags,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """The caps, budget formula and start-up's pool of ATTR on every release of RANGE, and which step changed them."""
    from sgtrace import api
    from sgtrace.analyses.operator import Want
    from sgtrace.report import history as render

    attribute, stops = _attribute_and_stops(words, attribute, repository)
    values = _settings(settings, budget)
    progress = HistoryProgress()

    def run() -> Any:
        options = _run_options(flags)
        listed = api.StopList(stops, options.cache_dir, repository, pre)
        log = api.replayable(log_file, server.max_log_bytes) if log_file is not None else None
        return api.history(
            _query(attribute, max_nodes, strict_types), budget, listed, options, log, values, Want(run_index),
            kinds=watch, first=first, git=repository, notify=progress, fetch_jobs=fetch_jobs,
            lanes=None if flags.jobs is None else min(2, flags.jobs), max_stops=max_stops, **server.keywords(),
        )  # fmt: skip

    found = _guarded(flags.debug, run)
    progress.done()
    span = " ".join(stops)
    renderer = {"json": render.render_json, "markdown": render.render_markdown}.get(fmt, render.render_text)
    emit(_guarded(flags.debug, lambda: renderer(found, span)))
    _warn(f"history: {render.verdict_line(found)}")
    sys.exit(ExitCode.FOUND)


def _attribute_and_stops(words: tuple[str, ...], attribute: str, repository: str | None) -> tuple[str, list[str]]:
    """ATTR (when the first word is one) and the stops; a positional ATTR and a different --attr is an error."""
    import os

    first, rest = words[0], list(words[1:])
    is_attribute = bool(rest) and first.isidentifier() and not os.path.exists(first)
    if is_attribute and repository is not None:
        from sgtrace.fetch import FetchError, commit

        try:
            commit(repository, first)
            is_attribute = False  # a revision of the checkout
        except FetchError:
            pass
    if not is_attribute:
        return attribute, list(words)
    if attribute not in ("max_total_num_tokens", first):
        _failed(f"error: ATTR {first} and --attr {attribute} name two attributes; give one", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)
    return first, rest


#: ``(k of n)`` at the end of a progress message: a bar is drawn for it on a terminal.
_COUNT = re.compile(r"\((\d+) of (\d+)\)$")


def _bar(message: str, width: int = 20) -> str:
    """``[#####.....] `` for a message that ends with ``(k of n)``, else ""."""
    found = _COUNT.search(message)
    if found is None or int(found[2]) == 0:
        return ""
    filled = round(width * int(found[1]) / int(found[2]))
    return f"[{'#' * filled}{'.' * (width - filled)}] "


class HistoryProgress:
    """What a history is doing, on stderr once it has run a few seconds: one line rewritten on a terminal,
    plain lines otherwise."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.open = False

    def __call__(self, message: str) -> None:
        if time.monotonic() - self.start < 3.0:
            return
        if self.terminal:
            click.echo(f"\r\033[Ksgtrace: history: {_bar(message)}{message}", err=True, nl=False)
            self.open = True
        else:
            _warn(f"history: {message}")

    def done(self) -> None:
        """End the rewritten line, if one was written."""
        if self.open:
            click.echo("", err=True)
            self.open = False
