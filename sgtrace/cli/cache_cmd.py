"""``sgtrace cache info``, ``sgtrace cache prune`` and ``sgtrace cache clear``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sgtrace.cli.base import (
    CACHE_DIR_OPTION,
    ByteSize,
    _failed,
    _warn,
    cli,
)
from sgtrace.cli.output import emit
from sgtrace.model import ExitCode


@cli.group(name="cache")
def cache_group() -> None:
    """The on-disk cache: what is learnt of each file, graphs, answers, fetched releases.

    \b
    Examples:
      sgtrace cache info
      sgtrace cache prune --older-than 30 --max-size 500MB
      sgtrace cache clear --keep-releases
    """


@cache_group.command(name="info")
@CACHE_DIR_OPTION
def cache_info(cache_dir: Path | None) -> None:
    """Where the cache is, and what it holds."""
    from sgtrace.cache import default_dir, usage
    from sgtrace.cachedir import BOUND, COMPUTED

    directory = cache_dir or default_dir()
    lines = [f"cache directory: {directory}"]
    parts = usage(directory)
    if not parts:
        lines.append("  (empty)")
    for name, (files, size) in parts.items():
        lines.append(f"  {name:<10} {files:>7} files {size / (1 << 20):>9.1f} MiB")
    if parts:
        files = sum(files for files, _ in parts.values())
        size = sum(size for _, size in parts.values())
        lines.append(f"  {'total':<10} {files:>7} files {size / (1 << 20):>9.1f} MiB")
        computed = sum(parts[name][1] for name in COMPUTED if name in parts)
        lines.append(
            f"computed entries: {computed / (1 << 20):.1f} MiB of a bound of {BOUND / (1 << 20):.0f} MiB "
            "(past it, a run removes those used longest ago; 'sgtrace cache prune' removes more)"
        )
    emit("".join(f"{line}\n" for line in lines))


@cache_group.command(name="prune")
@CACHE_DIR_OPTION
@click.option(
    "--older-than", type=click.FloatRange(min=0), metavar="DAYS", help="Remove the entries not used for this many days."
)
@click.option("--max-size", type=ByteSize(), metavar="SIZE",
              help="Then remove the entries used longest ago until the rest fit in SIZE (e.g. 500MB).")  # fmt: skip
def cache_prune(cache_dir: Path | None, older_than: float | None, max_size: int | None) -> None:
    """Remove what sgtrace computed that was not used lately (fetched releases are kept: see clear).

    With neither option, the cache is brought under its default bound.
    """
    from sgtrace.cache import default_dir
    from sgtrace.cachedir import BOUND, is_tagged, prune, refusal

    directory = cache_dir or default_dir()
    if directory.exists() and not is_tagged(directory):
        _warn(
            f"error: {refusal(directory).replace('; name a new or empty folder with --cache-dir', ': nothing removed')}"
        )
        sys.exit(ExitCode.ERROR)
    seconds = older_than * 86400 if older_than is not None else None
    files, size = prune(directory, seconds, max_size if max_size is not None or seconds is not None else BOUND)
    emit(f"removed {files} files ({size / (1 << 20):.1f} MiB) from {directory}\n")


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
        _failed(f"error: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)
    emit(f"removed {removed} files from {directory}\n")
