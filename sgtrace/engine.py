"""Run the per-file scan over a tree: byte prefilter, cache, process pool.

Reading a file costs microseconds and parsing it milliseconds, so a file is
parsed only when its bytes contain the name, and only when the cache does not
already hold its result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgtrace.cache import Manifest, ScanCache, TreeDigest, key
from sgtrace.discover import Listing
from sgtrace.model import FileError, FileScan, PathFilter, SourceFile
from sgtrace.parse import read_bytes

#: Below this many bytes to parse, a process pool costs more than it saves.
_POOL_THRESHOLD = 512 * 1024


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run: parallelism and cache."""

    #: Worker processes; None for one per CPU, 1 to run inline.
    jobs: int | None = None
    #: Cache directory, or None to run without a cache.
    cache_dir: Path | None = None
    #: Told (files parsed, files to parse) as the parse goes on; None for silence.
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)
    #: Which files under a root are analysed.
    path_filter: PathFilter = PathFilter()


@dataclass(frozen=True, slots=True)
class TreeScan:
    """Per-file scans of a tree, and what could not be read."""

    #: (file, its scan) for every file that contains the name.
    files: tuple[tuple[SourceFile, FileScan], ...]
    #: Files that could not be listed or read.
    errors: tuple[FileError, ...]
    #: Counts: files seen, files containing the name, files parsed.
    stats: dict[str, int]
    #: A digest of the whole tree (every module's name and content), from the same pass.
    digest: bytes = b""
    #: Module -> its bytes, every file read (kept only when a digest is asked for: the graph needs them).
    contents: dict[str, bytes] = field(default_factory=dict)


def scan_tree(
    listing: Listing,
    attribute: str,
    options: RunOptions,
    digest: bool = False,
    meanwhile: Callable[[dict[str, bytes]], None] | None = None,
) -> TreeScan:
    """Scan every Python file of a listing for accesses of *attribute* (and digest the tree, if asked).

    A file unchanged since an earlier run (see :class:`~sgtrace.cache.Manifest`) is not read again.
    When files must be parsed, *meanwhile* is given the bytes read and runs while the workers parse
    (the graph's own index of the tree, built on the other core's time).
    """
    cache = ScanCache(options.cache_dir)
    manifest = Manifest(options.cache_dir, "\0".join([attribute, *(f.abspath for f in listing.files)]))
    learnt: dict[str, list[Any]] = {}
    needle = attribute.encode("utf-8")
    errors: list[FileError] = list(listing.errors)
    done: list[tuple[SourceFile, FileScan]] = []
    pending: list[tuple[SourceFile, bytes, str]] = []
    tree = TreeDigest() if digest else None
    contents: dict[str, bytes] = {}
    remember = options.cache_dir is not None
    for item in listing.files:
        stat = _stat(item) if remember else (-1, -1)
        known = _known(manifest, item, stat, digest)
        if known is not None:
            learnt[item.abspath] = known
            if tree is not None:
                tree.add_digest(item.module, bytes.fromhex(known[3]))
            cached = cache.get(known[2], item.path) if known[2] else None
            if cached is not None or not known[2]:
                if cached is not None:
                    done.append((item, cached))
                continue
        data = _read(item, errors)
        if data is None:
            continue
        content = tree.add(item.module, data).hex() if tree is not None else ""
        if tree is not None:
            contents[item.module] = data
        found = needle in data or not attribute.isascii()
        entry_key = key(data, "scan", attribute) if found else ""
        if remember:
            learnt[item.abspath] = [*stat, entry_key, content]
        if not found:
            continue
        cached = cache.get(entry_key, item.path)
        if cached is not None:
            done.append((item, cached))
        else:
            pending.append((item, data, entry_key))
    then = (lambda: meanwhile(contents)) if meanwhile is not None and pending else None
    for count, ((source, _, entry_key), result) in enumerate(
        zip(pending, _run(pending, attribute, options.jobs, then), strict=True), 1
    ):
        cache.put(entry_key, result)
        done.append((source, result))
        if options.progress is not None:
            options.progress(count, len(pending))
    manifest.save(learnt)
    stats = {"files": len(listing.files), "matched": len(done), "parsed": len(pending)}
    return TreeScan(tuple(done), tuple(errors), stats, tree.digest() if tree is not None else b"", contents)


def _known(manifest: Manifest, item: SourceFile, stat: tuple[int, int], digest: bool) -> list[Any] | None:
    """What an earlier run learnt of an unchanged file (with its content digest, when one is wanted)."""
    known = manifest.known(item.abspath, *stat) if manifest.files else None
    return known if known is not None and (known[3] or not digest) else None


def _stat(item: SourceFile) -> tuple[int, int]:
    try:
        st = os.stat(item.abspath)
    except OSError:
        return (-1, -1)  # never matches: the file is read, and its error reported
    return (st.st_size, st.st_mtime_ns)


def _read(source: SourceFile, errors: list[FileError]) -> bytes | None:
    try:
        return read_bytes(source.abspath)
    except OSError as exc:
        errors.append(FileError(source.path, 0, f"cannot read file: {exc.strerror or exc}"))
        return None


def _job(args: tuple[str, bytes, str]) -> FileScan:
    from sgtrace.scan import scan_file  # imported on first parse: a warm run needs no parser

    path, data, attribute = args
    try:
        return scan_file(path, data, attribute)
    except RecursionError:
        return FileScan((), (FileError(path, 0, "too deeply nested to analyse"),))


def _run(
    pending: list[tuple[SourceFile, bytes, str]], attribute: str, jobs: int | None, then: Callable[[], None] | None
) -> Iterator[FileScan]:
    """The scans of *pending*, in order; *then* runs once the work is handed out (or first, inline)."""
    jobs_list = [(source.path, data, attribute) for source, data, _ in pending]
    workers = jobs or _cpu_count()
    size = sum(len(data) for _, data, _ in jobs_list)
    if workers <= 1 or len(jobs_list) <= 1 or size < _POOL_THRESHOLD:
        if then is not None:
            then()
        yield from map(_job, jobs_list)
        return
    yield from _pooled(jobs_list, workers, then)


def _pooled(
    jobs_list: list[tuple[str, bytes, str]], workers: int, then: Callable[[], None] | None
) -> Iterator[FileScan]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    chunk = max(1, len(jobs_list) // (workers * 8))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        results = pool.map(_job, jobs_list, chunksize=chunk)  # handed out now
        if then is not None:
            then()
        yield from results


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
