"""The functions the CLI calls, and that tests and users import."""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from sgtrace.analyses.names import NotWritten, Tree, UnknownName, index_of, not_written, require, unreached
from sgtrace.discover import Listing, PatternError, RootError, discover
from sgtrace.engine import SGLANG, Engine, engine_of
from sgtrace.fetch import FetchError
from sgtrace.identity import identify, order
from sgtrace.index.findpass import RunOptions, TreeScan, scan_tree
from sgtrace.model import (
    READ_KINDS,
    BudgetSite,
    Cap,
    CapsResult,
    FileError,
    FindQuery,
    FindResult,
    Limits,
    ModelFacts,
    Shadowed,
    Site,
    TraceQuery,
    TraceResult,
    TreeIdentity,
)
from sgtrace.sources import Point, Target, resolve

if TYPE_CHECKING:
    import networkx as nx

    from sgtrace.analyses.diff import CapDiff
    from sgtrace.analyses.explain import Explanation
    from sgtrace.analyses.history import Change, History, Stop
    from sgtrace.analyses.operator import Context, Want
    from sgtrace.analyses.upgrade import PoolChange, ReleasePool
    from sgtrace.forked import Lanes
    from sgtrace.gitrange import GitRange, RangeStop
    from sgtrace.index.chunks import TreeIndex
    from sgtrace.index.identifiers import IdentifierIndex

__all__ = [
    "FindQuery",
    "FindResult",
    "InputError",
    "NotWritten",
    "ReportResult",
    "RunOptions",
    "StopList",
    "TraceQuery",
    "TraceResult",
    "caps",
    "check",
    "diff",
    "explain",
    "find",
    "focus",
    "history",
    "history_points",
    "report",
    "resolve_targets",
    "trace",
]


#: The decompressed size of a log read by default (see run.stream).
DEFAULT_MAX_LOG_BYTES = 2 << 30


