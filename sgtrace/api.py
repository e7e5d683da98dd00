"""The functions the CLI calls, and that tests and users import."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from sgtrace.discover import Listing, PatternError, RootError, discover
from sgtrace.engine import RunOptions, TreeScan, scan_tree
from sgtrace.fetch import FetchError
from sgtrace.model import (
    READ_KINDS,
    BudgetSite,
    Cap,
    CapsResult,
    FileError,
    FindQuery,
    FindResult,
    Limits,
    Site,
    TraceQuery,
    TraceResult,
)
from sgtrace.sources import Target, resolve

if TYPE_CHECKING:
    import networkx as nx

    from sgtrace.analyses.diff import CapDiff
    from sgtrace.analyses.explain import Explanation
    from sgtrace.analyses.operator import Context, Want
    from sgtrace.analyses.upgrade import PoolChange, ReleasePool
    from sgtrace.chunks import TreeIndex

__all__ = [
    "FindQuery",
    "FindResult",
    "InputError",
    "ReportResult",
    "RunOptions",
    "TraceQuery",
    "TraceResult",
    "caps",
    "check",
    "diff",
    "explain",
    "find",
    "focus",
    "report",
    "resolve_targets",
    "trace",
]


#: The decompressed size of a log read by default (see analyses.logstream).
DEFAULT_MAX_LOG_BYTES = 2 << 30


class InputError(Exception):
    """A root or spec that cannot be analysed at all (exit code 2)."""


def resolve_targets(
    targets: Sequence[str],
    cache_dir: Path | None,
    notify: Callable[[str], None],
    git: str | None = None,
    limits: Limits = Limits(),
    sample: bool = True,
) -> list[Target]:
    """Resolve PATH|SPEC arguments (none: the installed sglang, else the embedded sample -- or, without *sample*,
    an InputError; revisions with *git*), telling *notify*."""
    from sgtrace.cache import default_dir

    fetch_dir = cache_dir or default_dir()
    resolved: list[Target] = []
    wanted: list[str | None] = list(targets) or [None]
    for text in wanted:
        try:
            target = resolve(text, fetch_dir, git, limits, sample)
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
    from sgtrace.cachedir import tidy

    found = _find(query, [(t, _discover(t, options)) for t in targets], options)
    tidy(options.cache_dir)
    return found


def _discover(target: Target, options: RunOptions) -> Listing:
    """The files of a tree that the run analyses, named as Python imports them (a folder with none is said)."""
    try:
        listing = discover(target.path, options.path_filter, options.limits)
    except (RootError, PatternError) as exc:
        raise InputError(str(exc)) from exc
    if options.notify is not None:
        for note in listing.notes:
            options.notify(note)
    if not listing.files and not listing.errors and options.notify is not None and Path(target.path).is_dir():
        options.notify(
            f"warning: no Python file to analyse under {target.display} "
            "(a checkout's .gitignore, --exclude and --include choose them; --no-ignore reads past .gitignore)"
        )
    return listing


def _find(query: FindQuery, listed: Sequence[tuple[Target, Listing]], options: RunOptions) -> FindResult:
    """find's answer over one or more trees."""
    return _found(query, listed, [scan_tree(listing, query.attribute, options) for _, listing in listed])


