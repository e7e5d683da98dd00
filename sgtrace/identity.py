"""Which code a tree is: a release by its spec and version, a checkout by its commit, its tag and its state.

Read as data: git's answers (each within :data:`GIT_SECONDS`, every program a repository's configuration
names turned off, see :func:`sgtrace.fetch.git_read`) and the version its packaging files spell. Nothing
of the tree is imported or run.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from sgtrace.discover import git_top, package_at
from sgtrace.fetch import git_read
from sgtrace.model import TreeIdentity, TreeOrder
from sgtrace.sources import DEFAULT_PACKAGE, Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Seconds one git question may take (a ``git status`` of SGLang's checkout takes a few hundredths).
GIT_SECONDS = 10.0
#: The most of a packaging or version file read.
_READ_BYTES = 1 << 20
#: ``__version__ = "0.5.9"`` (or ``version``), as a version file spells it.
_VERSION = re.compile(r"""^_{0,2}version_{0,2}\s*(?::\s*str\s*)?=\s*['"]([^'"\n]+)['"]""", re.MULTILINE)


def identify(target: Target) -> TreeIdentity:
    """The identity of a resolved tree (git is asked only about a folder inside a checkout that tracks it)."""
    root = os.path.abspath(target.path)
    if target.kind == "release":
        return TreeIdentity(target.display, root, "release", version=_release_version(target), spec=target.spec)
    if target.repository is not None and target.revision is not None:
        return _revision(target, root)
    if target.kind == "sample":
        return TreeIdentity(target.display, root, "sample", version=version_of(Path(root)))
    top = git_top(Path(root))
    if top is not None and _tracks(top, Path(root)):
        return _checkout(target, top)
    return TreeIdentity(target.display, root, target.kind, version=version_of(Path(root)))


def _release_version(target: Target) -> str | None:
    """A spec's version, or a wheel's (its file name's second part), or what its packaging says."""
    if target.spec is not None:
        return target.spec.partition("==")[2] or None
    parts = Path(target.display).name.split("-")
    if len(parts) >= 3 and target.display.endswith(".whl"):
        return parts[1]
    return version_of(Path(target.path))


def _revision(target: Target, root: str) -> TreeIdentity:
    """A revision of a checkout, read from git's objects: its commit and tag; nothing of a work tree."""
    assert target.repository is not None and target.revision is not None
    top = git_top(Path(target.repository)) or Path(target.repository)
    sha = _text(git_read(str(top), "rev-parse", "--verify", "--end-of-options", f"{target.revision}^{{commit}}"))
    return TreeIdentity(
        target.display,
        str(top.resolve()),
        "checkout",
        commit=sha,
        describe=_describe(top, sha) if sha else None,
        version=version_of(Path(root)),
    )


def _checkout(target: Target, top: Path) -> TreeIdentity:
    """A folder of a git checkout: HEAD's commit and tag, the version, and how the work tree differs."""
    read = Path(target.path).resolve()
    subject = package_at(read, DEFAULT_PACKAGE) or read
    sha = _text(git_read(str(top), "rev-parse", "--verify", "HEAD^{commit}"))
    dirty, files = _changes(top, subject)
    return TreeIdentity(
        target.display,
        str(top.resolve()),
        "checkout",
        commit=sha,
        describe=_describe(top, sha) if sha else None,
        version=version_of(read, top),
        dirty=dirty,
        dirty_files=files,
    )


def _tracks(top: Path, folder: Path) -> bool:
    """Whether git tracks a file under *folder* (an ignored folder in a checkout, a virtual environment's
    site-packages, is not the checkout's code)."""
    relative = _relative(folder.resolve(), top.resolve())
    if relative is None:
        return False
    listed = git_read(str(top), "ls-files", "-z", "--", relative or ".", timeout=GIT_SECONDS)
    return bool(listed)


def _describe(top: Path, sha: str) -> str | None:
    """``git describe --tags`` of *sha*: the nearest tag and the commits since; None where none is reachable."""
    return _text(git_read(str(top), "describe", "--tags", sha, timeout=GIT_SECONDS))


def _changes(top: Path, subject: Path) -> tuple[bool, int]:
    """Whether the work tree differs from HEAD at all, and how many ``.py`` files under *subject* differ."""
    changed = changed_paths(top)
    if changed is None:
        return False, 0
    under = _relative(subject.resolve(), top.resolve())
    inside = [p for p in changed if p.endswith(".py") and (not under or p == under or p.startswith(under + "/"))]
    return bool(changed), len(inside)


def changed_paths(top: Path) -> list[str] | None:
    """The paths (from the checkout's top) the work tree changes, adds or does not track yet; None when git
    cannot say (not a work tree)."""
    status = git_read(
        str(top), "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all",
        timeout=GIT_SECONDS, overrides=_no_filters(top),
    )  # fmt: skip
    return None if status is None else _porcelain_paths(status)


def _no_filters(top: Path) -> list[str]:
    """Settings that empty every filter driver the repository's configuration names: ``git status`` passes
    a changed file whose size is unchanged through its ``clean`` filter to compare it, a program the
    repository chose (an empty driver is no filter; git then compares the bytes as they are)."""
    listed = git_read(str(top), "config", "--name-only", "-z", "--get-regexp", r"^filter\.", timeout=GIT_SECONDS)
    drivers = {name.rpartition(".")[0] for name in os.fsdecode(listed or b"").split("\0") if name.count(".") >= 2}
    return [f"{driver}.{key}=" for driver in sorted(drivers) for key in ("clean", "smudge", "process")] + [
        f"{driver}.required=false" for driver in sorted(drivers)
    ]


def _porcelain_paths(status: bytes) -> list[str]:
    """The paths ``git status --porcelain -z`` names (a rename's new path; its old one follows it, skipped)."""
    entries = status.split(b"\0")
    paths: list[str] = []
    at = 0
    while at < len(entries):
        entry = entries[at]
        at += 1
        if len(entry) < 4:
            continue
        if entry[:1] in (b"R", b"C"):
            at += 1
        paths.append(os.fsdecode(entry[3:]))
    return paths


def _relative(path: Path, top: Path) -> str | None:
    """*path* below *top* as git names it (POSIX, "" for the top itself); None when it is not below it."""
    try:
        return "/".join(path.relative_to(top).parts)
    except ValueError:
        return None


def version_of(folder: Path, top: Path | None = None) -> str | None:
    """The version the tree's packaging gives: a static ``[project] version`` of a ``pyproject.toml`` (in the
    folder, its ``python/``, or the checkout's top), else the ``__version__`` its package's ``version.py``
    spells; None when neither says."""
    places = [folder, folder / "python"]
    if top is not None:
        places += [top, top / "python"]
    for place in places:
        found = _pyproject_version(place / "pyproject.toml")
        if found:
            return found
    for place in (folder, folder / "python"):
        package = package_at(place, DEFAULT_PACKAGE)
        for candidate in ([package / "version.py"] if package else []) + [place / "version.py"]:
            found = _literal_version(candidate)
            if found:
                return found
    return None


def _pyproject_version(path: Path) -> str | None:
    text = _read(path)
    if text is None:
        return None
    try:
        project = tomllib.loads(text).get("project", {})
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    version = project.get("version") if isinstance(project, dict) else None
    return version if isinstance(version, str) and version else None


def _literal_version(path: Path) -> str | None:
    text = _read(path)
    found = _VERSION.search(text) if text is not None else None
    return found.group(1) if found else None


def _read(path: Path) -> str | None:
    """The text of a small regular file, None when there is none (a FIFO is never opened)."""
    try:
        if not path.is_file():
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(_READ_BYTES)
    except OSError:
        return None


def _text(output: bytes | None) -> str | None:
    text = output.decode("utf-8", "replace").strip() if output is not None else ""
    return text or None


def order(old: TreeIdentity | None, new: TreeIdentity | None) -> TreeOrder | None:
    """Whether NEW is older than OLD: by ancestry for two commits one repository holds, else by version when
    both have one; None when neither tells (the same commit, unrelated histories, no version)."""
    if old is None or new is None:
        return None
    if old.commit and new.commit and old.commit != new.commit:
        found = _by_ancestry(old, new)
        if found is not None:
            return found
    if old.version and new.version:
        before, after = _version_keys(old.version, new.version)
        if before != after:
            return TreeOrder(after < before, "version", old.version, new.version)
    return None


def _by_ancestry(old: TreeIdentity, new: TreeIdentity) -> TreeOrder | None:
    """NEW before OLD when NEW's commit is an ancestor of OLD's in OLD's repository (and the other way)."""
    assert old.commit is not None and new.commit is not None
    holding = [r for r in (old.root, new.root) if os.path.isdir(r) and _holds(r, old.commit) and _holds(r, new.commit)]
    if not holding:
        return None
    repository = holding[0]
    if git_read(repository, "merge-base", "--is-ancestor", new.commit, old.commit, timeout=GIT_SECONDS) is not None:
        return TreeOrder(True, "ancestry", old.commit, new.commit)
    if git_read(repository, "merge-base", "--is-ancestor", old.commit, new.commit, timeout=GIT_SECONDS) is not None:
        return TreeOrder(False, "ancestry", old.commit, new.commit)
    return None


def as_dict(tree: TreeIdentity) -> dict[str, Any]:
    """The identity as JSON writes it (the ``"tree"`` field of an answer, a baseline's record of its tree)."""
    return {
        "display": tree.display, "root": tree.root, "kind": tree.kind, "commit": tree.commit,
        "describe": tree.describe, "version": tree.version, "spec": tree.spec, "dirty": tree.dirty,
        "dirty_files": tree.dirty_files,
    }  # fmt: skip


def from_dict(record: object) -> TreeIdentity:
    """An identity :func:`as_dict` wrote; ValueError naming the field that is not of its type."""
    if not isinstance(record, dict):
        raise ValueError("tree: an object")
    texts = {name: record.get(name) for name in ("display", "root", "kind")}
    optional = {name: record.get(name) for name in ("commit", "describe", "version", "spec")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise ValueError(f"tree.{name}: a string")
    for name, value in optional.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"tree.{name}: a string or null")
    dirty, files = record.get("dirty", False), record.get("dirty_files", 0)
    if not isinstance(dirty, bool):
        raise ValueError("tree.dirty: true or false")
    if not isinstance(files, int) or isinstance(files, bool) or files < 0:
        raise ValueError("tree.dirty_files: a count")
    return TreeIdentity(**texts, **optional, dirty=dirty, dirty_files=files)  # type: ignore[arg-type]


def _holds(repository: str, sha: str) -> bool:
    """Whether *repository* has the commit *sha*."""
    return git_read(repository, "cat-file", "-e", f"{sha}^{{commit}}", timeout=GIT_SECONDS) is not None


def _version_keys(one: str, other: str) -> tuple[Any, Any]:
    """Two versions' order keys: packaging's when it reads both, else their numbers in turn (``0.5.10`` after
    ``0.5.9``)."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging is everywhere pip is
        return _numbers(one), _numbers(other)
    try:
        return Version(one), Version(other)
    except InvalidVersion:
        return _numbers(one), _numbers(other)


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))
