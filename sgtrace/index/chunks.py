"""Find's pass over a whole tree on the worker processes, with the tree's words (for the commands that build a graph).

A graph needs, besides find's answer, a digest of the whole tree (its cache key), each file's content
digest (the content store's key) and the tree's identifier index (:mod:`sgtrace.index.identifiers`). All
three need every file read, and the words cost five times the reading: so the tree is cut into chunks
and each chunk goes to a worker, which reads its files, digests them, scans those that name the
attribute (or takes the scan from the content store) and collects the chunk's words (or finds them in
the store). The parent meanwhile does what it can without them (*meanwhile*: loading the graph's
modules).

A file the tree's manifest knows unchanged is not read (as :func:`sgtrace.index.findpass.scan_tree` does):
a chunk of such files is not handed out at all, its words are read from the store when first asked.
Chunks are cut where a module's name hashes to a multiple of :data:`CUT` (content-defined, as rsync
and restic cut files): adding a file changes only its own chunk's key.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sgtrace.cache import Manifest, TreeDigest, encode_scan
from sgtrace.discover import Listing
from sgtrace.index.findpass import (
    POOL_BYTES,
    RunOptions,
    TreeScan,
    _pool,
    _stat,
    _tree_name,
    scan_one,
    spare_cpus,
)
from sgtrace.index.identifiers import (
    ChunkWords,
    IdentifierIndex,
    Source,
    Vocabulary,
    chunk_words,
    is_word,
    stored,
    words_of,
)
from sgtrace.index.store import ContentStore, content_digest, scan_key
from sgtrace.model import FileError, FileScan, SourceFile
from sgtrace.parse import Parsed, read_bytes, read_file

#: A chunk ends after a module whose name's CRC-32 is a multiple of this (about this many files a chunk:
#: small enough for two workers to finish together).
CUT = 256
#: Nor is a chunk longer than this.
MOST = 512
#: Below this many files to read, the pass runs inline (a pool costs more than it saves).
POOL_FILES = 200
#: Source bytes of the parses an inline pass keeps for the graph (as many as the graph keeps trees of).
PARSES_KEPT = 4 << 20


class Workers:
    """The worker processes of one run, started on first use (everything runs inline when ``inline`` is set).

    Without a number of jobs asked for, as many as the machine has cores free now (:func:`spare_cpus`):
    on a machine whose cores are all busy, handing work out only adds its cost (measured on 0.5.23 with
    two other test runs on the 2 cores: a cold caps 4.5 s with two workers, 4.1 s without).
    """

    def __init__(self, jobs: int | None) -> None:
        self.count = jobs or spare_cpus()
        self.pool: Any = None
        #: Whether work runs in this process (one job asked for, or too little to be worth a pool).
        self.inline = self.count == 1

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run *function* on a worker (or now, inline); its future."""
        if self.inline:
            done: Future[Any] = Future()
            done.set_result(function(*args))
            return done
        if self.pool is None:
            self.pool = _pool(self.count)
        future: Future[Any] = self.pool.submit(function, *args)
        return future

    def close(self) -> None:
        """Stop the workers, dropping work not begun (an interrupted run leaves nothing behind)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


class Parses:
    """The files find's pass parsed in this process, for the graph to take rather than parse them again (the
    files that name the attribute are the first modules a slice reads): by path and content, up to
    :data:`PARSES_KEPT` of their sources."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, bytes], Parsed] = {}
        self._bytes = 0

    def keep(self, path: str, content: bytes, parsed: Parsed) -> None:
        if self._bytes + len(parsed.data) <= PARSES_KEPT:
            self._kept[path, content] = parsed
            self._bytes += len(parsed.data)

    def take(self, path: str, content: bytes) -> Parsed | None:
        """The parse of the file at *path* with that content (once), or None."""
        return self._kept.pop((path, content), None)

    def clear(self) -> None:
        """Let go of the parses not taken."""
        self._kept.clear()
        self._bytes = 0


@dataclass(frozen=True, slots=True)
class TreeIndex:
    """Find's pass over a tree, and what a graph of it needs."""

    #: find's scans, errors, stats and the tree's digest.
    scan: TreeScan
    #: Identifier -> modules, for the whole tree.
    identifiers: IdentifierIndex
    #: Module -> the content digest of its file (the content store's key), for the files indexed.
    digests: dict[str, bytes] = field(default_factory=dict)
    #: The run's workers (closed once the graph is built).
    workers: Workers = field(default_factory=lambda: Workers(1))
    #: The parses of the files scanned in this process (none when workers scanned them).
    parses: Parses = field(default_factory=Parses)


