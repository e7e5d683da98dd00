"""The functions the CLI calls, and that tests and users import."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sgtrace.discover import Listing, RootError, discover
from sgtrace.engine import RunOptions, TreeScan, scan_tree
from sgtrace.fetch import FetchError
from sgtrace.identifiers import IdentifierIndex
from sgtrace.model import (
    READ_KINDS,
    BudgetSite,
    Cap,
    CapsResult,
    FileError,
    FindQuery,
    FindResult,
    Site,
    SourceFile,
    TraceQuery,
    TraceResult,
)
from sgtrace.parse import read_bytes
from sgtrace.sources import Target, resolve

if TYPE_CHECKING:
    import networkx as nx

    from sgtrace.analyses.diff import CapDiff
    from sgtrace.analyses.explain import Explanation
    from sgtrace.analyses.operator import Context, Want

__all__ = [
    "FindQuery",
    "FindResult",
    "InputError",
    "ReportResult",
    "RunOptions",
    "TraceQuery",
    "TraceResult",
    "caps",
    "diff",
    "explain",
    "find",
    "focus",
    "report",
    "resolve_targets",
    "trace",
]


class InputError(Exception):
    """A root or spec that cannot be analysed at all (exit code 2)."""


def resolve_targets(
    targets: Sequence[str], cache_dir: Path | None, notify: Callable[[str], None], git: str | None = None
) -> list[Target]:
    """Resolve PATH|SPEC arguments (none: the embedded default; revisions with *git*), telling *notify*."""
    from sgtrace.cache import default_dir

    fetch_dir = cache_dir or default_dir()
    resolved: list[Target] = []
    wanted: list[str | None] = list(targets) or [None]
    for text in wanted:
        try:
            target = resolve(text, fetch_dir, git)
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
    return _find(query, [(t, _discover(t, options)) for t in targets], options)[0]


def _discover(target: Target, options: RunOptions) -> Listing:
    """The files of a tree that the run analyses, named as Python imports them (a folder with none is said)."""
    try:
        listing = discover(target.path, options.path_filter)
    except RootError as exc:
        raise InputError(str(exc)) from exc
    if not listing.files and options.notify is not None and Path(target.path).is_dir():
        options.notify(
            f"warning: no Python file to analyse under {target.display} "
            "(a checkout's .gitignore, --exclude and --include choose them; --no-ignore reads past .gitignore)"
        )
    return listing


def _bytes_of(path: str) -> bytes:
    """A file's bytes, or none if it cannot be read (find's pass has reported it)."""
    try:
        return read_bytes(path)
    except OSError:
        return b""


def _find(
    query: FindQuery,
    listed: Sequence[tuple[Target, Listing]],
    options: RunOptions,
    digest: bool = False,
    meanwhile: Callable[[dict[str, bytes]], None] | None = None,
) -> tuple[FindResult, bytes, dict[str, bytes]]:
    """The result and, if asked, a digest of the trees and their files' bytes, from the same pass."""
    writes: list[Site] = []
    reads: list[Site] = []
    errors: list[FileError] = []
    stats: dict[str, int] = {}
    prefix_paths = len(listed) > 1
    digests = []
    contents: dict[str, bytes] = {}
    for target, listing in listed:
        tree = scan_tree(listing, query.attribute, options, digest, meanwhile)
        digests.append(tree.digest)
        contents.update(tree.contents)
        prefix = f"{target.display.rstrip('/')}/" if prefix_paths else ""
        _collect(tree, query, prefix, writes, reads, errors)
        for name, value in tree.stats.items():
            stats[name] = stats.get(name, 0) + value
    result = FindResult(
        attribute=query.attribute,
        root=", ".join(t.display for t, _ in listed),
        writes=tuple(sorted(writes, key=_site_order)),
        reads=tuple(sorted(reads, key=_site_order)) if query.reads else None,
        errors=tuple(sorted(errors, key=lambda e: (e.path, e.line, e.message))),
        stats=stats,
        shadowed=tuple(s for _, listing in listed for s in listing.shadowed),
    )
    return result, b"".join(digests), contents


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


def trace(
    query: TraceQuery, target: Target, options: RunOptions, listing: Listing | None = None, reach: bool = False
) -> TraceResult:
    """The data-flow graph of ``query.attribute``: backward from its writes, forward to its reads.

    With *reach*, the graph also holds the calls that run the cap functions and their conditions
    (graph attribute ``reach``, what ``explain`` evaluates).
    """
    return _traced(_prepare(query, target, options, listing, reach), options)


