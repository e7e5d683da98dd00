"""List the Python files under a root, what could not be read, and the layout facts that name their modules.

Never imports anything from the tree; only lists folders, stats files and reads
packaging settings as data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sgtrace.discover.ignore import ENVIRONMENT_MARKERS, Ignorer
from sgtrace.discover.naming import Layout, Parts, name_files, printable
from sgtrace.discover.roots import CONFIG_FILES, CONVENTIONAL, configured_roots, normalise
from sgtrace.model import FileError, Limits, PathFilter, Shadowed, SourceFile


class RootError(Exception):
    """The root given cannot be analysed at all (missing, not a directory or .py file)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """The files of a tree that a run analyses."""

    #: Files, in path order, with their module names.
    files: tuple[SourceFile, ...]
    #: Folders and files that could not be listed or read.
    errors: tuple[FileError, ...]
    #: Packages found twice, and which copy was used.
    shadowed: tuple[Shadowed, ...] = ()
    #: Warnings about the walk: links leading out of the root that were not followed, ignore lines git ignores.
    notes: tuple[str, ...] = ()


def discover(root: str, path_filter: PathFilter = PathFilter(), limits: Limits = Limits()) -> Listing:
    """Every ``.py`` file under *root* (a directory or a file) that *path_filter* keeps, named as Python imports it.

    Symbolic links are followed once when they lead to a place inside the root (a link back to a
    directory already being walked is reported as a loop); a link leading out of it is not followed
    unless ``path_filter.follow_links``. A file larger than ``limits.file_bytes`` is an error, not read.
    """
    top = Path(root)
    if not top.exists():
        raise RootError(f"no such file or directory: {printable(root)}")
    if top.is_file():
        return _one_file(top, limits)
    if not top.is_dir():
        raise RootError(f"not a directory or a Python file: {printable(root)}")
    walker = _Walker(top, path_filter, limits)
    walker.run()
    files, shadowed = name_files(walker.found, walker.layout)
    notes = [*walker.ignorer.warnings, *_left_out(walker.outside, root)]
    return Listing(tuple(sorted(files, key=lambda f: f.path)), tuple(walker.errors), tuple(shadowed), tuple(notes))


def _one_file(top: Path, limits: Limits) -> Listing:
    """A root that is one file: a Python file (by its name or its first line), else an error."""
    if top.suffix not in (".py", ".pyi") and not _python_script(top):
        raise RootError(f"not a directory or a Python file: {printable(str(top))}")
    above = _package_above(top.parent.resolve())
    layout = Layout(above=above)
    if above:
        layout.init_dirs.add(())
    files, _ = name_files([(str(top.resolve()), (top.name,))], layout)
    error = _too_large(top.stat().st_size, limits, printable(top.name))
    return Listing(() if error else tuple(files), (error,) if error else ())


def _python_script(path: Path) -> bool:
    """Whether a file without the ``.py`` suffix starts with a Python ``#!`` line."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _too_large(size: int, limits: Limits, path: str) -> FileError | None:
    if size <= limits.file_bytes:
        return None
    return FileError(
        path,
        0,
        f"too large: {size / 1e6:.1f} MB (the bound is {limits.file_bytes / 1e6:g} MB; --max-file-size raises it)",
    )


def _left_out(links: list[str], root: str) -> list[str]:
    """One warning for the symbolic links that lead out of the root."""
    if not links:
        return []
    shown = ", ".join(links[:3]) + (", ..." if len(links) > 3 else "")
    count = f"{len(links)} symbolic link{'s' if len(links) > 1 else ''}"
    return [
        f"warning: {count} under {printable(root)} lead out of it, not followed ({shown}); --follow-links follows them"
    ]


def _package_above(directory: Path) -> Parts:
    """Package names of *directory* and the packages that hold it, if it holds ``__init__.py``.

    Only regular packages are climbed above the root: a folder without
    ``__init__.py`` there is taken for the import root the user's tree sits in.
    """
    names: list[str] = []
    for folder in (directory, *directory.parents):
        if not folder.name.isidentifier() or not (folder / "__init__.py").is_file():
            break
        names.append(folder.name)
    return tuple(reversed(names))


def _regular(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a regular file (links followed), from what the listing already knows."""
    try:
        return entry.is_file()
    except OSError:
        return False


