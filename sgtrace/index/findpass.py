"""find's pass over a tree: the per-file scan run with a byte prefilter, the manifest and a process pool.

Reading a file costs microseconds and parsing it milliseconds, so a file is
parsed only when its bytes contain the name, and only when the tree's manifest
does not already hold its result; the files to parse go to the worker
processes in batches while the rest of the tree is still being read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgtrace.cache import Manifest, encode_scan
from sgtrace.discover import Listing
from sgtrace.index.store import ContentStore, content_digest, scan_key
from sgtrace.model import FileError, FileScan, Limits, PathFilter, SourceFile
from sgtrace.parse import Parsed, read_file

#: Below this many bytes to parse, a process pool costs more than it saves.
POOL_BYTES = 512 * 1024
#: Bytes of source per batch handed to a worker: small enough to keep both busy to the end.
_BATCH = 256 * 1024


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run: parallelism and cache."""

    #: Worker processes; None for one per core free now (:func:`spare_cpus`), 1 to run inline.
    jobs: int | None = None
    #: Cache directory, or None to run without a cache.
    cache_dir: Path | None = None
    #: Told (files parsed, files to parse) as the parse goes on; None for silence.
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)
    #: Which files under a root are analysed.
    path_filter: PathFilter = PathFilter()
    #: Told warnings about the input (a folder with no Python file to analyse); None for silence.
    notify: Callable[[str], None] | None = field(default=None, compare=False)
    #: Bounds on what the run reads and keeps.
    limits: Limits = Limits()
    #: The words of every file content this process met (an :class:`~sgtrace.index.identifiers.Vocabulary`),
    #: for trees read one after another in one process; the tree is then read here, its words neither packed
    #: nor stored.
    vocabulary: Any = field(default=None, compare=False)
    #: The function bodies this process read, by their text (a :class:`~sgtrace.index.body.ReadBodies`), for
    #: trees read one after another: a function met again unchanged is not read again.
    read_bodies: Any = field(default=None, compare=False)
    #: Whether the writes in a tree's test folders (``test/``, ``tests/`` at an import root) seed the slice as
    #: the package's do (``find`` lists them whatever this says).
    with_tests: bool = False


@dataclass(frozen=True, slots=True)
class TreeScan:
    """Per-file scans of a tree, and what could not be read."""

    #: (file, its scan) for every file that contains the name.
    files: tuple[tuple[SourceFile, FileScan], ...]
    #: Files that could not be listed or read.
    errors: tuple[FileError, ...]
    #: Counts: files seen, files containing the name, files parsed.
    stats: dict[str, int]
    #: A digest of the whole tree (every module's name and content), when the pass took one
    #: (:mod:`sgtrace.index.chunks`).
    digest: bytes = b""


def scan_tree(listing: Listing, attribute: str, options: RunOptions) -> TreeScan:
    """Scan every Python file of a listing for accesses of *attribute*.

    A file unchanged since an earlier run (see :class:`~sgtrace.cache.Manifest`) is not read again; a
    file whose bytes were scanned before, in this tree or another, is not parsed again (the content
    store, :mod:`sgtrace.index.store`).
    """
    manifest = Manifest(options.cache_dir, _tree_name(attribute, listing, options.path_filter))
    store = ContentStore(options.cache_dir)
    learnt: dict[str, list[Any]] = {}
    scans: dict[str, Any] = {}  # scan key -> stored scan, for every file of this run that names the attribute
    needle = attribute.encode("utf-8")
    errors: list[FileError] = list(listing.errors)
    done: list[tuple[SourceFile, FileScan]] = []
    pending: list[tuple[SourceFile, str]] = []
    remember = options.cache_dir is not None
    with _Parsing(attribute, options.jobs, options.cache_dir) as parsing:
        for item in listing.files:
            # a first run takes size and time from the open file, below
            known = manifest.known(item.abspath, *_stat(item)) if remember and manifest.files else None
            if known is not None:
                learnt[item.abspath] = known
                cached = manifest.scan(known[2], item.path) if known[2] else None
                if cached is not None or not known[2]:
                    if cached is not None:
                        done.append((item, cached))
                        scans[known[2]] = manifest.scans[known[2]]
                    continue
            read = _read(item, errors)
            if read is None:
                continue
            data, size, mtime_ns = read
            found = needle in data or not attribute.isascii()
            content = content_digest(data) if found else b""
            entry_key = scan_key(content, attribute) if found else ""
            if remember:
                learnt[item.abspath] = [size, mtime_ns, entry_key, ""]
            if not found:
                continue
            cached = manifest.scan(entry_key, item.path) or store.scan(content, attribute, item.path)
            if cached is not None:  # touched, not changed; or the same bytes elsewhere
                done.append((item, cached))
                scans[entry_key] = encode_scan(cached)
            else:
                pending.append((item, entry_key))
                parsing.add(item.path, data, content)  # handed to the workers now, while the rest is read
        for count, ((source, entry_key), result) in enumerate(zip(pending, parsing.results(), strict=True), 1):
            if remember:
                scans[entry_key] = encode_scan(result)
            done.append((source, result))
            if options.progress is not None:
                options.progress(count, len(pending))
    manifest.save(learnt, scans)
    stats = {"files": len(listing.files), "matched": len(done), "parsed": len(pending)}
    return TreeScan(tuple(done), tuple(errors), stats)


