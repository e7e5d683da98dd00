"""Stage 1: find the Python files under a root, and name their modules.

Never imports anything from the tree; only lists directories and stats files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from sgtrace.model import FileError, SourceFile

#: Directory names never descended into.
SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn", ".tox", ".nox", ".mypy_cache"})


class RootError(Exception):
    """The root given cannot be analysed at all (missing, not a directory or .py file)."""


def _package_prefix(directory: Path) -> list[str]:
    """Dotted parts of the package that *directory* is, if it holds ``__init__.py``."""
    parts: list[str] = []
    while (directory / "__init__.py").is_file():
        parts.append(directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    return parts[::-1]


def module_name(rel_parts: tuple[str, ...], prefix: list[str]) -> str:
    """Module name of a file from its path parts below the root.

    A leading ``src`` directory is dropped (the ``src/`` layout); ``__init__``
    names its package.
    """
    parts = list(rel_parts)
    if not prefix and len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(prefix + parts)


def walk(root: str) -> Iterator[SourceFile | FileError]:
    """Yield every ``.py`` file under *root* (a directory or a file), and what could not be read.

    Directory symlinks are followed once; a link back to a directory already
    being walked is reported as a loop instead of followed.
    """
    top = Path(root)
    if not top.exists():
        raise RootError(f"no such file or directory: {root}")
    if top.is_file():
        prefix = _package_prefix(top.parent.resolve())
        yield SourceFile(str(top.resolve()), top.name, module_name((top.name,), prefix))
        return
    if not top.is_dir():
        raise RootError(f"not a directory or a Python file: {root}")
    prefix = _package_prefix(top.resolve())
    yield from _walk_dir(top, prefix)


def _walk_dir(top: Path, prefix: list[str]) -> Iterator[SourceFile | FileError]:
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[str, tuple[str, ...]]] = [(str(top), ())]
    while stack:
        directory, rel = stack.pop()
        try:
            st = os.stat(directory)
        except OSError as exc:
            yield FileError("/".join(rel) or ".", 0, f"cannot read directory: {exc.strerror}")
            continue
        if (st.st_dev, st.st_ino) in seen:
            yield FileError("/".join(rel), 0, "symlink loop: directory already visited")
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            yield FileError("/".join(rel) or ".", 0, f"cannot read directory: {exc.strerror}")
            continue
        subdirs = []
        for entry in entries:
            item = _entry(entry, rel, prefix)
            if isinstance(item, tuple):
                subdirs.append(item)
            elif item is not None:
                yield item
        stack.extend(reversed(subdirs))


def _entry(
    entry: os.DirEntry[str], rel: tuple[str, ...], prefix: list[str]
) -> SourceFile | FileError | tuple[str, tuple[str, ...]] | None:
    """Classify one directory entry: a file to analyse, a problem, a directory to walk, or nothing."""
    parts = (*rel, entry.name)
    path = "/".join(parts)
    try:
        is_dir = entry.is_dir()
    except OSError:
        is_dir = False
    if is_dir:
        if entry.name in SKIP_DIRS:
            return None
        return (entry.path, parts)
    if not entry.name.endswith(".py"):
        return None
    try:
        mode = os.stat(entry.path).st_mode
    except OSError as exc:
        return FileError(path, 0, f"cannot read file: {exc.strerror}")
    if not stat.S_ISREG(mode):
        return FileError(path, 0, "not a regular file")
    return SourceFile(entry.path, path, module_name(parts, prefix))
