"""Stage 3 (index): what is learnt of a file, kept by the digest of its bytes.

Not by the query, the tree or the release: any run on any tree that holds the same bytes reuses it
(the other release of a ``diff``, a checkout and its installed package, the next attribute asked
about). What is kept, each a JSON document of the cache's ``store`` part (see
:class:`~sgtrace.cache.JsonCache`: written atomically, read without following links, a damaged one
ignored with a warning and rebuilt):

- a module: its outline, its syntax error, and the bodies of the functions a slice has read
  (:mod:`sgtrace.index.packing`), by the file's content and the nesting bound;
- find's scan of one attribute, by the file's content and the attribute;
- the words of a chunk of files (:mod:`sgtrace.index.identifiers`), by the names and contents of its files;
- the byte searches of a tree (which modules match a pattern: :meth:`sgtrace.index.project.Project.matching`),
  by the names and contents of all its files (another attribute asked about the same tree asks many again).

The digest of a file's content is :func:`content_digest` (what the tree digest is made of, so a run
that read the tree has it for every file). Entries are keyed with sgtrace's version, its code's digest
and the cache schema too (:func:`sgtrace.cache.key`).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgtrace.cache import JsonCache, encode_scan, key, scan_from
from sgtrace.index.packing import pack_outline, unpack_outline
from sgtrace.model import FileError, FileScan
from sgtrace.records import Outline

#: The cache part the store's documents live in.
PART = "store"


def content_digest(data: bytes) -> bytes:
    """The digest a file's bytes are known by (16 bytes of BLAKE2b)."""
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass(slots=True)
class ModuleEntry:
    """A module as the store keeps it: outline, syntax error, and the bodies read so far (packed)."""

    #: What the module defines.
    outline: Outline
    #: Its syntax error's (line, message), or None.
    error: tuple[int, str] | None
    #: ``"start:end"`` of a function's byte range -> its body, packed (:func:`sgtrace.index.packing.pack_body`).
    bodies: dict[str, Any] = field(default_factory=dict)


class ContentStore:
    """Per-file knowledge by content digest; a no-op without a cache folder."""

    def __init__(self, directory: Path | None) -> None:
        self.cache = JsonCache(directory, PART)

    @property
    def enabled(self) -> bool:
        """Whether anything is read or written."""
        return self.cache.directory is not None

    def module(self, content: bytes, depth: int, path: str) -> ModuleEntry | None:
        """The stored module of that content (read with that nesting bound), or None (a damaged one is said)."""
        data = self.cache.get(key(content, "module", str(depth))) if self.enabled else None
        if data is None:
            return None
        try:
            error = data["error"]
            bodies = data["bodies"]
            if not isinstance(bodies, dict):
                raise TypeError("bodies are not a mapping")
            found = None if error is None else (int(error[0]), str(error[1]))
            return ModuleEntry(unpack_outline(data["outline"]), found, bodies)
        except (KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
            print(f"sgtrace: warning: ignoring damaged cache entry for {path}: {exc}", file=sys.stderr)
            return None

    def has_module(self, content: bytes, depth: int) -> bool:
        """Whether a module of that content is stored (its entry exists; it may still turn out damaged)."""
        return self.enabled and self.cache.has(key(content, "module", str(depth)))

    def put_module(self, content: bytes, depth: int, entry: ModuleEntry) -> None:
        """Store a module (its bodies as they are: packed)."""
        if self.enabled:
            document = {"outline": pack_outline(entry.outline), "error": entry.error, "bodies": entry.bodies}
            self.cache.put(key(content, "module", str(depth)), document)

    def scan(self, content: bytes, attribute: str, path: str) -> FileScan | None:
        """find's stored scan of *attribute* in a file of that content, its errors put at *path*; None if absent."""
        data = self.cache.get(scan_key(content, attribute)) if self.enabled else None
        return scan_from(data, path) if data is not None else None

    def put_scan(self, content: bytes, attribute: str, scan: FileScan) -> None:
        """Store find's scan of one file."""
        if self.enabled:
            self.cache.put(scan_key(content, attribute), encode_scan(scan))

    def mentions(self, tree: bytes) -> dict[str, list[int]] | None:
        """The stored byte searches of a tree (pattern -> the positions, in the sorted modules, of those matching),
        or None; a damaged entry is said and ignored."""
        data = self.cache.get(key(tree, "mentions")) if self.enabled else None
        if data is None:
            return None
        if not isinstance(data, dict) or not all(
            isinstance(found, list) and all(type(n) is int for n in found) for found in data.values()
        ):
            print("sgtrace: warning: ignoring damaged cache entry (the tree's byte searches)", file=sys.stderr)
            return None
        return data

    def put_mentions(self, tree: bytes, found: dict[str, list[int]]) -> None:
        """Store the byte searches of a tree."""
        if self.enabled:
            self.cache.put(key(tree, "mentions"), found)

    def words(self, chunk: bytes) -> dict[str, Any] | None:
        """The stored words of a chunk of files (word -> packed positions), or None."""
        data = self.cache.get(key(chunk, "words")) if self.enabled else None
        return data if isinstance(data, dict) else None

    def put_words(self, chunk: bytes, words: dict[str, Any]) -> None:
        """Store the words of a chunk of files."""
        if self.enabled:
            self.cache.put(key(chunk, "words"), words)


def scan_key(content: bytes, attribute: str) -> str:
    """The key of find's scan of *attribute* in a file of that content (the manifest's and the store's)."""
    return key(content, "scan", attribute)


def error_of(entry: ModuleEntry, path: str) -> FileError | None:
    """The stored syntax error of a module, at *path*."""
    return None if entry.error is None else FileError(path, entry.error[0], entry.error[1])
