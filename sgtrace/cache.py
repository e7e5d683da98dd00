"""On-disk cache: JSON only (never pickle), atomic writes.

Results are keyed by a hash of the bytes they were computed from, the query and
sgtrace's own code (its version and a digest of its files: an editable install
or a checkout keeps its version number across changes), so a stale entry is
never looked up. A damaged or foreign
entry is ignored (with a warning) and rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import time
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from sgtrace import __version__
from sgtrace.cachedir import claim, real_folder, refusal
from sgtrace.model import Access, FileError, FileScan

#: Bumped when the layout of an entry changes (or what a graph holds: 8, the callers searched for reach).
SCHEMA = 8


def default_dir() -> Path:
    """``$SGTRACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/sgtrace``, else ``~/.cache/sgtrace``."""
    explicit = os.environ.get("SGTRACE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sgtrace"


def key(data: bytes, *query: str) -> str:
    """Content key of one file for one query, for this code of sgtrace."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{__version__}\0{SCHEMA}\0{code_digest()}\0{chr(0).join(query)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


@functools.cache
def code_digest() -> str:
    """A digest of sgtrace's own files (its modules and templates, as installed), taken once a process.

    The version alone does not tell two builds of sgtrace apart where the code changes under it (a checkout, an
    editable install): an answer cached by one must not be served by the other. About 1.5 MB, a few ms.
    """
    return folder_digest(Path(__file__).resolve().parent)


def folder_digest(folder: Path) -> str:
    """A digest of the names and contents of the files under *folder*, compiled bytecode left out."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo") or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:  # unreadable: its name still counts
            data = b""
        digest.update(path.relative_to(folder).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.blake2b(data, digest_size=16).digest())
    return digest.hexdigest()


class TreeDigest:
    """A digest of a whole tree, fed module by module in a fixed order."""

    def __init__(self) -> None:
        self._digest = hashlib.blake2b(digest_size=20)

    def add(self, module: str, data: bytes) -> bytes:
        """Add one module's name and content; its content digest is returned (see :meth:`add_digest`)."""
        content = hashlib.blake2b(data, digest_size=16).digest()
        self.add_digest(module, content)
        return content

    def add_digest(self, module: str, content: bytes) -> None:
        """Add one module's name and the digest of its content, taken earlier."""
        self._digest.update(module.encode("utf-8", "surrogateescape") + b"\0" + content)

    def digest(self) -> bytes:
        """The digest so far."""
        return self._digest.digest()


_HEX = re.compile(r"(?:[0-9a-f]{2})*")


class Manifest:
    """What an earlier run learnt of a tree: each file's size and time, and the scans of the files that name the query.

    ``files``: path -> ``[size, mtime_ns, scan key ("" when the name is not in the file), content digest
    (hex, "" when not taken)]``: a file whose size and time are unchanged need not be read again. As git
    does with its index, a file modified within two seconds before the manifest was written is read
    anyway (a later change within the same clock tick would go unseen). ``scans``: scan key -> the
    file's scan, so a file touched but not changed is not parsed again either.

    One document per tree and query, written once per run: a file per scanned file cost more to
    create than the scan itself on ext4 (about 130 us each, measured).
    """

    #: Files this recent, relative to when the manifest was written, are not trusted.
    RACY_NS = 2_000_000_000

    def __init__(self, directory: Path | None, name: str) -> None:
        self.store = JsonCache(directory, "manifest")
        self.entry = key(name.encode("utf-8", "surrogateescape"), "manifest")  # paths may hold bytes not UTF-8
        self.written = 0
        self.files: dict[str, list[Any]] = {}
        self.scans: dict[str, Any] = {}
        data = self.store.get(self.entry)
        if isinstance(data, dict) and isinstance(data.get("files"), dict) and isinstance(data.get("written"), int):
            self.written, self.files = data["written"], data["files"]
            scans = data.get("scans")
            self.scans = scans if isinstance(scans, dict) else {}

    def known(self, path: str, size: int, mtime_ns: int) -> list[Any] | None:
        """What was learnt of *path* if it is unchanged since, else None."""
        found = self.files.get(path)
        if not isinstance(found, list) or len(found) != 4 or found[0] != size or found[1] != mtime_ns:
            return None
        if not (isinstance(found[2], str) and isinstance(found[3], str) and _HEX.fullmatch(found[3])):
            return None  # a damaged entry: the file is read again
        return found if mtime_ns < self.written - self.RACY_NS else None

    def scan(self, entry_key: str, path: str) -> FileScan | None:
        """The stored scan under *entry_key*, with *path* put into its errors; None if absent or damaged."""
        payload = self.scans.get(entry_key)
        return scan_from(payload, path) if payload is not None else None

    def save(self, files: dict[str, list[Any]], scans: dict[str, Any]) -> None:
        """Store what this run learnt (only when it differs from what was loaded)."""
        if files != self.files or scans != self.scans:
            self.store.put(self.entry, {"written": time.time_ns(), "files": files, "scans": scans})


def encode_scan(scan: FileScan) -> dict[str, Any]:
    """A scan as the manifest stores it (the errors' path is the file's, put back when read)."""
    accesses = [{name: getattr(a, name) for name in _ACCESS_TYPES} for a in scan.accesses]  # asdict copies deeply
    return {"accesses": accesses, "errors": [[e.line, e.message] for e in scan.errors]}


def _record(value: Any) -> dict[str, Any]:
    """A record as ``{"@": "Name", field: value...}`` (what :func:`sgtrace.codec.from_json` reads back)."""
    names = _RECORD_FIELDS.get(type(value))
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            raise TypeError(f"cannot encode {type(value).__name__}")
        names = _RECORD_FIELDS[type(value)] = tuple(f.name for f in fields(value))
    encoded: dict[str, Any] = {"@": type(value).__name__}
    for name in names:
        encoded[name] = getattr(value, name)
    return encoded