def _tree_name(attribute: str, listing: Listing, path_filter: PathFilter) -> str:
    """What names one tree's manifest: the query, the folder the files share, and the filter that chose them.

    Not the list of files: a file added or removed keeps what was learnt of the others.
    """
    paths = [f.abspath for f in listing.files]
    try:
        shared = os.path.commonpath(paths) if paths else ""
    except ValueError:  # paths on different drives
        shared = "\0".join(paths)
    return "\0".join([attribute, shared, repr(path_filter)])


def _stat(item: SourceFile) -> tuple[int, int]:
    try:
        st = os.stat(item.abspath)
    except OSError:
        return (-1, -1)  # never matches: the file is read, and its error reported
    return (st.st_size, st.st_mtime_ns)


def _read(source: SourceFile, errors: list[FileError]) -> tuple[bytes, int, int] | None:
    try:
        return read_file(source.abspath)
    except OSError as exc:
        errors.append(FileError(source.path, 0, f"cannot read file: {exc.strerror or exc}"))
        return None


def scan_one(path: str, data: bytes, attribute: str, keep: Callable[[Parsed], None] | None = None) -> FileScan:
    """find's scan of one file (a file too deep for the interpreter's stack is an error, not a crash); *keep*, if
    given, is handed the parse."""
    from sgtrace.index.scan import scan_file  # imported on first parse: a warm run needs no parser

    try:
        return scan_file(path, data, attribute, keep)
    except RecursionError:
        return FileScan((), (FileError(path, 0, "too deeply nested to analyse"),))


def _job(args: tuple[str, bytes, str, bytes, Path | None]) -> FileScan:
    """Scan one file, and keep the scan in the content store."""
    path, data, attribute, content, cache_dir = args
    scan = scan_one(path, data, attribute)
    ContentStore(cache_dir).put_scan(content, attribute, scan)
    return scan


def _batch(batch: list[tuple[str, bytes, str, bytes, Path | None]]) -> list[FileScan]:
    return [_job(args) for args in batch]


class _Parsing:
    """Files to parse, handed out as they are read.

    Once enough bytes wait to be worth a process pool, batches of about :data:`_BATCH` bytes go
    to the workers straight away, so the rest of the tree is read while they parse; a small run
    parses inline at the end.
    """

    def __init__(self, attribute: str, jobs: int | None, cache_dir: Path | None) -> None:
        self.attribute = attribute
        self.cache_dir = cache_dir
        self.workers = jobs or spare_cpus()
        self.waiting: list[tuple[str, bytes, str, bytes, Path | None]] = []
        self.size = 0
        self.futures: list[Any] = []
        self.pool: Any = None

    def add(self, path: str, data: bytes, content: bytes) -> None:
        """Queue one file (*content*: its digest); hand out a full batch (starting the pool, if worth it)."""
        self.waiting.append((path, data, self.attribute, content, self.cache_dir))
        self.size += len(data)
        if self.pool is None and self.workers > 1 and self.size >= POOL_BYTES and len(self.waiting) > 1:
            self.pool = _pool(self.workers)
        if self.pool is not None and self.size >= _BATCH:
            self._hand_out()

    def _hand_out(self) -> None:
        self.futures.append(self.pool.submit(_batch, self.waiting))
        self.waiting, self.size = [], 0

    def results(self) -> Iterator[FileScan]:
        """Every queued file's scan, in order."""
        if self.pool is None:
            yield from map(_job, self.waiting)
            return
        if self.waiting:
            self._hand_out()
        for future in self.futures:
            yield from future.result()

    def __enter__(self) -> _Parsing:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:  # an interrupted run leaves no work behind
            self.pool.shutdown(cancel_futures=True)


def _pool(workers: int) -> Any:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from sgtrace.index.scan import scan_file  # noqa: F401  (loaded once here: the forked workers inherit it)
    from sgtrace.parse import parse_tree

    parse_tree(b"")  # and the parser, instead of each worker loading its own

    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def spare_cpus() -> int:
    """The cores this process may use that nothing else is running on now (at least 1).

    From the kernel's count of runnable tasks at this instant (Linux ``/proc/loadavg``; this process is
    one of them); elsewhere every core.
    """
    cores = _cpu_count()
    try:
        with open("/proc/loadavg", "rb") as stream:
            running = int(stream.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return cores
    return max(1, min(cores, cores - (running - 1)))


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