def _found(query: FindQuery, listed: Sequence[tuple[Target, Listing]], trees: Sequence[TreeScan]) -> FindResult:
    """find's answer from the scans of each tree (paths prefixed with the tree when there are several)."""
    writes: list[Site] = []
    reads: list[Site] = []
    errors: list[FileError] = []
    stats: dict[str, int] = {}
    prefix_paths = len(listed) > 1
    for (target, _), tree in zip(listed, trees, strict=True):
        prefix = f"{target.display.rstrip('/')}/" if prefix_paths else ""
        _collect(tree, query, prefix, writes, reads, errors)
        for name, value in tree.stats.items():
            stats[name] = stats.get(name, 0) + value
    return FindResult(
        attribute=query.attribute,
        root=", ".join(t.display for t, _ in listed),
        writes=tuple(sorted(writes, key=_site_order)),
        reads=tuple(sorted(reads, key=_site_order)) if query.reads else None,
        errors=tuple(sorted(errors, key=lambda e: (e.path, e.line, e.message))),
        stats=stats,
        shadowed=tuple(s for _, listing in listed for s in listing.shadowed),
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


def trace(
    query: TraceQuery, target: Target, options: RunOptions, listing: Listing | None = None, reach: bool = False
) -> TraceResult:
    """The data-flow graph of ``query.attribute``: backward from its writes, forward to its reads.

    With *reach*, the graph also holds the calls that run the cap functions and their conditions
    (graph attribute ``reach``, what ``explain`` evaluates).
    """
    prepared = _prepare(query, target, options, listing, reach)
    with _finishing(prepared, options):
        return _traced(prepared, options)


@dataclass(frozen=True)
class _Prepared:
    """What every graph question starts from: the files, find's answer, and the graph's cache key."""

    query: TraceQuery
    target: Target
    listing: Listing
    found: FindResult
    entry: str
    reach: bool = False
    #: The tree's identifier index and its files' content digests, from find's pass.
    index: TreeIndex | None = field(default=None, repr=False)


@contextmanager
def _finishing(prepared: _Prepared, options: RunOptions) -> Iterator[None]:
    """Stop the run's workers once the graph question is answered (or has failed); keep the cache in its bound."""
    from sgtrace.cachedir import tidy

    try:
        yield
    finally:
        if prepared.index is not None:
            prepared.index.workers.close()
    tidy(options.cache_dir)


def _prepare(
    query: TraceQuery, target: Target, options: RunOptions, listing: Listing | None, reach: bool = False
) -> _Prepared:
    from sgtrace.cache import key
    from sgtrace.chunks import index_tree

    listing = listing or _discover(target, options)
    index = index_tree(listing, query.attribute, options, _load_graph_modules)
    found = _found(FindQuery(query.attribute, reads=True), [(target, listing)], [index.scan])
    extras = ("reach",) * reach + ("strict-types",) * query.strict_types
    bound = f"depth={options.limits.depth}"
    entry = key(
        index.scan.digest, "graph", query.attribute, str(query.max_nodes), bound, *query.knob_receivers, *extras
    )
    return _Prepared(query, target, listing, found, entry, reach, index)


def _load_graph_modules() -> None:
    """Import what building a graph needs, while the workers read the tree (a cached answer needs none of it)."""
    import sgtrace.graph.build
    import sgtrace.graph.store  # noqa: F401


def _traced(prepared: _Prepared, options: RunOptions) -> TraceResult:
    """The graph from the cache, or built and cached."""
    from sgtrace.cache import JsonCache
    from sgtrace.graph.build import build
    from sgtrace.graph.store import from_data, to_data
    from sgtrace.project import Project
    from sgtrace.store import ContentStore

    query, found, index = prepared.query, prepared.found, prepared.index
    project = Project(
        prepared.listing, ContentStore(options.cache_dir), index.identifiers if index else None,
        index.digests if index else None, options.limits.depth, index.workers if index else None,
    )  # fmt: skip
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
        project.save()
        # the files the slice could not read are part of the answer: a cached graph says them too
        met = [[e.path, e.line, e.message] for e in project.errors]
        graph.graph.update(attribute=query.attribute, truncated=slicer.truncated, errors=met)
        store.put(prepared.entry, to_data(graph))
    errors = sorted({*found.errors, *_graph_errors(graph)}, key=lambda e: (e.path, e.line, e.message))
    stats = {**found.stats, "nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}
    truncated = bool(graph.graph.get("truncated"))
    return TraceResult(query.attribute, prepared.target.display, graph, truncated, tuple(errors), stats, found.shadowed)


def _graph_errors(graph: Any) -> list[FileError]:
    """The files the slice met but could not read, as the graph records them."""
    found = []
    for item in graph.graph.get("errors") or ():
        if isinstance(item, list) and len(item) == 3:
            found.append(FileError(str(item[0]), int(item[1]), str(item[2])))
    return found


def caps(
    query: TraceQuery, budget: str, target: Target, options: RunOptions, listing: Listing | None = None
) -> CapsResult:
    """Where *budget* enters the computation of ``query.attribute``, and every cap on the way to it.

    The answer is cached beside the graph, so a warm run loads neither the graph nor networkx.
    """
    prepared = _prepare(query, target, options, listing)
    with _finishing(prepared, options):
        return _cached_caps(prepared, query, budget, target, options)


def _cached_caps(
    prepared: _Prepared, query: TraceQuery, budget: str, target: Target, options: RunOptions
) -> CapsResult:
    """The caps from the cache, or found and cached."""
    from sgtrace.cache import JsonCache, key
    from sgtrace.codec import from_json

    store = JsonCache(options.cache_dir, "caps")
    entry = key(prepared.entry.encode(), "caps", budget)
    cached = store.get(entry)
    if cached is not None:
        try:
            sites = tuple(from_json(s, BudgetSite) for s in cached["sites"])
            found = tuple(from_json(c, Cap) for c in cached["caps"])
            errors = tuple(from_json(e, FileError) for e in cached["errors"])
            return CapsResult(
                query.attribute, budget, target.display, sites, found, errors, bool(cached["truncated"]),
                prepared.found.shadowed,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            print(f"sgtrace: warning: ignoring damaged cached caps: {exc}", file=sys.stderr)
    result = _caps(_traced(prepared, options), budget)
    store.put(
        entry,
        {"sites": result.budget_sites, "caps": result.caps, "truncated": result.truncated, "errors": result.errors},
    )
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
    log: bytes | str | BinaryIO | None,
    settings: dict[str, object],
    want: Want | None = None,
    *,
    server_info: bytes | str | None = None,
    command: str | None = None,
    max_log_bytes: int | None = None,
) -> tuple[CapsResult, Explanation, Context]:
    """The budget formula found in the code, evaluated with a log's start-up and ``--set`` values.

    *log* is the log's bytes, text or a binary stream (plain, journal, docker, gzip: read as a stream, at most
    *max_log_bytes* once decompressed); *want* picks the start-up and asks for a pool (what-if).
    *server_info* (the JSON of ``/get_server_info``) and *command* (a launch command, unit file or script)
    give server arguments. A log that cannot be read, a ``--set`` that names nothing or is not a number in
    its range where one is needed, figures that contradict each other and a start-up that is not there are
    an InputError.
    """
    given = _Server(server_info, command, max_log_bytes)
    found, result, context, _ = _explained(query, budget, target, options, log, settings, want, server=given)
    return found, result, context


@dataclass(frozen=True, slots=True)
class _Server:
    """What explain is told of the server besides its log: ``/get_server_info``, the launch command."""

    server_info: bytes | str | None = None
    command: str | None = None
    max_log_bytes: int | None = None


def _explained(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    log: bytes | str | BinaryIO | None,
    settings: Mapping[str, object],
    want: Want | None,
    only_inputs: bool = False,
    server: _Server = _Server(),
) -> tuple[CapsResult, Explanation, Context, ReleasePool]:
    """:func:`explain`, and the release's pool record; with *only_inputs*, ``--set`` names that are not
    inputs of this release are left out (and said in the record) instead of an InputError."""
    import dataclasses

    from sgtrace.analyses.explain import where_set
    from sgtrace.analyses.launch import release_version
    from sgtrace.analyses.operator import BadInput, Given, Want, build, inputs, read_runs
    from sgtrace.analyses.reached import read_paths
    from sgtrace.analyses.upgrade import ReleasePool
    from sgtrace.graph.reach import REACH

    try:
        runs = read_runs(log, server.max_log_bytes or DEFAULT_MAX_LOG_BYTES) if log is not None else []
        listing = _discover(target, options)
        traced = trace(query, target, options, listing, reach=True)
        found = _caps(traced, budget)
        paths = read_paths(traced.graph.graph.get(REACH))
        sites, capped = list(found.budget_sites), list(found.caps)
        left_out: tuple[str, ...] = ()
        if only_inputs:
            known = inputs(listing.files, sites, capped, budget, paths)
            left_out = tuple(sorted(set(settings) - known))
            settings = {name: value for name, value in settings.items() if name in known}
        version = _spec_version(target.display) or release_version(list(listing.files))
        given = Given(settings, server.command or "", server.server_info or b"", version)
        result, context = build(listing.files, sites, capped, budget, runs, settings, want or Want(), paths, given)
    except BadInput as exc:
        raise InputError(str(exc)) from exc
    origins = where_set(traced.graph, result.steps)
    missing = {
        name: f"{how} (set at {origins[name]})" if name in origins else how for name, how in result.missing.items()
    }
    result = dataclasses.replace(result, missing=missing)
    computed_at = {**origins, **_computed_at(traced.graph, result, settings)}
    return found, result, context, ReleasePool(result, left_out, computed_at)


def _computed_at(graph: object, result: Explanation, settings: Mapping[str, object]) -> dict[str, str]:
    """Where the release's code computes each ``--set`` input its formula reads (``path:line: code``)."""
    import dataclasses
    import re

    from sgtrace.analyses.explain import where_set

    def read(code: str) -> tuple[str, ...]:
        return tuple(name for name in settings if re.search(rf"\b{re.escape(name)}\b", code))

    return where_set(graph, [dataclasses.replace(step, missing=read(step.code)) for step in result.steps])


def _spec_version(display: str) -> str:
    """The version a ``name==X`` spec names, "" for a path."""
    name, sep, version = display.partition("==")
    return version if sep and name and version else ""


def diff(
    query: TraceQuery,
    budget: str,
    old: Target,
    new: Target,
    options: RunOptions,
    log: bytes | str | None = None,
    settings: Mapping[str, object] | None = None,
    want: Want | None = None,
) -> tuple[CapsResult, CapsResult, CapDiff]:
    """The caps and budget sites of two trees, and how they differ.

    With a *log* or *settings* (as :func:`explain` takes them), the start-up is also evaluated with
    each tree's budget formula (``CapDiff.pool``); a ``--set`` name that is an input of one tree only
    is given to that one.
    """
    import dataclasses

    from sgtrace.analyses.diff import compare

    before = caps(query, budget, old, options)
    after = caps(query, budget, new, options)
    result = compare(
        before.caps, after.caps, before.budget_sites, after.budget_sites, query.attribute, budget, after.errors
    )
    if log is None and not settings:
        return before, after, result
    given = settings or {}
    _, _, context, old_pool = _explained(query, budget, old, options, log, given, want, only_inputs=True)
    new_pool = _explained(query, budget, new, options, log, given, want, only_inputs=True)[3]
    return before, after, dataclasses.replace(result, pool=_pool_change(old_pool, new_pool, context, given))


def check(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    baseline: str,
    log: bytes | str | None = None,
    settings: Mapping[str, object] | None = None,
    want: Want | None = None,
) -> tuple[dict[str, object], CapsResult, CapDiff]:
    """The caps of *target* against a baseline's text: (the baseline's header, the caps, how they differ).

    The baseline is the old side: its formula is evaluated with the start-up given from its recorded
    statements (the tree it was written on is not at hand: the caps' statuses there come from their
    guards alone). A baseline that cannot be read is an InputError.
    """
    import dataclasses

    from sgtrace.analyses.baseline import from_baseline
    from sgtrace.analyses.diff import compare

    try:
        header, sites, recorded, _ = from_baseline(baseline)
    except ValueError as exc:
        raise InputError(f"cannot read the baseline: {exc}") from exc
    current = caps(query, budget, target, options)
    now = current.caps if header.get("exits") else tuple(dataclasses.replace(c, exits=()) for c in current.caps)
    result = compare(recorded, now, sites, current.budget_sites, query.attribute, budget, current.errors)
    if log is None and not settings:
        return header, current, result
    given = settings or {}
    old_pool = _recorded_pool(sites, recorded, budget, log, given, want)
    _, _, context, new_pool = _explained(query, budget, target, options, log, given, want, only_inputs=True)
    return header, current, dataclasses.replace(result, pool=_pool_change(old_pool, new_pool, context, given))


def _recorded_pool(
    sites: list[BudgetSite],
    recorded: list[Cap],
    budget: str,
    log: bytes | str | None,
    settings: Mapping[str, object],
    want: Want | None,
) -> ReleasePool:
    """A baseline's formula evaluated with the start-up (no tree: no ServerArgs defaults, no call paths)."""
    from sgtrace.analyses.operator import BadInput, Want, build, inputs, read_runs
    from sgtrace.analyses.upgrade import ReleasePool

    known = inputs((), sites, recorded, budget)
    try:
        runs = read_runs(log) if log is not None else []
        kept = {name: value for name, value in settings.items() if name in known}
        result, _ = build((), sites, recorded, budget, runs, kept, want or Want())
    except BadInput as exc:
        raise InputError(str(exc)) from exc
    return ReleasePool(result, tuple(sorted(set(settings) - known)))


def _pool_change(old: ReleasePool, new: ReleasePool, context: Context, settings: Mapping[str, object]) -> PoolChange:
    from sgtrace.analyses.upgrade import NotAnInput, pool_change

    try:
        return pool_change(old, new, context.run, len(context.runs), settings)
    except NotAnInput as exc:
        raise InputError(str(exc)) from exc


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
    compared = diff(query, budget, against, target, options, log, settings, want) if against is not None else None
    lines = _cited_lines(log, explained[1]) if log is not None and explained is not None else {}
    return ReportResult(target, found, traced, shown, explained, compared, against, lines)


def _cited_lines(log: bytes, context: Context) -> dict[int, str]:
    """The text (prefixes taken off, rank kept) of the log lines the ledger and the answer cite."""
    from sgtrace.analyses.logstream import relevant_lines

    wanted = {row.line for row in context.ledger if row.line is not None}
    return {
        line.number: f"[{line.rank}] {line.text}" if line.rank else line.text
        for line in relevant_lines(log)
        if line.number in wanted
    }
