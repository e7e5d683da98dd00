"""The functions the CLI calls, and that tests and users import."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sgtrace.discover import RootError
from sgtrace.engine import RunOptions, TreeScan, scan_tree
from sgtrace.fetch import FetchError
from sgtrace.model import READ_KINDS, FileError, FindQuery, FindResult, Site
from sgtrace.sources import Target, resolve

__all__ = ["FindQuery", "FindResult", "InputError", "RunOptions", "find", "resolve_targets"]


class InputError(Exception):
    """A root or spec that cannot be analysed at all (exit code 2)."""


def resolve_targets(targets: Sequence[str], cache_dir: Path | None, notify: Callable[[str], None]) -> list[Target]:
    """Resolve PATH|SPEC arguments (none: the embedded default), telling *notify* what was chosen."""
    from sgtrace.cache import default_dir

    fetch_dir = cache_dir or default_dir()
    resolved: list[Target] = []
    wanted: list[str | None] = list(targets) or [None]
    for text in wanted:
        try:
            target = resolve(text, fetch_dir)
        except FetchError as exc:
            raise InputError(str(exc)) from exc
        if target.note:
            notify(target.note)
        if not Path(target.path).exists():
            raise InputError(f"no such file or directory: {target.display}")
        resolved.append(target)
    return resolved


def find(query: FindQuery, targets: Sequence[Target], options: RunOptions) -> FindResult:
    """Every write (and optionally read) of ``query.attribute`` under *targets*."""
    writes: list[Site] = []
    reads: list[Site] = []
    errors: list[FileError] = []
    stats: dict[str, int] = {}
    prefix_paths = len(targets) > 1
    for target in targets:
        try:
            tree = scan_tree(target.path, query.attribute, options)
        except RootError as exc:
            raise InputError(str(exc)) from exc
        prefix = f"{target.display.rstrip('/')}/" if prefix_paths else ""
        _collect(tree, query, prefix, writes, reads, errors)
        for name, value in tree.stats.items():
            stats[name] = stats.get(name, 0) + value
    return FindResult(
        attribute=query.attribute,
        root=", ".join(t.display for t in targets),
        writes=tuple(sorted(writes, key=_site_order)),
        reads=tuple(sorted(reads, key=_site_order)) if query.reads else None,
        errors=tuple(sorted(errors, key=lambda e: (e.path, e.line, e.message))),
        stats=stats,
    )


def _collect(
    tree: TreeScan, query: FindQuery, prefix: str, writes: list[Site], reads: list[Site], errors: list[FileError]
) -> None:
    errors.extend(FileError(prefix + e.path, e.line, e.message) for e in tree.errors)
    for source, scan in tree.files:
        errors.extend(FileError(prefix + e.path, e.line, e.message) for e in scan.errors)
        owner_prefix = f"{source.module}." if source.module else ""
        for access in scan.accesses:
            if access.kind == "del" or (access.kind == "name" and not query.names):
                continue
            site = Site(
                path=prefix + source.path,
                line=access.line,
                column=access.column,
                kind=access.kind,
                owner=owner_prefix + access.cls if access.cls else None,
                function=access.function,
                code=access.code,
            )
            (reads if access.kind in READ_KINDS else writes).append(site)


def _site_order(site: Site) -> tuple[str, int, int, str]:
    return (site.path, site.line, site.column, site.kind)