@dataclass(frozen=True, slots=True)
class _Job:
    """The files of one chunk that must be read, for a worker."""

    #: (absolute path, path, module, whether its words are indexed) of each file to read.
    files: tuple[tuple[str, str, str, bool], ...]
    attribute: str
    cache_dir: Path | None
    #: Whether these are all the chunk's files (only then are its words taken: its key needs every content).
    whole: bool
    #: Where the words go instead of the chunk's own (a :class:`Vocabulary`, when the chunk is read here).
    vocabulary: Vocabulary | None = None


@dataclass(frozen=True, slots=True)
class _Read:
    """A worker's account of the files of one chunk it read."""

    #: (size, mtime_ns, content digest) of each file, or the message of why it could not be read.
    files: tuple[tuple[int, int, bytes] | str, ...]
    #: Position -> (scan, whether it was parsed now) for the files that name the attribute.
    scans: dict[int, tuple[FileScan, bool]]
    #: The chunk's words (:func:`~sgtrace.index.identifiers.chunk_words`), when the job was whole and the store
    #: lacked them.
    words: dict[str, Any] | None
    #: Each file's content's number in the job's vocabulary (None for a file not indexed or not read), when
    #: the job had one and was whole.
    numbers: tuple[int | None, ...] | None = None


def index_tree(
    listing: Listing, attribute: str, options: RunOptions, meanwhile: Callable[[], None] | None = None
) -> TreeIndex:
    """Find's pass over *listing* for *attribute*, with the tree's digest, content digests and identifier index."""
    name = _tree_name(attribute, listing, options.path_filter)
    manifest = Manifest(options.cache_dir, name)
    first: dict[str, SourceFile] = {}
    for source in listing.files:
        first.setdefault(source.module, source)
    shared = partial(Manifest, options.cache_dir, name[len(attribute) :])  # every query's: the name, no attribute
    pass_ = _Pass(listing, attribute, manifest, shared, ContentStore(options.cache_dir), options.cache_dir is not None)
    chunks = list(_chunks(listing.files))
    jobs = [pass_.job(chunk, first, options.cache_dir, options.vocabulary) for chunk in chunks]
    workers = Workers(options.jobs)
    few = sum(len(j.files) for j in jobs) < POOL_FILES and pass_.naming < POOL_BYTES
    workers.inline = workers.inline or few or len(chunks) < 2 or options.vocabulary is not None
    reading = any(job.files for job in jobs)
    parses = Parses()
    try:
        # the parses can only be kept where the files are read in this process
        kept = parses if workers.inline else None
        futures = [workers.submit(_read_chunk, job, kept) if job.files else None for job in jobs]
        if meanwhile is not None and reading:  # files changed: the graph may be built
            meanwhile()
        for chunk, job, future in zip(chunks, jobs, futures, strict=True):
            pass_.take(chunk, job, future.result() if future is not None else None, first)
    except BaseException:
        workers.close()
        raise
    manifest.save(pass_.learnt, pass_.scans)
    if reading:  # what the files read hold is kept for every query
        learnt = pass_.learnt.items()
        pass_.tree.save({path: [size, mtime, "", digest] for path, (size, mtime, _, digest) in learnt if digest}, {})
    return pass_.result(first, workers, parses)


