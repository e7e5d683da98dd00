"""Which folder is sgtrace's cache: marked by a CACHEDIR.TAG that sgtrace wrote, as pytest's and ruff's are.

A folder named as the cache (``--cache-dir``, ``cache-dir`` in a ``[tool.sgtrace]`` table, the
environment) may be any folder: a typo, or ``"."`` in somebody's ``pyproject.toml``. sgtrace writes
into it, and ``cache clear`` deletes from it, only when it is sgtrace's: it carries sgtrace's tag, or
it is new, empty or holds nothing but the parts sgtrace writes (an older sgtrace's cache), and is
then tagged. Nothing in a cache is followed through a symbolic link.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

#: The tag's file name and first line, from the Cache Directory Tagging Specification (backup tools skip such folders).
TAG_NAME = "CACHEDIR.TAG"
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
#: The line that tells sgtrace's tag from another tool's.
_OURS = b"# This file is a cache directory tag created by sgtrace."
TAG = SIGNATURE + b"\n" + _OURS + b"\n# For information about cache directory tags, see https://bford.info/cachedir/\n"

#: The parts of a cache that sgtrace writes (earlier layouts' included), the only ones ``clear`` removes.
PARTS = frozenset({"caps", "graph", "index", "manifest", "releases", "scan", "store"})

#: Folders judged in this process: folder -> whether it is sgtrace's cache.
_JUDGED: dict[Path, bool] = {}
#: Folders that could not be made or read: folder -> why.
_UNUSABLE: dict[Path, str] = {}


class NotACache(Exception):
    """The folder named as the cache is not sgtrace's; the message is one line."""


def is_tagged(directory: Path) -> bool:
    """Whether *directory* is a real folder holding sgtrace's own tag."""
    try:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return False
        handle = os.open(directory / TAG_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        head = os.read(handle, 512)
    finally:
        os.close(handle)
    return head.startswith(SIGNATURE) and _OURS in head


def claim(directory: Path) -> bool:
    """Whether sgtrace may use *directory* as its cache; a new, empty or sgtrace-only folder is tagged first."""
    directory = Path(os.path.abspath(directory))
    if directory not in _JUDGED:
        _JUDGED[directory] = _claim(directory)
    return _JUDGED[directory]


def _claim(directory: Path) -> bool:
    if is_tagged(directory):
        return True
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if directory.is_symlink():
            return False
        names = set(os.listdir(directory))
    except OSError as exc:
        _UNUSABLE[directory] = _why(directory, exc)
        return False
    if not names <= PARTS | {TAG_NAME}:
        return False  # somebody's folder: a project, a home, another tool's cache
    try:
        handle = os.open(directory / TAG_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return is_tagged(directory)  # another process tagged it meanwhile (or a foreign tag is there)
    except OSError:
        return not names - PARTS  # read-only: still usable for reading what an older sgtrace wrote
    try:
        os.write(handle, TAG)
    finally:
        os.close(handle)
    return True


def refusal(directory: Path) -> str:
    """Why *directory* is not used as the cache, in one line."""
    unusable = _UNUSABLE.get(Path(os.path.abspath(directory)))
    if unusable:
        return f"cannot use {directory} as the cache: {unusable}; name another folder with --cache-dir"
    return (
        f"{directory} is not an sgtrace cache (it holds other files and no CACHEDIR.TAG written by sgtrace); "
        "name a new or empty folder with --cache-dir"
    )


def _why(directory: Path, exc: OSError) -> str:
    """Why *directory* cannot be made or listed: a file where a folder should be, or the system's reason."""
    for folder in (directory, *directory.parents):
        if folder.exists() and not folder.is_dir():
            return "it is not a folder" if folder == directory else f"{folder} is not a folder"
    return exc.strerror or str(exc)


def real_folder(path: Path, top: Path) -> bool:
    """Whether *path* and every folder between it and *top* are real folders, not symbolic links."""
    current = Path(os.path.abspath(path))
    top = Path(os.path.abspath(top))
    while True:
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
        if current == top or current.parent == current:
            return current == top
        current = current.parent


def clear(directory: Path, keep: tuple[str, ...] = ()) -> int:
    """Remove sgtrace's parts of its cache except *keep*; the number of files removed.

    Raises NotACache for a folder without sgtrace's tag: nothing is removed from it. A symbolic link
    in the cache is removed as a link, never followed.
    """
    if not directory.exists():
        return 0
    if not is_tagged(directory):
        raise NotACache(
            refusal(directory).replace("; name a new or empty folder with --cache-dir", ": nothing removed")
        )
    removed = 0
    for name in sorted(PARTS - set(keep)):
        part = directory / name
        if part.is_symlink() or part.is_file():
            part.unlink(missing_ok=True)
            removed += 1
        elif part.is_dir():
            removed += count_files(part)
            shutil.rmtree(part, ignore_errors=True)  # rmtree removes links inside as links
    return removed


def count_files(folder: Path) -> int:
    """Files under *folder*, symbolic links not followed."""
    return sum(len(files) for _, _, files in os.walk(folder))


#: The parts that hold what sgtrace computed (pruned by age and size); fetched releases are left to ``cache clear``.
COMPUTED = ("caps", "graph", "index", "manifest", "scan", "store")
#: The size the computed parts are kept under by default: past it, the entries used longest ago go first.
BOUND = 2 << 30
#: How often a run checks the bound (a walk of the cache): at most once in this many seconds.
CHECK_EVERY = 3600
#: The file whose time says when the bound was last checked.
_CHECKED = Path("store") / "checked"


def entries(directory: Path) -> list[tuple[Path, int, float]]:
    """(path, bytes, last used) of every entry of the computed parts, links neither followed nor listed.

    "Last used" is the later of the access and modification times (the file system's ``relatime``
    updates the access time once a day at most).
    """
    found = []
    for name in COMPUTED:
        part = directory / name
        if part.is_symlink() or not part.is_dir():
            continue
        for folder, _, names in os.walk(part):
            for entry in names:
                path = Path(folder, entry)
                try:
                    status = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(status.st_mode):
                    found.append((path, status.st_size, max(status.st_atime, status.st_mtime)))
    return found


def prune(directory: Path, older_than: float | None = None, max_size: int | None = None) -> tuple[int, int]:
    """Remove the entries not used for *older_than* seconds, then the least recently used past *max_size* bytes.

    Only in a folder carrying sgtrace's tag (else nothing is removed); the number of files and bytes removed.
    """
    if not is_tagged(directory):
        return 0, 0
    found = sorted(entries(directory), key=lambda e: e[2])
    total = sum(size for _, size, _ in found)
    cutoff = time.time() - older_than if older_than is not None else None
    files = removed = 0
    for path, size, used in found:
        old = cutoff is not None and used < cutoff
        if not old and (max_size is None or total - removed <= max_size):
            break  # oldest first: the rest are newer and within the size
        try:
            path.unlink()
        except OSError:
            continue
        files, removed = files + 1, removed + size
    return files, removed


def tidy(directory: Path | None) -> None:
    """Keep the cache under BOUND: prune it if it was not checked in the last CHECK_EVERY seconds."""
    if directory is None or not is_tagged(directory):
        return
    marker = directory / _CHECKED
    try:
        if time.time() - os.lstat(marker).st_mtime < CHECK_EVERY:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    prune(directory, None, BOUND)
    if real_folder(marker.parent, directory):
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
            os.utime(marker, follow_symlinks=False)
        except OSError:
            pass