class InputError(Exception):
    """A root or spec that cannot be analysed at all (exit code 2)."""

    def __init__(
        self, message: str, option: str = "", name: str = "", where: str = "", details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        #: For a name the trees do not hold: the option that gave it, the name and the trees (else "").
        self.option, self.name, self.where = option, name, where
        #: What was found, what is missing and what would supply it (the error's JSON), where the input says.
        self.details: Mapping[str, Any] = details or {}


def rewound(log: bytes | str | BinaryIO) -> bytes | str | BinaryIO:
    """*log* ready to be read from its start: a command that reads it twice (``diff`` evaluates both
    releases, ``report`` cites its lines) is given a seekable stream (see :func:`replayable`)."""
    if not isinstance(log, (bytes, str)) and log.seekable():
        log.seek(0)
    return log


def replayable(stream: BinaryIO, most: int = DEFAULT_MAX_LOG_BYTES) -> BinaryIO:
    """A stream that can be read more than once: *stream* itself if it can seek (a file), else its bytes
    copied as they come (standard input) to a temporary file, at most *most* bytes (InputError past them)."""
    import tempfile

    if stream.seekable():
        return stream
    spool: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115  (the caller's to close, with the process)
    copied = 0
    while chunk := stream.read(1 << 20):
        copied += len(chunk)
        if copied > most:
            raise InputError(f"the log is larger than {most >> 20} MB (--max-log-mb raises the bound)")
        spool.write(chunk)
    spool.seek(0)
    return spool


def resolve_targets(
    targets: Sequence[str],
    cache_dir: Path | None,
    notify: Callable[[str], None],
    git: str | None = None,
    limits: Limits = Limits(),
    sample: bool = True,
) -> list[Target]:
    """Resolve PATH|SPEC arguments (none: the SGLang checkout holding the current folder, else the installed
    sglang, else the embedded sample -- or, without *sample*, an InputError; revisions with *git*), telling
    *notify*."""
    from sgtrace.cache import default_dir

    fetch_dir = cache_dir or default_dir()
    resolved: list[Target] = []
    wanted: list[str | None] = list(targets) or [None]
    for text in wanted:
        try:
            target = resolve(text, fetch_dir, git, limits, sample)
        except FetchError as exc:
            raise InputError(str(exc), details=getattr(exc, "details", None)) from exc
        if target.note:
            notify(target.note)
        if not Path(target.path).exists():
            raise InputError(f"no such file or directory: {target.display}")
        resolved.append(dataclasses.replace(target, identity=identify(target)))
    return resolved


def find(query: FindQuery, targets: Sequence[Target], options: RunOptions) -> FindResult:
    """Every write (and optionally read) of ``query.attribute`` under *targets*; an InputError if no tree
    holds the name at all (a typo)."""
    from sgtrace.cachedir import tidy

    listed = [(t, _discover(t, options)) for t in targets]
    result = _find(query, listed, options)
    tidy(options.cache_dir)
    if not result.writes:
        trees = [
            Tree(t.display, functools.partial(index_of, listing.files), not listing.errors) for t, listing in listed
        ]
        _known(query.attribute, "", trees)
    return result


def _discover(target: Target, options: RunOptions) -> Listing:
    """The files of a tree that the run analyses, named as Python imports them (a folder with none is said)."""
    try:
        listing = discover(target.path, options.path_filter, options.limits)
    except (RootError, PatternError) as exc:
        raise InputError(str(exc), details=getattr(exc, "details", None)) from exc
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
        trees=tuple(t.identity for t, _ in listed if t.identity is not None),
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
    (graph attribute ``reach``, what ``explain`` evaluates). An attribute the tree does not hold at all is an
    InputError; one it holds but never writes has an empty graph.
    """
    prepared = _prepare(query, target, options, listing, reach)
    with _finishing(options, prepared):
        if not prepared.found.writes:
            _known(query.attribute, "", [_tree(prepared)])
        return _traced(prepared, options)


@dataclass(frozen=True)
class TraceView:
    """A trace as a renderer wrote it, with what the command says and exits on besides."""

    #: The renderer's text.
    text: str
    #: Files that could not be analysed.
    errors: tuple[FileError, ...]
    #: Packages found twice under the root, and which copy was analysed.
    shadowed: tuple[Shadowed, ...]
    #: Whether the slice holds a write of the attribute.
    written: bool


#: Bumped when a cached trace view must not be reused (what the views are given changes).
_TRACE_VIEW = "2"


def trace_view(
    query: TraceQuery, target: Target, options: RunOptions, view: str, render: Callable[[TraceResult], str]
) -> TraceView:
    """:func:`trace`, rendered by *render*, whose output depends on nothing but the result and *view* (its name
    and options). The text is cached beside the graph, so a warm run loads neither the graph nor networkx."""
    from sgtrace.cache import JsonCache, key
    from sgtrace.codec import from_json, to_json

    prepared = _prepare(query, target, options, None)
    with _finishing(options, prepared):
        if not prepared.found.writes:
            _known(query.attribute, "", [_tree(prepared)])
        found_errors = json.dumps([to_json(e) for e in prepared.found.errors], sort_keys=True)
        store = JsonCache(options.cache_dir, "graph")  # beside the graph it is a view of
        tree = repr(prepared.target.identity)  # a view names the tree's commit and state: a new one is a new view
        entry = key(prepared.entry.encode(), "view", view, prepared.target.display, tree, found_errors, _TRACE_VIEW)
        cached = store.get(entry)
        if cached is not None:
            try:
                errors = tuple(from_json(e, FileError) for e in cached["errors"])
                return TraceView(str(cached["text"]), errors, prepared.found.shadowed, bool(cached["written"]))
            except (KeyError, TypeError, ValueError) as exc:
                print(f"sgtrace: warning: ignoring damaged cached trace: {exc}", file=sys.stderr)
        result = _traced(prepared, options)
        written = any(result.graph.nodes[n].get("seed") == "write" for n in result.graph.nodes)
        done = TraceView(render(result), result.errors, result.shadowed, written)
        store.put(entry, {"text": done.text, "errors": [to_json(e) for e in done.errors], "written": written})
        return done


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
    #: The engine whose words the tree is read with.
    engine: Engine = SGLANG


@contextmanager
def _finishing(options: RunOptions, *prepared: _Prepared) -> Iterator[None]:
    """Stop the run's workers once the graph question is answered (or has failed); keep the cache in its bound."""
    from sgtrace.cachedir import tidy

    try:
        yield
    finally:
        for question in prepared:
            if question.index is not None:
                question.index.workers.close()
    tidy(options.cache_dir)


def _prepare(
    query: TraceQuery, target: Target, options: RunOptions, listing: Listing | None, reach: bool = False
) -> _Prepared:
    from sgtrace.cache import key
    from sgtrace.index.chunks import index_tree

    listing = listing or _discover(target, options)
    index = index_tree(listing, query.attribute, options, _load_graph_modules)
    found = _found(FindQuery(query.attribute, reads=True), [(target, listing)], [index.scan])
    if not options.with_tests:
        found = _without_test_folders(found, listing)
    extras = ("reach", "loads") * reach + ("strict-types",) * query.strict_types + ("tests",) * options.with_tests
    bound = f"depth={options.limits.depth}"
    engine = engine_of(source.module for source in listing.files)
    receivers = query.knob_receivers or engine.arguments
    entry = key(
        index.scan.digest, "graph", query.attribute, str(query.max_nodes), bound, engine.name, *receivers, *extras
    )
    return _Prepared(query, target, listing, found, entry, reach, index, engine)


def _load_graph_modules() -> None:
    """Import what building a graph needs, while the workers read the tree (a cached answer needs none of it)."""
    import sgtrace.graph.build
    import sgtrace.graph.store  # noqa: F401


def _without_test_folders(found: FindResult, listing: Listing) -> FindResult:
    """*found* without the writes and reads in the tree's test folders (``test/``, ``tests/``, a ``test_*.py`` at
    an import root): a checkout's tests set the pool to made-up values; they are not the package's code."""
    tests = {source.path for source in listing.files if _is_test_folder(source.module)}
    if not tests:
        return found
    return dataclasses.replace(
        found,
        writes=tuple(site for site in found.writes if site.path not in tests),
        reads=tuple(site for site in found.reads if site.path not in tests) if found.reads is not None else None,
    )


def _is_test_folder(module: str) -> bool:
    """Whether *module* lies in a test folder at an import root (its first dotted part is a test's name)."""
    top = module.split(".", 1)[0]
    return top in ("test", "tests", "testing") or top.startswith("test_")


def _traced(
    prepared: _Prepared, options: RunOptions, sliced: Callable[[nx.DiGraph], None] | None = None
) -> TraceResult:
    """The graph from the cache, or built and cached; *sliced* sees its nodes and edges as soon as they are final."""
    from sgtrace.cache import JsonCache
    from sgtrace.graph.build import build
    from sgtrace.graph.store import from_data, to_data
    from sgtrace.index.project import Project
    from sgtrace.index.store import ContentStore

    query, found, index = prepared.query, prepared.found, prepared.index
    project = Project(
        prepared.listing, ContentStore(options.cache_dir), index.identifiers if index else None,
        index.digests if index else None, options.limits.depth, index.workers if index else None,
        index.parses if index else None, options.read_bodies,
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
        loads: list[tuple[str, str]] = []
        if prepared.reach:
            from sgtrace.analyses.order import loaders

            loads = loaders(prepared.listing.files)
        slicer = build(
            project, query.attribute, found.writes, found.reads or (), query.max_nodes, query.knob_receivers or None,
            with_reach=prepared.reach, strict=query.strict_types, sliced=sliced, loads=loads, engine=prepared.engine,
        )  # fmt: skip
        graph = slicer.graph
        project.save()
        if index is not None:
            index.parses.clear()  # the graph is built: the parses it did not take are not needed
        # the files the slice could not read are part of the answer: a cached graph says them too
        met = [[e.path, e.line, e.message] for e in project.errors]
        graph.graph.update(attribute=query.attribute, truncated=slicer.truncated, errors=met)
        data = to_data(graph)
        store.put(prepared.entry, data)
        # the graph as the cache gives it back (nodes and edges sorted): a cold run answers as a warm one,
        # whatever order the slice met them in (the report's layout followed that order)
        graph = from_data(data)
    elif sliced is not None:
        sliced(graph)
    errors = sorted({*found.errors, *_graph_errors(graph)}, key=lambda e: (e.path, e.line, e.message))
    stats = {**found.stats, "nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}
    truncated = bool(graph.graph.get("truncated"))
    return TraceResult(
        query.attribute, prepared.target.display, graph, truncated, tuple(errors), stats, found.shadowed,
        prepared.target.identity,
    )  # fmt: skip


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

    An attribute or a budget the tree does not hold is an InputError (with a did-you-mean), an attribute
    it holds but never writes is NotWritten; a budget that does not reach the attribute is said to
    ``options.notify`` (and no cap is listed). The answer is cached beside the graph, so a warm run loads
    neither the graph nor networkx.
    """
    prepared = _prepare(query, target, options, listing)
    with _finishing(options, prepared):
        _written(query, [prepared])
        result = _caps_of(prepared, budget, options)
        _say(options, _reached(budget, query.attribute, [result], [prepared]))
        return result


def _say(options: RunOptions, unreached: str) -> None:
    """Warn that the budget does not reach the attribute (when it does not)."""
    if unreached and options.notify is not None:
        options.notify(f"warning: {unreached}: no cap is listed")


#: Bumped when analyses.caps answers differently from the same graph (cached answers are then not reused).
_CAPS_ANALYSIS = "3"


def _caps_of(prepared: _Prepared, budget: str, options: RunOptions) -> CapsResult:
    """The caps of a prepared question, from the cache or found and cached."""
    from sgtrace.cache import JsonCache, key
    from sgtrace.codec import from_json

    query, target = prepared.query, prepared.target
    store = JsonCache(options.cache_dir, "caps")
    entry = key(prepared.entry.encode(), "caps", budget, _CAPS_ANALYSIS)
    cached = store.get(entry)
    if cached is not None:
        try:
            sites = tuple(from_json(s, BudgetSite) for s in cached["sites"])
            found = tuple(from_json(c, Cap) for c in cached["caps"])
            errors = tuple(from_json(e, FileError) for e in cached["errors"])
            return CapsResult(
                query.attribute, budget, target.display, sites, found, errors, bool(cached["truncated"]),
                prepared.found.shadowed, target.identity,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            print(f"sgtrace: warning: ignoring damaged cached caps: {exc}", file=sys.stderr)
    result = _caps(_traced(prepared, options), budget)
    store.put(
        entry,
        {"sites": result.budget_sites, "caps": result.caps, "truncated": result.truncated, "errors": result.errors},
    )
    return result


def _tree(prepared: _Prepared) -> Tree:
    """The tree of a prepared question, for the names it must hold."""

    def index() -> IdentifierIndex:
        return prepared.index.identifiers if prepared.index is not None else index_of(prepared.listing.files)

    return Tree(prepared.target.display, index, not prepared.listing.errors)


def _known(name: str, option: str, trees: Sequence[Tree]) -> None:
    """An InputError, with a did-you-mean, unless one of *trees* holds *name*."""
    try:
        require(name, option, trees)
    except UnknownName as exc:
        raise InputError(str(exc), exc.option, exc.name, exc.where) from exc


def _written(query: TraceQuery, prepared: Sequence[_Prepared]) -> None:
    """An InputError for an attribute no tree holds; NotWritten for one that none of them writes."""
    if any(p.found.writes for p in prepared):
        return
    trees = [_tree(p) for p in prepared]
    _known(query.attribute, "--attr", trees)
    raise not_written(query.attribute, trees, [e for p in prepared for e in p.found.errors])


def _reached(budget: str, attribute: str, results: Sequence[CapsResult], prepared: Sequence[_Prepared]) -> str:
    """Why the budget enters the attribute's computation in none of the trees ("" if it enters one); an
    InputError if no tree holds the budget at all."""
    if any(r.budget_sites for r in results):
        return ""
    trees = [_tree(p) for p in prepared]
    _known(budget, "--budget", trees)
    if any(r.truncated for r in results):
        nodes = max(p.query.max_nodes for p in prepared)
        return f"the slice of .{attribute} was cut at --max-nodes {nodes} before --budget {budget} was met (raise it)"
    return unreached(budget, attribute, trees)


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
        traced.tree,
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
    model: ModelFacts | None = None,
) -> tuple[CapsResult, Explanation, Context]:
    """The budget formula found in the code, evaluated with a log's start-up and ``--set`` values.

    *log* is the log's bytes, text or a binary stream (plain, journal, docker, gzip: read as a stream, at most
    *max_log_bytes* once decompressed); *want* picks the start-up and asks for a pool (what-if).
    *server_info* (the JSON of ``/get_server_info``) and *command* (a launch command, unit file or script)
    give server arguments. A log that cannot be read, a ``--set`` that names nothing or is not a number in
    its range where one is needed, figures that contradict each other and a start-up that is not there are
    an InputError.
    """
    given = _Server(server_info, command, max_log_bytes, model)
    found, result, context, _ = _explained(query, budget, target, options, log, settings, want, server=given)
    return found, result, context


@dataclass(frozen=True, slots=True)
class _Server:
    """What explain is told of the server besides its log: ``/get_server_info``, the launch command."""

    server_info: bytes | str | None = None
    command: str | None = None
    max_log_bytes: int | None = None
    model: ModelFacts | None = None

    def given(self, settings: Mapping[str, object], version: str = "", strict_env: bool = True) -> Any:
        """What build takes; *strict_env* refuses an --env name the release does not declare (a comparison
        leaves it out of that release and refuses it when no side declares it: see :func:`_env_read`)."""
        from sgtrace.analyses.inputs import Given

        model = self.model or ModelFacts()
        return Given(
            settings, self.command or "", self.server_info or b"", version, model.config, model.origin, model.env,
            strict_env, model.weights,
        )  # fmt: skip


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
    names: bool = False,
) -> tuple[CapsResult, Explanation, Context, ReleasePool]:
    """:func:`explain`, and the release's pool record; with *only_inputs*, ``--set`` names that are not
    inputs of this release are left out (and said in the record) instead of an InputError, and (unless
    *names*) the attribute and the budget are not looked for in the tree."""

    from sgtrace.analyses.evaluate import Code
    from sgtrace.analyses.explain import where_set
    from sgtrace.analyses.launch import release_version
    from sgtrace.analyses.operator import BadInput, Want, build, inputs, read_runs
    from sgtrace.analyses.reached import read_paths
    from sgtrace.analyses.upgrade import ReleasePool
    from sgtrace.graph.build import LOADS, SIZING
    from sgtrace.graph.reach import REACH

    try:
        runs = read_runs(rewound(log), server.max_log_bytes or DEFAULT_MAX_LOG_BYTES) if log is not None else []
        listing = _discover(target, options)
        prepared = _prepare(query, target, options, listing, reach=True)
        with _finishing(options, prepared):
            if not only_inputs or names:
                _written(query, [prepared])
            traced = _traced(prepared, options)
        found = _caps(traced, budget)
        if names and not found.budget_sites:
            _known(budget, "--budget", [_tree(prepared)])
        if not only_inputs and (unreached := _reached(budget, query.attribute, [found], [prepared])):
            raise InputError(f"{unreached}: there is no budget formula to evaluate")
        paths = read_paths(traced.graph.graph.get(REACH))
        sites, capped = list(found.budget_sites), list(found.caps)
        left_out: tuple[str, ...] = ()
        known = frozenset[str]()
        if only_inputs:
            known = inputs(listing.files, sites, capped, budget, paths)
            left_out = tuple(sorted(set(settings) - known))
            settings = {name: value for name, value in settings.items() if name in known}
        version = _spec_version(target.display) or release_version(list(listing.files))
        given = server.given(settings, version, strict_env=not only_inputs)
        code = Code(listing.files, prepared.index.identifiers.get if prepared.index is not None else None)
        loads = read_paths(traced.graph.graph.get(LOADS))
        sized = read_paths(traced.graph.graph.get(SIZING))
        result, context = build(
            listing.files, sites, capped, budget, runs, settings, want or Want(), paths, given, code, loads, sized
        )
        code.forget()
    except BadInput as exc:
        raise InputError(str(exc), details=getattr(exc, "details", None)) from exc
    origins = where_set(traced.graph, result.steps)
    missing = {
        name: f"{how} (set at {origins[name]})" if name in origins else how for name, how in result.missing.items()
    }
    result = dataclasses.replace(result, missing=missing)
    computed_at = {**origins, **_computed_at(traced.graph, result, settings)}
    return (
        found,
        result,
        context,
        ReleasePool(result, left_out, computed_at, known, context.order, context.draft_before),
    )


def _computed_at(graph: object, result: Explanation, settings: Mapping[str, object]) -> dict[str, str]:
    """Where the release's code computes each ``--set`` input its formula reads (``path:line: code``)."""
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
    log: bytes | str | BinaryIO | None = None,
    settings: Mapping[str, object] | None = None,
    want: Want | None = None,
    *,
    server_info: bytes | str | None = None,
    command: str | None = None,
    max_log_bytes: int | None = None,
    model: ModelFacts | None = None,
) -> tuple[CapsResult, CapsResult, CapDiff]:
    """The caps and budget sites of two trees, and how they differ.

    With a *log* or *settings* (as :func:`explain` takes them), the start-up is also evaluated with
    each tree's budget formula (``CapDiff.pool``); a ``--set`` name that is an input of one tree only
    is given to that one. The attribute and the budget are checked as :func:`caps` checks them, against
    both trees: a name that one of them holds is not an error.
    """

    from sgtrace.analyses.diff import compare

    prepared = [_prepare(query, target, options, None) for target in (old, new)]
    with _finishing(options, *prepared):
        _written(query, prepared)
        before, after = (_caps_of(p, budget, options) for p in prepared)
    _say(options, _reached(budget, query.attribute, [before, after], prepared))
    del prepared  # the trees' indexes and graphs: each start-up's evaluation prepares its own, one at a time
    result = compare(
        before.caps, after.caps, before.budget_sites, after.budget_sites, query.attribute, budget, after.errors
    )
    result = dataclasses.replace(result, trees=(old.identity, new.identity), order=order(old.identity, new.identity))
    if log is None and not settings:
        return before, after, result
    given = settings or {}
    server = _Server(server_info, command, max_log_bytes, model)
    _, _, context, old_pool = _explained(query, budget, old, options, log, given, want, True, server)
    _, _, new_context, new_pool = _explained(query, budget, new, options, log, given, want, True, server)
    _env_read(context, new_context, "neither release declares or reads it")
    return before, after, dataclasses.replace(result, pool=_pool_change(old_pool, new_pool, context, given))


def _env_read(old: Context, new: Context, why: str) -> None:
    """InputError for an ``--env`` name that no side of a comparison declares (a typo changes nothing)."""
    unread = sorted(set(old.env_unread) & set(new.env_unread))
    if unread:
        raise InputError(f"--env {unread[0]}: {why}")


def check(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    baseline: str,
    log: bytes | str | BinaryIO | None = None,
    settings: Mapping[str, object] | None = None,
    want: Want | None = None,
    *,
    server_info: bytes | str | None = None,
    command: str | None = None,
    max_log_bytes: int | None = None,
    model: ModelFacts | None = None,
) -> tuple[dict[str, object], CapsResult, CapDiff]:
    """The caps of *target* against a baseline's text: (the baseline's header, the caps, how they differ).

    The baseline is the old side: its formula is evaluated with the start-up given from its recorded
    statements (the tree it was written on is not at hand: the caps' statuses there come from their
    guards alone). A baseline that cannot be read, or that was written for another attribute or budget,
    is an InputError; the names it was written for are not looked for in the tree (a release may drop them).
    """

    from sgtrace.analyses.baseline import from_baseline
    from sgtrace.analyses.diff import compare

    try:
        header, sites, recorded, _ = from_baseline(baseline)
    except ValueError as exc:
        raise InputError(f"cannot read the baseline: {exc}") from exc
    for option, name in (("--attr", query.attribute), ("--budget", budget)):
        written_for = header.get("attribute" if option == "--attr" else "budget")
        if written_for is not None and written_for != name:
            raise InputError(f"the baseline was written for {option} {written_for}, not {name}")
    question = _prepare(query, target, options, None)
    with _finishing(options, question):
        current = _caps_of(question, budget, options)
    now = current.caps if header.get("exits") else tuple(dataclasses.replace(c, exits=()) for c in current.caps)
    result = compare(recorded, now, sites, current.budget_sites, query.attribute, budget, current.errors)
    written_on = header.get("tree")
    result = dataclasses.replace(result, trees=(written_on, current.tree), order=order(written_on, current.tree))
    if log is None and not settings:
        return header, current, result
    given = settings or {}
    server = _Server(server_info, command, max_log_bytes, model)
    old_pool = _recorded_pool(sites, recorded, budget, log, given, want, server)
    _, _, context, new_pool = _explained(query, budget, target, options, log, given, want, True, server)
    _env_read(context, context, "the tree's registry does not declare it")
    return header, current, dataclasses.replace(result, pool=_pool_change(old_pool, new_pool, context, given))


def _recorded_pool(
    sites: list[BudgetSite],
    recorded: list[Cap],
    budget: str,
    log: bytes | str | BinaryIO | None,
    settings: Mapping[str, object],
    want: Want | None,
    server: _Server,
) -> ReleasePool:
    """A baseline's formula evaluated with the start-up (no tree: no ServerArgs defaults, no call paths)."""
    from sgtrace.analyses.operator import BadInput, Want, build, inputs, read_runs
    from sgtrace.analyses.upgrade import ReleasePool

    known = inputs((), sites, recorded, budget)
    try:
        runs = read_runs(rewound(log), server.max_log_bytes or DEFAULT_MAX_LOG_BYTES) if log is not None else []
        kept = {name: value for name, value in settings.items() if name in known}
        given = server.given(kept, strict_env=False)
        result, _ = build((), sites, recorded, budget, runs, kept, want or Want(), None, given)
    except BadInput as exc:
        raise InputError(str(exc), details=getattr(exc, "details", None)) from exc
    return ReleasePool(result, tuple(sorted(set(settings) - known)), inputs=known)


def _pool_change(old: ReleasePool, new: ReleasePool, context: Context, settings: Mapping[str, object]) -> PoolChange:
    from sgtrace.analyses.upgrade import NotAnInput, pool_change

    try:
        return pool_change(old, new, context.run, len(context.runs), settings)
    except NotAnInput as exc:
        raise InputError(str(exc), details=getattr(exc, "details", None)) from exc


def history_points(
    arguments: Sequence[str], cache_dir: Path | None, git: str | None = None, pre: bool = False
) -> list[Point]:
    """The releases a history runs through (``name==LOW..HIGH``, ``name==A,B``, paths), or with *git* the
    revisions given (``LOW..HIGH`` is narrowed to the commits that touch the slice by :func:`history`)."""
    from sgtrace.cache import default_dir
    from sgtrace.sources import points

    if git is not None:
        return [Point(text, text) for text in arguments]
    try:
        return points(arguments, cache_dir or default_dir(), pre)
    except FetchError as exc:
        raise InputError(str(exc), details=getattr(exc, "details", None)) from exc


class StopList:
    """A history's stops as the command line names them, listed when first needed: a ``name==LOW..HIGH`` range's
    two ends are read while the registry lists the releases between them (about a second of pip)."""

    def __init__(
        self, arguments: Sequence[str], cache_dir: Path | None, git: str | None = None, pre: bool = False
    ) -> None:
        self.arguments, self.cache_dir, self.git, self.pre = list(arguments), cache_dir, git, pre

    def ends(self) -> tuple[Point, Point] | None:
        """The range's first and last release, when they are known before the registry is asked."""
        from sgtrace.sources import range_ends

        return None if self.git is not None else range_ends(self.arguments)

    def points(self) -> list[Point]:
        """Every stop (:func:`history_points`)."""
        return history_points(self.arguments, self.cache_dir, self.git, self.pre)


def history(
    query: TraceQuery,
    budget: str,
    stops: Sequence[Point] | StopList,
    options: RunOptions,
    log: bytes | str | BinaryIO | None = None,
    settings: Mapping[str, object] | None = None,
    want: Want | None = None,
    *,
    kinds: Sequence[str] = (),
    first: bool = False,
    git: str | None = None,
    notify: Callable[[str], None] = lambda _: None,
    fetch_jobs: int = 4,
    lanes: int | None = None,
    max_stops: int | None = None,
    server_info: bytes | str | None = None,
    command: str | None = None,
    max_log_bytes: int | None = None,
    model: ModelFacts | None = None,
) -> History:
    """The caps, formula and (with *log* or *settings*) the start-up's pool on each stop, oldest first, and
    what each step changed; with *first*, only the stops a binary search needs to find the first that
    differs from the first one in *kinds*. A stop that cannot be fetched or analysed is a stop that says
    why; with *git*, a ``LOW..HIGH`` stop is its commits (:func:`sgtrace.gitrange.resolve_range`).
    Releases are fetched *fetch_jobs* at a time and read by *lanes* forked children at once (default: two
    where two cores are idle, see :mod:`sgtrace.forked`); *notify* is told the progress. More than *max_stops*
    stops to read whole is an InputError (a checkout's range can hold thousands of commits).
    """
    from sgtrace.analyses.history import FirstChange, History, first_change, searched, watched
    from sgtrace.index.findpass import spare_cpus

    with _Stops(query, budget, options, log, settings or {}, want, _Server(server_info, command, max_log_bytes,
                model), git, notify) as reader:  # fmt: skip
        found = watched(kinds, reader.startup)
        lanes = lanes if lanes is not None else min(2, spare_cpus())
        if not first:
            with reader.lanes(lanes) as running:
                ends = stops.ends() if isinstance(stops, StopList) else None
                begun = ends if ends is not None and running.begin(*ends) else ()  # the lanes fetch what they began
                points = _counted(reader.expand(_listed(stops)), git, max_stops)
                reader.fetch_all([point for point in points if point not in begun], fetch_jobs)
                read = reader.read_all(points, running)
            reader.require(read)
            _say_unreached(options, query, budget, read)
            changes = reader.changes(read, found)
            return History(query.attribute, budget, tuple(read), changes, found, ranges=tuple(reader.ranges))
        points = _counted(reader.expand(_listed(stops)), git, None)
        read = [reader.said(point) for point in points]
        # the search's first probe is the middle whatever the first stop says: both are read at once
        with reader.lanes(lanes) as running:
            ahead = reader.read_some(points, [0, len(points) // 2], running)
        read[0] = ahead.pop(0)
        reader.require(read[:1], inputs=False)  # the search compares with the first stop: it must be read

        looked_for = searched(kinds, reader.startup)

        def differs(index: int) -> bool | None:
            read[index] = ahead.pop(index) if index in ahead else reader.read(index, points[index])
            if not read[index].read:
                return None
            return reader.change(read, 0, index, looked_for).changes

        index, before = first_change(len(points), differs)  # a --set name of unread releases only is not an error
        changes = reader.changes(read, found)
        first_found = FirstChange(looked_for, index, before, sum(1 for stop in read if stop.read or stop.error))
        return History(query.attribute, budget, tuple(read), changes, found, first_found, tuple(reader.ranges))


def _listed(stops: Sequence[Point] | StopList) -> list[Point]:
    """The stops, the registry asked for a range's when they are a StopList."""
    return stops.points() if isinstance(stops, StopList) else list(stops)


def _counted(points: list[Point], git: str | None, max_stops: int | None) -> list[Point]:
    """*points*, or an InputError when there are fewer than two, or more than *max_stops* to read whole."""
    if len(points) < 2:
        raise InputError(f"a history needs two releases or more; {len(points)} given")
    if max_stops is not None and len(points) > max_stops:
        raise InputError(
            f"{len(points)} {'commits' if git else 'releases'} to read, more than --max-stops {max_stops}: narrow "
            "the range, raise --max-stops, or use --first-change (it reads about log2(n) of them)"
        )
    return points


def _say_unreached(options: RunOptions, query: TraceQuery, budget: str, read: Sequence[Stop]) -> None:
    """Warn when the budget enters the attribute's computation in no stop read (every row would show no formula)."""
    if options.notify is not None and not any(stop.caps.budget_sites for stop in read if stop.caps is not None):
        options.notify(f"warning: no place where {budget} enters the computation of .{query.attribute} was found "
                       "in any release read: no formula, no cap")  # fmt: skip


class _Stops:
    """Reads the stops of a history: each fetched once (several at a time), sliced and evaluated once."""

    def __init__(
        self,
        query: TraceQuery,
        budget: str,
        options: RunOptions,
        log: bytes | str | BinaryIO | None,
        settings: Mapping[str, object],
        want: Want | None,
        server: _Server,
        git: str | None,
        notify: Callable[[str], None],
    ) -> None:
        self.query, self.budget, self.options, self.settings = query, budget, options, settings
        #: The log; a path or bytes once children read it (see :func:`_apart`).
        self.log: bytes | str | BinaryIO | _LogFile | None = log
        self.want, self.server, self.git, self.notify = want, server, git, notify
        #: Whether a start-up is evaluated on each stop.
        self.startup = log is not None or bool(settings)
        #: A stop's text -> its tree, or why it could not be fetched.
        self.targets: dict[str, Target | str] = {}
        #: A stop's index -> (the start-up's number, how many the log has, the --env names its release does
        #: not read), when a start-up was evaluated.
        self.seen: dict[int, tuple[int, int, tuple[str, ...]]] = {}
        #: A commit of a git range -> what the range says of it (its subject, tags, why it is a stop).
        self.commits: dict[str, RangeStop] = {}
        #: The git ranges expanded, in the order given.
        self.ranges: list[GitRange] = []
        #: Whether a stop read here froze what it left (see :meth:`read`).
        self.frozen = False

    def __enter__(self) -> _Stops:
        return self

    def __exit__(self, *_: object) -> None:
        if self.frozen:  # what the stops read here froze may be collected again (a program calling on)
            gc.unfreeze()

    def expand(self, stops: Sequence[Point]) -> list[Point]:
        """The stops, a git ``LOW..HIGH`` replaced by its commits (:func:`sgtrace.gitrange.resolve_range`): both
        ends, the first-parent commits between them that touch the slice or carry a tag, and the bases of the
        release branches tagged off the line."""
        if self.git is None:
            return list(stops)
        from sgtrace.fetch import tags
        from sgtrace.gitrange import resolve_range

        tagged = tags(self.git) if any(".." not in point.text for point in stops) else {}
        found: list[Point] = []
        for point in stops:
            if ".." not in point.text:
                found.append(Point(point.text, point.text, tagged.get(self._commit(point.text), ())))
                continue
            try:
                span = resolve_range(self.git, point.text, self._paths)
            except FetchError as exc:
                raise InputError(str(exc), details=getattr(exc, "details", None)) from exc
            self.ranges.append(span)
            for stop in span.stops:
                self.commits[stop.commit] = stop
                found.append(Point(stop.commit, stop.commit[:10], stop.tags))
        return found

    def _commit(self, revision: str) -> str:
        from sgtrace.fetch import commit

        assert self.git is not None
        try:
            return commit(self.git, revision)
        except FetchError:
            return revision  # said when the stop is fetched

    def _paths(self, low: str, high: str) -> list[str]:
        """The repository's paths of the files the slice reads at either end (the graph's files)."""
        from sgtrace.fetch import files_at

        assert self.git is not None
        wanted: set[str] = set()
        for revision in (low, high):
            target = self._fetch(Point(revision, revision))
            if isinstance(target, str):
                raise InputError(target)
            prepared = _prepare(self.query, target, self.options, None)
            with _finishing(self.options, prepared):
                graph = _traced(prepared, self.options).graph
            wanted |= {point.path for point in graph.nodes if getattr(point, "path", "")}
        present = set(files_at(self.git, low)) | set(files_at(self.git, high))
        return sorted(path for path in present if any(path == w or path.endswith("/" + w) for w in wanted))

    def fetch_all(self, points: Sequence[Point], jobs: int) -> None:
        """Fetch every stop not fetched yet, *jobs* at a time, saying each one on notify."""
        from concurrent.futures import ThreadPoolExecutor, as_completed

        wanted = [p for p in dict.fromkeys(points) if p.text not in self.targets]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(self._fetch, point): point for point in wanted}
            for done, future in enumerate(as_completed(futures), 1):
                target = future.result()
                state = "not fetched" if isinstance(target, str) else "ready"
                self.notify(f"{futures[future].label}: {state} ({done} of {len(wanted)})")

    def _fetch(self, point: Point) -> Target | str:
        from sgtrace.cache import default_dir

        if point.text not in self.targets:
            try:
                fetch_dir = self.options.cache_dir or default_dir()
                target = resolve(point.text, fetch_dir, self.git, self.options.limits, sample=False)
                exists = Path(target.path).exists()
                self.targets[point.text] = target if exists else f"no such file or directory: {target.display}"
            except FetchError as exc:
                self.targets[point.text] = str(exc)
        return self.targets[point.text]

    def lanes(self, lanes: int) -> Lanes | _NoLanes:
        """Where the stops are read: *lanes* forked children (see :mod:`sgtrace.forked`), or here when there is one
        lane or no fork. In a child, its trees are read inline (the lanes use the cores), with no progress bar of
        its own, and the words of the contents it met kept from one tree to the next (each child a copy of an
        empty Vocabulary)."""
        from sgtrace.forked import Lanes, can_fork

        if lanes < 2 or not can_fork():
            return _NoLanes()
        alone = _in_turn(dataclasses.replace(self.options, jobs=1, progress=None))
        self.log = _apart(self.log)
        return Lanes(lambda point: self._analysed(point, alone), lanes)

    def read_all(self, points: Sequence[Point], lanes: Lanes | _NoLanes) -> list[Stop]:
        """Every stop, read by *lanes* (from both ends), or here one after the other."""
        read = self.read_some(points, range(len(points)), lanes)
        return [read[index] for index in range(len(points))]

    def read_some(self, points: Sequence[Point], indexes: Sequence[int], lanes: Lanes | _NoLanes) -> dict[int, Stop]:
        """The stops at *indexes*, as :meth:`read_all` reads them."""
        if isinstance(lanes, _NoLanes) or len(indexes) < 2:
            return {index: self.read(index, points[index]) for index in indexes}
        read: dict[int, Stop] = {}

        def done(index: int, answer: tuple[Stop, tuple[int, int, tuple[str, ...]] | None] | None, why: str) -> None:
            if answer is None:
                read[index] = self.said(points[index], f"cannot be analysed: {why}")
            else:
                read[index], seen = answer
                if seen is not None:
                    self.seen[index] = seen
            self.notify(f"{points[index].label}: read ({len(read)} of {len(indexes)})")

        lanes.run(indexes, points.__getitem__, done)
        return read

    def read(self, index: int, point: Point) -> Stop:
        """The stop, fetched (if it was not) and analysed here; a stop that says why when it cannot be."""
        self.notify(f"{point.label}: reading")
        gc.collect()  # what the stop before left (the CLI collects cycles rarely: see cli.main)
        gc.freeze()  # what is left lives on (the words and bodies kept for the next stops): collections pass it by
        self.frozen = True
        if self.options.vocabulary is None and self.options.jobs == 1:
            self.options = _in_turn(self.options)
        stop, seen = self._analysed(point, self.options)
        if seen is not None:
            self.seen[index] = seen
        return stop

    def said(self, point: Point, error: str = "") -> Stop:
        from sgtrace.analyses.history import Stop

        known = self.commits.get(point.text)
        subject, tree = "", None
        if known is not None and self.git is not None:  # named before it is read (a stop --first-change skips)
            subject = known.subject
            root = str(Path(self.git).resolve())
            tree = TreeIdentity(point.text, root, "checkout", commit=known.commit, describe=known.describe)
        return Stop(point.label, point.text, error=error, tags=point.tags, subject=subject, tree=tree, commit=known)

    def _analysed(self, point: Point, options: RunOptions) -> tuple[Stop, tuple[int, int, tuple[str, ...]] | None]:
        """The stop analysed with *options*, and (the start-up's number, how many the log has, the ``--env``
        names the release does not read) when a start-up was evaluated."""
        from sgtrace.analyses.history import formula

        said = self.said(point)
        target = self._fetch(point)
        if isinstance(target, str):
            return dataclasses.replace(said, error=target), None
        seen = None
        try:
            if self.startup:
                from sgtrace.analyses.operator import Want

                want = dataclasses.replace(self.want or Want(), statuses=False)  # the pools, not each cap's status
                with _opened(self.log) as log:
                    found, _, context, pool = _explained(
                        self.query, self.budget, target, options, log, self.settings, want, True, self.server,
                        names=True,
                    )  # fmt: skip
                seen = (context.run, len(context.runs), tuple(context.env_unread))
            else:  # a budget that reaches no formula is said once for the whole history (_say_unreached)
                found, pool = caps(self.query, self.budget, target, dataclasses.replace(options, notify=None)), None
        except (InputError, NotWritten) as exc:
            return dataclasses.replace(said, error=str(exc)), None
        steps = formula(found, self.budget)
        return dataclasses.replace(said, caps=found, pool=pool, formula=steps, tree=identify(target)), seen

    def require(self, read: Sequence[Stop], inputs: bool = True) -> None:
        """An InputError when no stop could be read (the first one's reason), or (with *inputs*) for a
        ``--set`` or ``--env`` name that no read stop takes."""
        done = [stop for stop in read if stop.read]
        if not done:
            raise InputError(next((stop.error for stop in read if stop.error), "no release could be read"))
        if not inputs:
            return
        pools = [stop.pool for stop in done if stop.pool is not None]
        if pools and (nowhere := sorted(set.intersection(*(set(p.left_out) for p in pools)))):
            raise InputError(f"--set {nowhere[0]}: not an input of any release's formula, caps or ServerArgs")
        seen = list(self.seen.values())
        if seen and (unread := sorted(set.intersection(*(set(s[2]) for s in seen)))):
            raise InputError(f"--env {unread[0]}: no release declares or reads it")

    def change(self, read: Sequence[Stop], old: int, new: int, kinds: Sequence[str]) -> Change:
        """The step from ``read[old]`` to ``read[new]`` (both read), as ``diff`` finds it."""
        from sgtrace.analyses.diff import compare
        from sgtrace.analyses.history import change
        from sgtrace.analyses.upgrade import pool_change

        before, after = read[old], read[new]
        assert before.caps is not None and after.caps is not None
        found = compare(
            before.caps.caps, after.caps.caps, before.caps.budget_sites, after.caps.budget_sites,
            self.query.attribute, self.budget, after.caps.errors,
        )  # fmt: skip
        if before.pool is not None and after.pool is not None and old in self.seen:
            run, runs, _ = self.seen[old]
            neither = set(before.pool.left_out) & set(after.pool.left_out)
            given = {name: value for name, value in self.settings.items() if name not in neither}
            old_pool = dataclasses.replace(before.pool, left_out=tuple(n for n in before.pool.left_out if n in given))
            new_pool = dataclasses.replace(after.pool, left_out=tuple(n for n in after.pool.left_out if n in given))
            pooled = pool_change(old_pool, new_pool, run, runs, given)
            found = dataclasses.replace(found, pool=pooled)
        return change(old, new, found, kinds)

    def changes(self, read: Sequence[Stop], kinds: Sequence[str]) -> tuple[Change, ...]:
        """The steps between consecutive read stops."""
        done = [index for index, stop in enumerate(read) if stop.read]
        return tuple(self.change(read, old, new, kinds) for old, new in zip(done, done[1:], strict=False))


class _NoLanes:
    """No lanes: the stops are read here, one after the other."""

    def __enter__(self) -> _NoLanes:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def begin(self, first: Point, last: Point) -> bool:
        return False


def _in_turn(options: RunOptions) -> RunOptions:
    """*options* for trees read one after another in this process: the words of the file contents met
    (:class:`~sgtrace.index.identifiers.Vocabulary`) and the function bodies read
    (:class:`~sgtrace.index.body.ReadBodies`) are kept from one tree to the next."""
    from sgtrace.index.body import ReadBodies
    from sgtrace.index.identifiers import Vocabulary

    return dataclasses.replace(options, vocabulary=Vocabulary(), read_bodies=ReadBodies())


@dataclass(frozen=True, slots=True)
class _LogFile:
    """A log a forked child opens for itself (a stream's position is shared with every process it was
    inherited by: two children reading one stream at once would read each other's bytes)."""

    path: str


def _apart(log: bytes | str | BinaryIO | _LogFile | None) -> bytes | str | BinaryIO | _LogFile | None:
    """*log* as children can each read it: a file by its path, another stream (standard input, already
    copied to a temporary file and bounded by ``--max-log-mb``) by its bytes."""
    if log is None or isinstance(log, (bytes, str, _LogFile)):
        return log
    name = getattr(log, "name", None)
    if isinstance(name, str) and Path(name).is_file():
        return _LogFile(name)
    rewound(log)
    return log.read()


@contextmanager
def _opened(log: bytes | str | BinaryIO | _LogFile | None) -> Iterator[bytes | str | BinaryIO | None]:
    """A stream of its own for a log given by path (see :func:`_apart`), closed after; any other log as it is."""
    if not isinstance(log, _LogFile):
        yield log
        return
    with open(log.path, "rb") as stream:
        yield stream


def focus(query: TraceQuery, budget: str, target: Target, options: RunOptions) -> TraceResult:
    """The budget's view of the slice (``analyses.focus``): knobs, budget sites, caps, the pool's writes, readers."""
    from dataclasses import replace

    from sgtrace.analyses.focus import focus as view

    traced, found = _sliced(query, budget, target, options)
    shown = view(traced.graph, found.budget_sites, found.caps, budget)
    return replace(traced, graph=shown, stats={**traced.stats, "nodes": len(shown), "edges": shown.number_of_edges()})


def _sliced(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    reach: bool = False,
    sliced: Callable[[nx.DiGraph], None] | None = None,
) -> tuple[TraceResult, CapsResult]:
    """The slice and the caps, with the names checked as :func:`caps` checks them."""
    prepared = _prepare(query, target, options, None, reach)
    with _finishing(options, prepared):
        _written(query, [prepared])
        traced = _traced(prepared, options, sliced)
    found = _caps(traced, budget)
    _say(options, _reached(budget, query.attribute, [found], [prepared]))
    return traced, found


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
    #: The history of the releases given with ``--history``, and how they were named.
    history: tuple[History, str] | None = None


def report(
    query: TraceQuery,
    budget: str,
    target: Target,
    options: RunOptions,
    log: bytes | BinaryIO | None = None,
    settings: dict[str, object] | None = None,
    want: Want | None = None,
    against: Target | None = None,
    *,
    server_info: bytes | str | None = None,
    command: str | None = None,
    max_log_bytes: int | None = None,
    model: ModelFacts | None = None,
    sliced: Callable[[nx.DiGraph], None] | None = None,
    history_of: Sequence[str] = (),
    notify: Callable[[str], None] = lambda _: None,
) -> ReportResult:
    """Everything the report shows: the slice and its focus, the caps, ``explain`` with a log or settings, ``diff``.

    ``explain`` reads the slice from the cache that ``trace`` filled (with ``--no-cache`` it is built twice).
    *history_of* names releases (as :func:`history_points` takes them) whose history the page shows, with the
    same start-up; *notify* is told its progress. *sliced* is called with the whole slice as soon as its nodes
    and edges are final (the page may start laying it out while the way in, the caps and the rest are worked
    out).
    """
    from sgtrace.analyses.focus import focus as view

    traced, found = _sliced(query, budget, target, options, reach=True, sliced=sliced)
    explained = None
    server: dict[str, Any] = {
        "server_info": server_info, "command": command, "max_log_bytes": max_log_bytes, "model": model
    }  # fmt: skip
    if log is not None or settings or server_info is not None or command is not None or model is not None:
        found, explanation, context = explain(query, budget, target, options, log, settings or {}, want, **server)
        explained = (explanation, context)
    shown = view(traced.graph, found.budget_sites, found.caps, budget)
    compared = None
    if against is not None:
        compared = diff(query, budget, against, target, options, log, settings, want, **server)
    lines = _cited_lines(log, explained[1]) if log is not None and explained is not None else {}
    walked = None
    if history_of:
        walked = (
            history(
                query,
                budget,
                StopList(history_of, options.cache_dir),
                options,
                log,
                settings,
                want,
                notify=notify,
                **server,
            ),
            " ".join(history_of),
        )
    return ReportResult(target, found, traced, shown, explained, compared, against, lines, walked)


def _cited_lines(log: bytes | BinaryIO, context: Context) -> dict[int, str]:
    """The text (prefixes taken off, rank kept) of the log lines the ledger and the answer cite."""
    from sgtrace.run.stream import relevant_lines

    wanted = {row.line for row in context.ledger if row.line is not None}
    return {
        line.number: f"[{line.rank}] {line.text}" if line.rank else line.text
        for line in relevant_lines(rewound(log))
        if line.number in wanted
    }