_RECORD_FIELDS: dict[type, tuple[str, ...]] = {}

#: Cache folders this process has made (or found): each is made once, not once per entry.
_MADE: set[Path] = set()


#: Cache folders refused in this process (each is said once).
_REFUSED: set[Path] = set()
#: Caches an entry could not be written to in this process (a full disk, a read-only folder): said once,
#: and not written to again.
_UNWRITABLE: set[Path | None] = set()


class JsonCache:
    """JSON documents under ``<dir>/<kind>/``, by key; a no-op when *directory* is None or not sgtrace's cache."""

    def __init__(self, directory: Path | None, kind: str = "index") -> None:
        self.top = directory
        self.directory = directory / kind if directory is not None and _usable(directory) else None
        if self.directory is not None and self.directory.is_symlink():
            _not_through(self.directory)
            self.directory = None

    def _path(self, entry_key: str) -> Path:
        assert self.directory is not None
        # 16 folders of entries, not 256: a cold run makes each folder once, and a folder costs a syscall
        return self.directory / entry_key[:1] / f"{entry_key}.json"

    def has(self, entry_key: str) -> bool:
        """Whether an entry is stored under that key (a regular file, not read)."""
        if self.directory is None:
            return False
        try:
            return stat.S_ISREG(os.lstat(self._path(entry_key)).st_mode)
        except OSError:
            return False

    def get(self, entry_key: str) -> Any:
        """The stored document, or None if absent or unreadable (a damaged one is reported)."""
        if self.directory is None:
            return None
        location = self._path(entry_key)
        try:
            raw = _read(location)
        except OSError:
            return None
        try:
            payload = json.loads(raw)
            if not isinstance(payload, dict) or payload.get("key") != entry_key or payload.get("schema") != SCHEMA:
                raise ValueError("not an entry for this key")
            return payload["data"]
        except (ValueError, KeyError, RecursionError) as exc:  # RecursionError: JSON nested deeper than the stack
            reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
            print(f"sgtrace: warning: ignoring damaged cache entry {location}: {reason}", file=sys.stderr)
            return None

    def put(self, entry_key: str, data: Any) -> None:
        """Store *data* atomically (write to a temporary file, then rename)."""
        if self.directory is None or self.top in _UNWRITABLE:
            return
        location = self._path(entry_key)
        payload = {"schema": SCHEMA, "version": __version__, "key": entry_key, "data": data}
        # records (dataclasses) are written by the C encoder's default hook, as codec.to_json spells them
        try:
            if location.parent not in _MADE:
                location.parent.mkdir(parents=True, exist_ok=True)
                if self.top is not None and not real_folder(location.parent, self.top):
                    _not_through(location.parent)
                    self.directory = None
                    return
                _MADE.add(location.parent)
            try:
                fd, tmp = tempfile.mkstemp(dir=location.parent, suffix=".tmp")
            except FileNotFoundError:  # the folder was removed since (cache clear): make it again
                location.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=location.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(payload, separators=(",", ":"), default=_record))  # the C encoder
            os.replace(tmp, location)
        except OSError as exc:
            _UNWRITABLE.add(self.top)
            print(
                f"sgtrace: warning: cannot write to the cache {self.top}: {exc.strerror or exc}; "
                "this run's results are not kept",
                file=sys.stderr,
            )


def scan_from(payload: Any, path: str) -> FileScan | None:
    """A scan as :func:`encode_scan` wrote it, its errors put at *path*; None (with a warning) if damaged."""
    try:
        accesses = tuple(_access(item) for item in payload["accesses"])
        errors = tuple(FileError(path, int(line), str(message)) for line, message in payload["errors"])
    except (ValueError, KeyError, TypeError) as exc:
        print(f"sgtrace: warning: ignoring damaged cache entry for {path}: {exc}", file=sys.stderr)
        return None
    return FileScan(accesses, errors)


_ACCESS_TYPES = {
    "line": int,
    "column": int,
    "kind": str,
    "cls": (str, type(None)),
    "function": (str, type(None)),
    "code": str,
}


def _access(item: object) -> Access:
    if not isinstance(item, dict) or set(item) != set(_ACCESS_TYPES):
        raise ValueError("malformed access")
    for name, expected in _ACCESS_TYPES.items():
        if not isinstance(item[name], expected):  # type: ignore[arg-type]
            raise ValueError(f"malformed field {name}")
    return Access(**item)


def _usable(directory: Path) -> bool:
    """Whether *directory* is sgtrace's cache (see :mod:`sgtrace.cachedir`); a refusal is said once."""
    if claim(directory):
        return True
    if directory not in _REFUSED:
        _REFUSED.add(directory)
        print(f"sgtrace: warning: {refusal(directory)}; running without a cache", file=sys.stderr)
    return False


def _not_through(link: Path) -> None:
    print(f"sgtrace: warning: not writing through a symbolic link in the cache: {link}", file=sys.stderr)


def _read(location: Path) -> bytes:
    """An entry's bytes; an entry that is a symbolic link is not followed (OSError)."""
    with os.fdopen(os.open(location, os.O_RDONLY | os.O_NOFOLLOW), "rb") as stream:
        return stream.read()


def usage(directory: Path) -> dict[str, tuple[int, int]]:
    """Entries and bytes under each part of a cache directory (manifest, index, graph...), links not followed."""
    found: dict[str, tuple[int, int]] = {}
    if not directory.is_dir():
        return found
    for part in sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink()):
        files = sizes = 0
        for folder, _, names in os.walk(part):
            for name in names:
                try:
                    sizes += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    continue
                files += 1
        found[part.name] = (files, sizes)
    return found