@dataclass(frozen=True)
class _Prepared:
    """What every graph question starts from: the files, find's answer, and the graph's cache key."""

    query: TraceQuery
    target: Target
    listing: Listing
    found: FindResult
    entry: str
    reach: bool = False
    #: Module -> bytes, as find's pass read them (the graph, when built, reads them from here).
    contents: dict[str, bytes] = field(default_factory=dict, repr=False)
    #: The tree's identifier index, when it was built while find's workers parsed.
    identifiers: IdentifierIndex | None = None


def _prepare(
    query: TraceQuery, target: Target, options: RunOptions, listing: Listing | None, reach: bool = False
) -> _Prepared:
    from sgtrace.cache import key

    listing = listing or _discover(target, options)
    built: list[IdentifierIndex] = []

    def index(contents: dict[str, bytes]) -> None:  # files must be parsed: the graph cannot be cached
        # the whole tree's words: what this pass read, and the files the manifest let it skip
        first: dict[str, SourceFile] = {}
        for source in listing.files:
            first.setdefault(source.module, source)  # as the project keeps them
        pairs = [(m, contents.get(m) or _bytes_of(first[m].abspath)) for m in sorted(first)]
        built.append(IdentifierIndex(pairs))

    found, digest, contents = _find(FindQuery(query.attribute, reads=True), [(target, listing)], options, True, index)
    extras = ("reach",) * reach + ("strict-types",) * query.strict_types
    entry = key(digest, "graph", query.attribute, str(query.max_nodes), *query.knob_receivers, *extras)
    return _Prepared(query, target, listing, found, entry, reach, contents, built[0] if built else None)


