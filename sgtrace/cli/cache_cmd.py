"""``sgtrace cache info`` and ``sgtrace cache clear``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sgtrace.cli.base import (
    CACHE_DIR_OPTION,
    _warn,
    cli,
)
from sgtrace.cli.output import emit
from sgtrace.model import ExitCode


@cli.group(name="cache")
def cache_group() -> None:
    """The on-disk cache: per-file results, the index, graphs, fetched releases.

    \b
    Examples:
      sgtrace cache info
      sgtrace cache clear --keep-releases
    """


@cache_group.command(name="info")
@CACHE_DIR_OPTION
def cache_info(cache_dir: Path | None) -> None:
    """Where the cache is, and what it holds."""
    from sgtrace.cache import default_dir, usage

    directory = cache_dir or default_dir()
    lines = [f"cache directory: {directory}"]
    parts = usage(directory)
    if not parts:
        lines.append("  (empty)")
    for name, (files, size) in parts.items():
        lines.append(f"  {name:<10} {files:>7} files {size / (1 << 20):>9.1f} MiB")
    emit("".join(f"{line}\n" for line in lines))


@cache_group.command(name="clear")
@CACHE_DIR_OPTION
@click.option("--keep-releases", is_flag=True, help="Keep fetched releases (they cost a download).")
def cache_clear(cache_dir: Path | None, keep_releases: bool) -> None:
    """Empty the cache: only what sgtrace wrote, in a folder that carries sgtrace's CACHEDIR.TAG."""
    from sgtrace.cache import default_dir
    from sgtrace.cachedir import NotACache, clear

    directory = cache_dir or default_dir()
    try:
        removed = clear(directory, ("releases",) if keep_releases else ())
    except NotACache as exc:
        _warn(f"error: {exc}")
        sys.exit(ExitCode.ERROR)
    emit(f"removed {removed} files from {directory}\n")
