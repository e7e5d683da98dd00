"""List the Python files under a root, what could not be read, and the layout facts that name their modules.

Never imports anything from the tree; only lists folders, stats files and reads
packaging settings as data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sgtrace.discover.ignore import ENVIRONMENT_MARKERS, Ignorer
from sgtrace.discover.naming import Layout, Parts, name_files
from sgtrace.discover.roots import CONFIG_FILES, CONVENTIONAL, configured_roots, normalise
from sgtrace.model import FileError, PathFilter, Shadowed, SourceFile


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


def discover(root: str, path_filter: PathFilter = PathFilter()) -> Listing:
    """Every ``.py`` file under *root* (a directory or a file) that *path_filter* keeps, named as Python imports it.

    Directory symlinks are followed once; a link back to a directory already
    being walked is reported as a loop instead of followed.
    """
    top = Path(root)
    if not top.exists():
        raise RootError(f"no such file or directory: {root}")
    if top.is_file():
        above = _package_above(top.parent.resolve())
        layout = Layout(above=above)
        if above:
            layout.init_dirs.add(())
        files, _ = name_files([(str(top.resolve()), (top.name,))], layout)
        return Listing(tuple(files), ())
    if not top.is_dir():
        raise RootError(f"not a directory or a Python file: {root}")
    walker = _Walker(top, path_filter)
    walker.run()
    files, shadowed = name_files(walker.found, walker.layout)
    return Listing(tuple(sorted(files, key=lambda f: f.path)), tuple(walker.errors), tuple(shadowed))


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

    def __init__(self, top: Path, path_filter: PathFilter) -> None:
        self.top = top
        self.ignorer = Ignorer(top, path_filter)
        self.found: list[tuple[str, Parts]] = []
        self.errors: list[FileError] = []
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
            self.ignorer.enter(rel, directory)
            subdirs = []
            for entry in entries:
                item = self._entry(entry, rel)
                if item is not None:
                    subdirs.append(item)
            stack.extend(reversed(subdirs))

    def _list(self, directory: str, rel: Parts, seen: set[tuple[int, int]]) -> list[os.DirEntry[str]] | None:
        where = "/".join(rel) or "."
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

    def _entry(self, entry: os.DirEntry[str], rel: Parts) -> tuple[str, Parts] | None:
        """Note one directory entry: a file kept or in error, a layout fact; a folder to walk is returned."""
        parts = (*rel, entry.name)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            return None if self.ignorer.skips_dir(parts) else (entry.path, parts)
        if entry.name in CONFIG_FILES:
            self._configured(entry.path, entry.name, rel)
        if not entry.name.endswith(".py"):
            return None
        if entry.name == "__init__.py":
            self.layout.init_dirs.add(rel)
        if self.ignorer.skips_file(parts):
            return None
        if not _regular(entry):
            try:
                os.stat(entry.path)
            except OSError as exc:
                self.errors.append(FileError("/".join(parts), 0, f"cannot read file: {exc.strerror}"))
                return None
            self.errors.append(FileError("/".join(parts), 0, "not a regular file"))
            return None
        self.found.append((entry.path, parts))
        return None

    def _configured(self, path: str, name: str, rel: Parts) -> None:
        """Roots named by a packaging file, and the conventional ones beside it."""
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(1 << 20)
        except OSError:
            return
        self.layout.weak.add(rel)
        for relative in configured_roots(name, text):
            root = normalise(rel, relative)
            if root is not None and self.top.joinpath(*root).is_dir():
                self.layout.strong.add(root)
        self._conventional(rel)

    def _conventional(self, rel: Parts) -> None:
        for name in CONVENTIONAL:
            if self.top.joinpath(*rel, name).is_dir():
                self.layout.weak.add((*rel, name))
