"""Stage 1 (sources): turn ``name==version`` or a wheel file into a source tree on disk.

Only the named package is fetched (``pip download --no-deps``), only wheels
are accepted (an sdist would have to run its build backend), and only the
``.py`` members of the wheel are unpacked: nothing is installed, imported or
run. The tree lands in the cache by rename, so a partial download is never
seen.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

#: ``name==version``, as pip spells a pinned requirement.
SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9][A-Za-z0-9.+!_-]*)$")

#: Extra pip options tried, in order, when no wheel matches this interpreter:
#: release wheels of SGLang are sometimes built for one CPython only, and the
#: source inside does not depend on the platform.
_PLATFORM_RETRIES: tuple[tuple[str, ...], ...] = (
    (),
    (
        "--python-version", "3.11", "--implementation", "cp",
        "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64",
        "--platform", "manylinux2014_x86_64", "--platform", "any",
    ),
)  # fmt: skip


class FetchError(Exception):
    """A release could not be fetched or unpacked; the message is one line."""


def is_spec(text: str) -> bool:
    """Whether *text* names a release (``sglang==0.5.9``) rather than a path."""
    return SPEC.match(text) is not None and not os.path.exists(text)


def release_dir(spec: str, cache_dir: Path) -> Path:
    """The unpacked source of *spec*, fetching it with pip on first use."""
    match = SPEC.match(spec)
    if match is None:
        raise FetchError(f"not a release spec (expected NAME==VERSION): {spec}")
    final = cache_dir / "releases" / f"{match['name'].lower()}-{match['version']}"
    if final.is_dir():
        return final
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=_ensure(cache_dir / "releases")))
    try:
        wheel = _download(spec, work / "download")
        return _unpack_into(wheel, work / "tree", final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def wheel_dir(wheel: Path, cache_dir: Path) -> Path:
    """The unpacked source of a local wheel file (for offline machines)."""
    digest = hashlib.blake2b(wheel.read_bytes(), digest_size=10).hexdigest()
    final = cache_dir / "releases" / f"{wheel.stem}-{digest}"
    if final.is_dir():
        return final
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=_ensure(cache_dir / "releases")))
    try:
        return _unpack_into(wheel, work / "tree", final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def installed_package(name: str) -> Path | None:
    """Directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _ensure(directory: Path) -> Path:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create cache directory {directory}: {exc.strerror}") from exc
    return directory


def _download(spec: str, target: Path) -> Path:
    last = ""
    for extra in _PLATFORM_RETRIES:
        command = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--no-input", "--quiet", "--dest", str(target), *extra, spec,
        ]  # fmt: skip
        proc = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wheels = sorted(target.glob("*.whl")) if target.is_dir() else []
        if proc.returncode == 0 and wheels:
            return wheels[0]
        last = _pip_error(proc.stderr) or f"pip exited with code {proc.returncode}"
    if "no matching distribution" in last.lower() or "could not find a version" in last.lower():
        last += " (sgtrace takes wheels only: building an sdist would run its code; pass a .whl or a directory)"
    raise FetchError(f"cannot fetch {spec}: {last}")


def _pip_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1]


def _unpack_into(wheel: Path, tree: Path, final: Path) -> Path:
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.infolist():
                relative = _safe_member(member)
                if relative is None:
                    continue
                destination = tree.joinpath(*relative.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise FetchError(f"cannot unpack {wheel.name}: {exc}") from exc
    tree.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(tree, final)
    except OSError:
        if not final.is_dir():  # another process may have won the race; else it is a real failure
            raise FetchError(f"cannot move the unpacked tree into {final}") from None
    return final


def _safe_member(member: zipfile.ZipInfo) -> PurePosixPath | None:
    """The member's relative path if it is a plain ``.py`` file inside the archive."""
    name = member.filename
    if member.is_dir() or not name.endswith(".py"):
        return None
    if (member.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        return None
    return path


#: Bumped when what a revision's tree keeps changes (old trees in the cache are then not reused).
_GIT_LAYOUT = "2"


def _kept(path: PurePosixPath) -> bool:
    """A revision's tree keeps Python files and the packaging files that name its import roots."""
    return path.suffix == ".py" or path.name in ("pyproject.toml", "setup.cfg")


def git_tree(repository: str, revision: str, cache_dir: Path) -> Path:
    """The ``.py`` and packaging files of *repository* at *revision* (``git archive``), unpacked into the cache once."""
    sha = _git(repository, "rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    final = cache_dir / "releases" / f"git-{sha}-{_GIT_LAYOUT}"
    if final.is_dir():
        return final
    archive = _git(repository, "archive", "--format=tar", sha)
    work = Path(tempfile.mkdtemp(prefix=".git-", dir=_ensure(cache_dir / "releases")))
    try:
        tree = work / "tree"
        with tarfile.open(fileobj=io.BytesIO(archive)) as bundle:
            for member in bundle.getmembers():
                path = PurePosixPath(member.name)
                if not member.isfile() or not _kept(path) or path.is_absolute() or ".." in path.parts:
                    continue
                source = bundle.extractfile(member)
                if source is None:
                    continue
                destination = tree.joinpath(*path.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(source.read())
        tree.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tree, final)
        except OSError:
            if not final.is_dir():
                raise FetchError(f"cannot move the tree of {revision} into {final}") from None
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _git(repository: str, *arguments: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", repository, *arguments], capture_output=True, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise FetchError(f"cannot run git: {exc.strerror}") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise FetchError(f"git {arguments[0]} failed in {repository}: {message[-1] if message else proc.returncode}")
    return proc.stdout