def _traced(prepared: _Prepared, options: RunOptions) -> TraceResult:
    """The graph from the cache, or built and cached."""
    from sgtrace.cache import JsonCache
    from sgtrace.graph.build import build
    from sgtrace.graph.store import from_data, to_data
    from sgtrace.project import Project

    query, found = prepared.query, prepared.found
    project = Project(prepared.listing, JsonCache(options.cache_dir, "index"), prepared.contents, prepared.identifiers)
    store = JsonCache(options.cache_dir, "graph")
    cached = store.get(prepared.entry)
    graph = None
    if cached is not None:
        try:
            graph = from_data(cached)
        except (KeyError, TypeError, ValueError) as exc:
            print(f"sgtrace: warning: ignoring damaged cached graph: {exc}", file=sys.stderr)
    if graph is None:
        slicer = build(
            project, query.attribute, found.writes, found.reads or (), query.max_nodes, query.knob_receivers,
            with_reach=prepared.reach, strict=query.strict_types,
        )  # fmt: skip
        graph = slicer.graph
        graph.graph.update(attribute=query.attribute, truncated=slicer.truncated)
        store.put(prepared.entry, to_data(graph))
    errors = sorted({*found.errors, *project.errors}, key=lambda e: (e.path, e.line, e.message))
    stats = {**found.stats, "nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}
    truncated = bool(graph.graph.get("truncated"))
    return TraceResult(query.attribute, prepared.target.display, graph, truncated, tuple(errors), stats, found.shadowed)


def caps(
    query: TraceQuery, budget: str, target: Target, options: RunOptions, listing: Listing | None = None
) -> CapsResult:
    """Where *budget* enters the computation of ``query.attribute``, and every cap on the way to it.

    The answer is cached beside the graph, so a warm run loads neither the graph nor networkx.
    """
    from sgtrace.cache import JsonCache, key
    from sgtrace.codec import from_json

    prepared = _prepare(query, target, options, listing)
    store = JsonCache(options.cache_dir, "caps")
    entry = key(prepared.entry.encode(), "caps", budget)
    cached = store.get(entry)
    if cached is not None:
        try:
            sites = tuple(from_json(s, BudgetSite) for s in cached["sites"])
            found = tuple(from_json(c, Cap) for c in cached["caps"])
            errors = prepared.found.errors
            return CapsResult(
                query.attribute, budget, target.display, sites, found, errors, bool(cached["truncated"]),
                prepared.found.shadowed,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            print(f"sgtrace: warning: ignoring damaged cached caps: {exc}", file=sys.stderr)
    result = _caps(_traced(prepared, options), budget)
    store.put(entry, {"sites": result.budget_sites, "caps": result.caps, "truncated": result.truncated})
    return result


def _caps(traced: TraceResult, budget: str) -> CapsResult:
    from sgtrace.analyses.caps import check

    sites, found = check(traced.graph, budget)
    return CapsResult(
        traced.attribute,
        budget,
        traced.root,
        tuple(sites),
        tuple(found),
        traced.errors,
        traced.truncated,
        traced.shadowed,
    )


def explain(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    log: bytes | str | None,
    settings: dict[str, object],
    want: Want | None = None,
) -> tuple[CapsResult, Explanation, Context]:
    """The budget formula found in the code, evaluated with a log's start-up and ``--set`` values.

    *log* is the log's bytes (plain, journal, docker, gzip) or text; *want* picks the start-up and asks
    for a pool (what-if). A log that cannot be read, a ``--set`` that names nothing or is not a number
    where one is needed, and a start-up that is not there are an InputError.
    """
    import dataclasses

    from sgtrace.analyses.explain import where_set
    from sgtrace.analyses.operator import BadInput, Want, build, read_runs
    from sgtrace.analyses.reached import read_paths
    from sgtrace.graph.reach import REACH

    try:
        runs = read_runs(log) if log is not None else []
        listing = _discover(target, options)
        traced = trace(query, target, options, listing, reach=True)
        found = _caps(traced, budget)
        paths = read_paths(traced.graph.graph.get(REACH))
        sites, capped = list(found.budget_sites), list(found.caps)
        result, context = build(listing.files, sites, capped, budget, runs, settings, want or Want(), paths)
    except BadInput as exc:
        raise InputError(str(exc)) from exc
    origins = where_set(traced.graph, result.steps)
    missing = {
        name: f"{how} (set at {origins[name]})" if name in origins else how for name, how in result.missing.items()
    }
    return found, dataclasses.replace(result, missing=missing), context


def diff(
    query: TraceQuery, budget: str, old: Target, new: Target, options: RunOptions
) -> tuple[CapsResult, CapsResult, CapDiff]:
    """The caps and budget sites of two trees, and how they differ."""
    from sgtrace.analyses.diff import compare

    before = caps(query, budget, old, options)
    after = caps(query, budget, new, options)
    return before, after, compare(before.caps, after.caps, before.budget_sites, after.budget_sites)


def focus(query: TraceQuery, budget: str, target: Target, options: RunOptions) -> TraceResult:
    """The budget's view of the slice (``analyses.focus``): knobs, budget sites, caps, the pool's writes, readers."""
    from dataclasses import replace

    from sgtrace.analyses.focus import focus as view

    traced = trace(query, target, options)
    found = _caps(traced, budget)
    shown = view(traced.graph, found.budget_sites, found.caps, budget)
    return replace(traced, graph=shown, stats={**traced.stats, "nodes": len(shown), "edges": shown.number_of_edges()})


@dataclass(frozen=True)
class ReportResult:
    """What ``sgtrace report`` puts on its page."""

    #: The tree analysed.
    target: Target
    #: Its caps and budget sites.
    caps: CapsResult
    #: The whole slice (``trace``).
    traced: TraceResult
    #: The budget's view of the slice (``analyses.focus``).
    focus: nx.DiGraph
    #: The formula evaluated and the run explained, when a log or ``--set`` was given.
    explained: tuple[Explanation, Context] | None
    #: ``diff``'s answer from the tree given with ``--against`` to this one.
    against: tuple[CapsResult, CapsResult, CapDiff] | None
    #: The tree given with ``--against``.
    old: Target | None
    #: Log line number -> its text, for the lines the page cites.
    log_lines: dict[int, str]


def report(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    log: bytes | None = None,
    settings: dict[str, object] | None = None,
    want: Want | None = None,
    against: Target | None = None,
) -> ReportResult:
    """Everything the report shows: the slice and its focus, the caps, ``explain`` with a log or settings, ``diff``.

    ``explain`` reads the slice from the cache that ``trace`` filled (with ``--no-cache`` it is built twice).
    """
    from sgtrace.analyses.focus import focus as view

    traced = trace(query, target, options, reach=True)
    explained = None
    found = _caps(traced, budget)
    if log is not None or settings:
        found, explanation, context = explain(query, budget, target, options, log, settings or {}, want)
        explained = (explanation, context)
    shown = view(traced.graph, found.budget_sites, found.caps, budget)
    compared = diff(query, budget, against, target, options) if against is not None else None
    lines = _cited_lines(log, explained[1]) if log is not None and explained is not None else {}
    return ReportResult(target, found, traced, shown, explained, compared, against, lines)


def _cited_lines(log: bytes, context: Context) -> dict[int, str]:
    """The text (prefixes taken off, rank kept) of the log lines the ledger and the answer cite."""
    from sgtrace.analyses.logs import decode, lines

    wanted = {row.line for row in context.ledger if row.line is not None}
    return {
        line.number: f"[{line.rank}] {line.text}" if line.rank else line.text
        for line in lines(decode(log))
        if line.number in wanted
    }