class _Pass:
    """What the pass learns, file by file, whether the manifest knew it or a worker read it."""

    def __init__(
        self,
        listing: Listing,
        attribute: str,
        manifest: Manifest,
        shared: Callable[[], Manifest],
        store: ContentStore,
        remember: bool,
    ) -> None:
        self.listing, self.attribute, self.store, self.remember = listing, attribute, store, remember
        #: What an earlier run of this query learnt.
        self.manifest = manifest
        #: Gives the manifest every query of the tree shares (the files' contents), read when first needed.
        self.shared = shared
        self._tree: Manifest | None = None
        #: Stored words of chunks read here (their files' contents known without reading them), by chunk key.
        self.loaded: dict[bytes, ChunkWords] = {}
        #: Bytes of the files so taken that are still to be read: they name the attribute, and may be parsed.
        self.naming = 0
        self.learnt: dict[str, list[Any]] = {}
        self.scans: dict[str, Any] = {}
        self.errors: list[FileError] = list(listing.errors)
        self.done: list[tuple[SourceFile, FileScan]] = []
        self.contents: dict[str, bytes] = {}  # abspath -> content digest
        self.parsed = 0
        self.index = IdentifierIndex()

    def job(
        self,
        chunk: list[SourceFile],
        first: dict[str, SourceFile],
        cache_dir: Path | None,
        vocabulary: Vocabulary | None,
    ) -> _Job:
        """The files of a chunk that must be read; those the manifest knows unchanged (with their scans) are taken,
        and so are those another query's run read, unchanged, whose words do not hold the attribute."""
        unknown = [source for source in chunk if not self._known(source)]
        whole = len(unknown) == len(chunk)
        if whole and vocabulary is None and self._digested(chunk, first):
            unknown, whole = [source for source in chunk if source.abspath not in self.contents], False
        wanted = tuple(_wanted(source, first) for source in unknown)
        return _Job(wanted, self.attribute, cache_dir, whole, vocabulary if whole else None)

    def _digested(self, chunk: list[SourceFile], first: dict[str, SourceFile]) -> bool:
        """Take the files of a chunk another query's run read, unchanged since, that do not hold the attribute
        (by the chunk's stored words): whether the chunk could be taken so (its other files are to be read)."""
        if not chunk or not self.remember or not self.tree.files or not is_word(self.attribute):
            return False
        learnt = [entry for entry in (self.tree.known(s.abspath, *_stat(s)) for s in chunk) if entry and entry[3]]
        if len(learnt) != len(chunk):
            return False
        modules = _indexed(chunk, first)
        digests = [bytes.fromhex(entry[3]) for entry in learnt]
        key = _chunk_key([s.module for s in chunk], modules, digests)
        words = self.store.words(key)
        if words is None:
            return False
        try:
            table = ChunkWords(words, len(chunk))
            naming = table.containing(self.attribute)
        except (KeyError, TypeError, ValueError):
            return False  # damaged: the worker reads the chunk, and the words are built again when asked
        self.loaded[key] = table
        for position, (source, entry, digest) in enumerate(zip(chunk, learnt, digests, strict=True)):
            if position in naming or modules[position] is None:
                self.naming += entry[0]
                continue  # to be read and scanned (a file not indexed has no words to tell)
            self.learnt[source.abspath] = [entry[0], entry[1], "", entry[3]]
            self.contents[source.abspath] = digest
        return True

    @property
    def tree(self) -> Manifest:
        """The files' sizes, times and content digests as any query's run of this tree learnt them."""
        if self._tree is None:
            self._tree = self.shared()
        return self._tree

    def _known(self, source: SourceFile) -> bool:
        if not self.remember or not self.manifest.files:
            return False
        known = self.manifest.known(source.abspath, *_stat(source))
        if known is None or not known[3]:
            return False
        cached = self.manifest.scan(known[2], source.path) if known[2] else None
        if known[2] and cached is None:
            return False
        self.learnt[source.abspath] = known
        self.contents[source.abspath] = bytes.fromhex(known[3])
        if cached is not None:
            self.done.append((source, cached))
            self.scans[known[2]] = self.manifest.scans[known[2]]
        return True

    def take(self, chunk: list[SourceFile], job: _Job, read: _Read | None, first: dict[str, SourceFile]) -> None:
        """Take a worker's account of the files of a chunk it read; add the chunk to the index."""
        wanted = {abspath: position for position, (abspath, *_) in enumerate(job.files)}
        for source in chunk:
            position = wanted.get(source.abspath)
            if read is not None and position is not None:
                self._take_file(source, read.files[position], read.scans.get(position))
        modules = _indexed(chunk, first)
        if read is not None and read.numbers is not None and job.vocabulary is not None:
            self.index.add_numbered(job.vocabulary, modules, read.numbers)
            return
        contents = [self.contents.get(s.abspath) for s in chunk]
        key = _chunk_key([s.module for s in chunk], modules, contents)
        build = self._builder(chunk, modules, key)
        words: Mapping[str, Any] | ChunkWords | None = self.loaded.pop(key, None)
        if read is not None and read.words is not None:
            words = read.words
        self.index.add_packed(modules, words, build, None if words is not None else self._loader(key, build))

    def _take_file(self, source: SourceFile, account: tuple[int, int, bytes] | str, scanned: Any) -> None:
        if isinstance(account, str):
            self.errors.append(FileError(source.path, 0, f"cannot read file: {account}"))
            return
        size, mtime_ns, content = account
        self.contents[source.abspath] = content
        entry_key = scan_key(content, self.attribute) if scanned is not None else ""
        if self.remember:
            self.learnt[source.abspath] = [size, mtime_ns, entry_key, content.hex()]
        if scanned is not None:
            scan, parsed = scanned
            self.parsed += parsed
            self.done.append((source, scan))
            if self.remember:
                self.scans[entry_key] = encode_scan(scan)

    def _loader(self, key: bytes, build: Source) -> Source:
        """The stored words of a chunk, else built from its files."""

        def load() -> Mapping[str, Any]:
            found = self.store.words(key)
            return found if found is not None else build()

        return load

    def _builder(self, chunk: list[SourceFile], modules: list[str | None], key: bytes) -> Source:
        """A chunk's words from its files (read here: the parent asks for them only after a change), stored."""

        def build() -> Mapping[str, Any]:
            sets = [words_of(_bytes(s.abspath)) if m is not None else None for s, m in zip(chunk, modules, strict=True)]
            words = chunk_words(sets)
            self.store.put_words(key, stored(words))
            return words

        return build

    def result(self, first: dict[str, SourceFile], workers: Workers, parses: Parses) -> TreeIndex:
        """The pass's answer, the tree digest taken in the listing's order."""
        tree = TreeDigest()
        for source in self.listing.files:
            content = self.contents.get(source.abspath)
            if content is not None:
                tree.add_digest(source.module, content)
        stats = {"files": len(self.listing.files), "matched": len(self.done), "parsed": self.parsed}
        scan = TreeScan(tuple(self.done), tuple(self.errors), stats, tree.digest())
        digests = {m: self.contents[s.abspath] for m, s in first.items() if s.abspath in self.contents}
        return TreeIndex(scan, self.index, digests, workers, parses)