class _Walker:
    """One walk of a folder tree: files kept, errors, and the layout facts met on the way."""

    def __init__(self, top: Path, path_filter: PathFilter, limits: Limits) -> None:
        self.top = top
        self.real_top = os.path.realpath(top)
        self.follow_links = path_filter.follow_links
        self.limits = limits
        self.ignorer = Ignorer(top, path_filter)
        self.found: list[tuple[str, Parts]] = []
        self.errors: list[FileError] = []
        #: Symbolic links (paths below the root, printable) that lead out of it and were not followed.
        self.outside: list[str] = []
        self.layout = Layout(above=_package_above(top.resolve()))
        if self.layout.above:
            self.layout.init_dirs.add(())

    def run(self) -> None:
        """Walk the tree once."""
        self._conventional(())
        seen: set[tuple[int, int]] = set()
        stack: list[tuple[str, Parts]] = [(str(self.top), ())]
        while stack:
            directory, rel = stack.pop()
            entries = self._list(directory, rel, seen)
            if entries is None or (rel and any(e.name in ENVIRONMENT_MARKERS for e in entries)):
                continue  # unreadable, or a Python environment: not source
            ignore = next((e for e in entries if e.name == ".gitignore"), None)
            if ignore is not None and _regular(ignore) and self._inside(ignore, (*rel, ignore.name)):
                self.ignorer.enter(rel, ignore.path)
            subdirs = []
            for entry in entries:
                item = self._entry(entry, rel)
                if item is not None:
                    subdirs.append(item)
            stack.extend(reversed(subdirs))

    def _list(self, directory: str, rel: Parts, seen: set[tuple[int, int]]) -> list[os.DirEntry[str]] | None:
        where = printable("/".join(rel)) or "."
        try:
            st = os.stat(directory)
            if (st.st_dev, st.st_ino) in seen:
                self.errors.append(FileError(where, 0, "symlink loop: directory already visited"))
                return None
            seen.add((st.st_dev, st.st_ino))
            return sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            self.errors.append(FileError(where, 0, f"cannot read directory: {exc.strerror}"))
            return None

    def _inside(self, entry: os.DirEntry[str], parts: Parts) -> bool:
        """Whether the entry may be followed: it is no symbolic link, or its target lies inside the root."""
        try:
            if self.follow_links or not entry.is_symlink():
                return True
        except OSError:
            return False
        target = os.path.realpath(entry.path)
        if target == self.real_top or target.startswith(self.real_top.rstrip(os.sep) + os.sep):
            return True
        self.outside.append(printable("/".join(parts)))
        return False

    def _entry(self, entry: os.DirEntry[str], rel: Parts) -> tuple[str, Parts] | None:
        """Note one directory entry: a file kept or in error, a layout fact; a folder to walk is returned."""
        parts = (*rel, entry.name)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if self.ignorer.skips_dir(parts) or not self._inside(entry, parts):
                return None
            return entry.path, parts
        python = entry.name.endswith(".py")
        if not (python or entry.name in CONFIG_FILES) or not self._inside(entry, parts):
            return None
        if not python:
            if _regular(entry):  # a FIFO named pyproject.toml would block the read
                self._configured(entry.path, entry.name, rel)
            return None
        if entry.name == "__init__.py":
            self.layout.init_dirs.add(rel)
        if self.ignorer.skips_file(parts):
            return None
        self._keep(entry, parts)
        return None

    def _keep(self, entry: os.DirEntry[str], parts: Parts) -> None:
        """A ``.py`` file the filters keep: listed, or an error (unreadable, not a regular file, too large)."""
        where = printable("/".join(parts))
        try:
            status = entry.stat()
        except OSError as exc:
            self.errors.append(FileError(where, 0, f"cannot read file: {exc.strerror}"))
            return
        if not _regular(entry):
            self.errors.append(FileError(where, 0, "not a regular file"))
            return
        too_large = _too_large(status.st_size, self.limits, where)
        if too_large is not None:
            self.errors.append(too_large)
            return
        self.found.append((entry.path, parts))

    def _configured(self, path: str, name: str, rel: Parts) -> None:
        """Roots named by a packaging file, and the conventional ones beside it."""
        roots = _configured_roots(self.top, path, name, rel)
        if roots is None:
            return
        self.layout.weak.add(rel)
        self.layout.strong.update(roots)
        self._conventional(rel)

    def _conventional(self, rel: Parts) -> None:
        self.layout.weak.update(_conventional_roots(self.top, rel))


def package_at(top: Path, name: str) -> Path | None:
    """The folder of the regular package *name* (it holds ``__init__.py``) at an import root that *top*
    itself declares: *top*, its ``src/`` and ``python/`` folders, the roots its packaging files name.

    The roots a walk of *top* starts from, looked at without walking the tree; None if none holds it.
    """
    roots: list[Parts] = [(), *_conventional_roots(top, ())]
    for config in CONFIG_FILES:
        if (top / config).is_file():  # a FIFO named pyproject.toml would block the read
            roots += _configured_roots(top, str(top / config), config, ()) or []
    for root in roots:
        folder = top.joinpath(*root, name)
        if (folder / "__init__.py").is_file():
            return folder
    return None


def _configured_roots(top: Path, path: str, name: str, rel: Parts) -> list[Parts] | None:
    """The folders (below *top*) that the packaging file at *path* names as roots; None if it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return None
    roots = (normalise(rel, relative) for relative in configured_roots(name, text))
    return [root for root in roots if root is not None and top.joinpath(*root).is_dir()]


def _conventional_roots(top: Path, rel: Parts) -> list[Parts]:
    """The ``src/`` and ``python/`` folders in the folder *rel* below *top*."""
    return [(*rel, name) for name in CONVENTIONAL if top.joinpath(*rel, name).is_dir()]
