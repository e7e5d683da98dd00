"""Plain-text renderer: a table for the terminal (the only user of tabulate)."""

from __future__ import annotations

import re

from tabulate import tabulate

from sgtrace.model import FindResult, Site
from sgtrace.report.provenance import named

#: Column headers of the find table (the path heads each file's group of rows).
HEADERS = ("line", "kind", "in", "code")
_INDENT = "  "


def render(result: FindResult, width: int | None = None) -> str:
    """The find result as a table grouped by file; *width* (a terminal's) truncates the code column."""
    sites = sorted(result.writes + (result.reads or ()), key=lambda s: (s.path, s.line, s.column, s.kind))
    trees = heading(result)
    if not sites:
        return f"no writes of .{result.attribute} under {trees}\n"
    rows = [_row(site) for site in sites]
    if width is not None:
        fixed = len(_INDENT) + sum(max(len(h), *(len(r[i]) for r in rows)) + 2 for i, h in enumerate(HEADERS[:3]))
        rows = [(*r[:3], _truncate(r[3], max(20, width - fixed - 1))) for r in rows]
    table: str = tabulate(rows, headers=HEADERS, tablefmt="simple", disable_numparse=True)
    head, *body = table.splitlines()[:2], *table.splitlines()[2:]
    lines = [f"writes of .{result.attribute}{' and reads' if result.reads is not None else ''} in {trees}"]
    lines += [_INDENT + line for line in head]
    previous = None
    for site, line in zip(sites, body, strict=True):
        if site.path != previous:
            lines.append(site.path)
            previous = site.path
        lines.append(_INDENT + line)
    return "\n".join(lines) + "\n"


def heading(result: FindResult) -> str:
    """The trees read, each with what it is (its commit, version, state)."""
    if not result.trees:
        return result.root
    return ", ".join(named(tree.display, tree) for tree in result.trees)


def _row(site: Site) -> tuple[str, str, str, str]:
    scope = site.function or (site.owner.rsplit(".", 1)[-1] if site.owner else "<module>")
    return (f"{site.line}:{site.column}", site.kind, scope, one_line(site.code))


def one_line(code: str) -> str:
    """Source folded onto one line (continuation backslashes and runs of blanks removed)."""
    return re.sub(r"\s+", " ", code.replace("\\\n", " ")).strip()


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def summary(result: FindResult) -> str:
    """One line for stderr: counts of what was found and what was looked at."""
    stats = result.stats
    files = len({s.path for s in result.writes})
    parts = [f"{_count(len(result.writes), 'write')} of .{result.attribute} in {_count(files, 'file')}"]
    if result.reads is not None:
        parts.append(_count(len(result.reads), "read"))
    parts.append(
        f"{_count(stats.get('files', 0), 'file')} scanned, {stats.get('matched', 0)} mention it, "
        f"{stats.get('parsed', 0)} parsed"
    )
    if result.errors:
        parts.append(_count(len(result.errors), "error"))
    return "; ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