def _wanted(source: SourceFile, first: dict[str, SourceFile]) -> tuple[str, str, str, bool]:
    """A file as a job lists it: absolute path, path, module, whether its words are indexed."""
    return (source.abspath, source.path, source.module, first.get(source.module) is source)


def _chunks(files: tuple[SourceFile, ...]) -> Iterator[list[SourceFile]]:
    """The files cut into chunks where a module's name hashes to a multiple of CUT (or MOST files are reached)."""
    chunk: list[SourceFile] = []
    for source in files:
        chunk.append(source)
        if zlib.crc32(source.module.encode("utf-8", "surrogateescape")) % CUT == 0 or len(chunk) >= MOST:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _indexed(chunk: list[SourceFile], first: dict[str, SourceFile]) -> list[str | None]:
    """Each file's module, or None for a file that is not its module's first (the project keeps only that one)."""
    return [s.module if first.get(s.module) is s else None for s in chunk]


def _chunk_key(names: Sequence[str], modules: Sequence[str | None], contents: Sequence[bytes | None]) -> bytes:
    """What names a chunk's words in the store: its files' modules, whether each is indexed, and their contents."""
    digest = hashlib.blake2b(digest_size=20)
    for name, module, content in zip(names, modules, contents, strict=True):
        digest.update(name.encode("utf-8", "surrogateescape") + (b"\1" if module else b"\0"))
        digest.update(content or b"-")
    return digest.digest()


def _read_chunk(job: _Job, parses: Parses | None = None) -> _Read:
    """Read, digest and scan the files of one chunk, and take its words when it is whole and the store lacks them;
    the files parsed go to *parses*, if given."""
    store = ContentStore(job.cache_dir)
    needle = job.attribute.encode("utf-8")
    accounts: list[tuple[int, int, bytes] | str] = []
    scans: dict[int, tuple[FileScan, bool]] = {}
    datas: list[bytes | None] = []  # kept for the words, which need the chunk's key first
    for position, (abspath, path, _, _) in enumerate(job.files):
        try:
            data, size, mtime_ns = read_file(abspath)
        except OSError as exc:
            accounts.append(str(exc.strerror or exc))
            datas.append(None)
            continue
        content = content_digest(data)
        accounts.append((size, mtime_ns, content))
        datas.append(data if job.whole else None)
        if needle in data or not job.attribute.isascii():
            cached = store.scan(content, job.attribute, path)
            parsed = cached is None
            if cached is None:
                keep = partial(parses.keep, path, content) if parses is not None else None
                cached = scan_one(path, data, job.attribute, keep)
                store.put_scan(content, job.attribute, cached)
            scans[position] = (cached, parsed)
    if not job.whole:
        return _Read(tuple(accounts), scans, None)
    modules = [module if indexed else None for _, _, module, indexed in job.files]
    if job.vocabulary is not None:
        add = job.vocabulary.add
        numbers = tuple(
            add(a[2], d) if d is not None and m is not None and not isinstance(a, str) else None
            for a, d, m in zip(accounts, datas, modules, strict=True)
        )
        return _Read(tuple(accounts), scans, None, numbers)
    contents = [a[2] if not isinstance(a, str) else None for a in accounts]
    key = _chunk_key([module for _, _, module, _ in job.files], modules, contents)
    if store.enabled and store.words(key) is not None:
        return _Read(tuple(accounts), scans, None)
    packed = chunk_words(
        words_of(d) if d is not None and m is not None else None for d, m in zip(datas, modules, strict=False)
    )
    store.put_words(key, stored(packed))
    return _Read(tuple(accounts), scans, packed)


def _bytes(path: str) -> bytes:
    try:
        return read_bytes(path)
    except OSError:
        return b""
