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
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import IO

from sgtrace.cachedir import claim, refusal
from sgtrace.model import Limits
from sgtrace.registry import likely, nearest, pip_versions, same_version

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


class NoSuchPackage(FetchError):
    """The registry has no package of that name."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        #: The name the registry does not know.
        self.name = name


def is_spec(text: str) -> bool:
    """Whether *text* names a release (``sglang==0.5.9``) rather than a path."""
    return SPEC.match(text) is not None and not os.path.exists(text)


def release_dir(spec: str, cache_dir: Path, limits: Limits = Limits()) -> Path:
    """The unpacked source of *spec*, fetching it with pip on first use."""
    match = SPEC.match(spec)
    if match is None:
        raise FetchError(f"not a release spec (expected NAME==VERSION): {spec}")
    final = _entry(cache_dir, f"{match['name'].lower()}-{match['version']}")
    if final.is_dir():
        return final
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=_ensure(cache_dir)))
    try:
        wheel = _download(spec, work / "download")
        return _unpack_into(wheel, work / "tree", final, limits.unpacked_bytes)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def wheel_dir(wheel: Path, cache_dir: Path, limits: Limits = Limits()) -> Path:
    """The unpacked source of a local wheel file (for offline machines)."""
    digest = hashlib.blake2b(wheel.read_bytes(), digest_size=10).hexdigest()
    final = _entry(cache_dir, f"{wheel.stem}-{digest}")
    if final.is_dir():
        return final
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=_ensure(cache_dir)))
    try:
        return _unpack_into(wheel, work / "tree", final, limits.unpacked_bytes)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _entry(cache_dir: Path, name: str) -> Path:
    """Where an unpacked tree lives in the cache; an entry that is a symbolic link is refused, not followed."""
    final = cache_dir / "releases" / name
    if final.is_symlink() or (cache_dir / "releases").is_symlink():
        raise FetchError(f"the cache entry {final} is a symbolic link: not used (remove it)")
    return final


def installed_package(name: str) -> Path | None:
    """Directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _ensure(cache_dir: Path) -> Path:
    """The cache's ``releases`` folder, made if needed, in a folder that is sgtrace's cache."""
    directory = cache_dir / "releases"
    if not claim(cache_dir):
        raise FetchError(refusal(cache_dir))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create cache directory {directory}: {exc.strerror}") from exc
    return directory


#: Seconds one pip or git process may take before it is stopped (a download of the newest SGLang wheel
#: takes a few seconds; a registry that stops answering must not hang a CI job).
SUBPROCESS_TIMEOUT = 600.0


def _run(
    command: list[str],
    cwd: Path,
    feed: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run a helper process (pip, git) so that nothing of the folder sgtrace runs in, or of the tree, is run.

    It starts in *cwd* (a folder sgtrace made), with no input, within *timeout* (else SUBPROCESS_TIMEOUT). Python is
    started isolated (``-I``: neither the current folder nor the script's is put on ``sys.path``, no
    user site, no ``PYTHON*`` variables), so a ``pip.py``, ``sitecustomize.py`` or ``usercustomize.py``
    lying where sgtrace was started is never imported.
    """
    name = Path(command[0]).name
    try:
        limit = SUBPROCESS_TIMEOUT if timeout is None else timeout
        if feed is not None:
            return subprocess.run(command, cwd=cwd, capture_output=True, input=feed, timeout=limit, env=env)
        return subprocess.run(command, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        raise FetchError(f"{name} did not finish within {limit:.0f} s") from None
    except OSError as exc:
        raise FetchError(f"cannot run {name}: {exc.strerror}") from exc


def _download(spec: str, target: Path) -> Path:
    last = ""
    listed: list[str] | None = None  # the versions pip saw wheels of, when it says so
    for extra in _PLATFORM_RETRIES:
        command = [
            sys.executable, "-I", "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--no-input", "--quiet", "--dest", str(target), *extra, spec,
        ]  # fmt: skip
        proc = _run(command, target.parent)
        wheels = sorted(target.glob("*.whl")) if target.is_dir() else []
        if proc.returncode == 0 and wheels:
            return wheels[0]
        stderr = proc.stderr.decode("utf-8", "replace")
        last = _pip_error(stderr) or f"pip exited with code {proc.returncode}"
        versions = pip_versions(stderr)
        if versions is not None:
            listed = [*(listed or []), *versions]
    name, version = spec.split("==", 1)
    if listed is not None and not any(same_version(version, v) for v in listed):
        raise _not_offered(name, version, listed, _every_version(name, target.parent))
    raise FetchError(f"cannot fetch {spec}: {last}")


#: A version no release is spelt as (``===`` compares the strings): pip then lists every version it saw
#: and takes none, so nothing is downloaded and no sdist is built to read its metadata.
_NO_VERSION = "0+sgtrace.lists.versions"


def _every_version(name: str, scratch: Path) -> list[str]:
    """The versions the registry has of *name*, sdists' too (pip's error lists them)."""
    command = [
        sys.executable, "-I", "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--no-input",
        "--quiet", "--dest", str(scratch / "listed"), f"{name}==={_NO_VERSION}",
    ]  # fmt: skip
    return pip_versions(_run(command, scratch).stderr.decode("utf-8", "replace")) or []


def every_version(name: str, cache_dir: Path) -> list[str]:
    """The versions the registry lists of *name* (wheels' and sdists'), as pip lists them; [] when none."""
    with tempfile.TemporaryDirectory(prefix=".versions-", dir=_ensure(cache_dir)) as scratch:
        return _every_version(name, Path(scratch))


def _not_offered(name: str, version: str, wheels: list[str], everything: list[str]) -> FetchError:
    """Why the registry has no wheel of *name* *version*: no such package, an sdist only, or no such version."""
    spec = f"{name}=={version}"
    if any(same_version(version, v) for v in everything):
        return FetchError(
            f"cannot fetch {spec}: {name} {version} is on the registry as an sdist only, with no wheel; sgtrace "
            "takes wheels only (building an sdist would run its code): pass a .whl or a directory"
        )
    if not wheels and not everything:
        return NoSuchPackage(name, f"cannot fetch {spec}: the registry has no package named {name}")
    offered = wheels or everything
    close = likely(version, offered)
    near = nearest(version, offered)
    hint = f" (did you mean {close}?)" if close and close not in near else ""
    only = "" if wheels else f" ({name} has sdists only: sgtrace takes wheels)"
    return FetchError(
        f"cannot fetch {spec}: {name} has no version {version} on the registry; nearest: {', '.join(near)}{hint}{only}"
    )


def _pip_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1]


def _unpack_into(wheel: Path, tree: Path, final: Path, most: int) -> Path:
    """Unpack the wheel's ``.py`` files, at most *most* bytes in all (counted as written, not as declared)."""
    budget = _Budget(most, wheel.name)
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.infolist():
                relative = _safe_member(member)
                if relative is None:
                    continue
                budget.declare(member.file_size)
                destination = tree.joinpath(*relative.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(destination, "wb") as sink:
                    _copy(source, sink, budget)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise FetchError(f"cannot unpack {wheel.name}: {exc}") from exc
    return _publish(tree, final)


def _copy(source: IO[bytes], sink: IO[bytes], budget: _Budget) -> None:
    """Copy a member's bytes, counting them against the budget as they come."""
    while chunk := source.read(1 << 20):
        budget.spend(len(chunk))
        sink.write(chunk)


class _Budget:
    """Bytes an archive may unpack to; past them, one clear error (a small archive can expand a thousandfold)."""

    def __init__(self, most: int, name: str) -> None:
        self.left, self.most, self.name = most, most, name

    def declare(self, size: int) -> None:
        """A member's declared size, checked before any byte of it is written."""
        if size > self.left:
            self._exceeded()

    def spend(self, size: int) -> None:
        """Bytes actually written (a member may declare less than it holds)."""
        self.left -= size
        if self.left < 0:
            self._exceeded()

    def _exceeded(self) -> None:
        raise FetchError(
            f"{self.name} unpacks to more than {self.most / (1 << 20):.0f} MiB of source "
            "(--max-unpacked-size raises the bound)"
        )


def _publish(tree: Path, final: Path) -> Path:
    """Move an unpacked tree into the cache by rename, so that a partial tree is never seen."""
    tree.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(tree, final)
    except OSError:
        if not final.is_dir() or final.is_symlink():  # another process may have won the race; else a real failure
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


def git_tree(repository: str, revision: str, cache_dir: Path, limits: Limits = Limits()) -> Path:
    """The ``.py`` and packaging files of *repository* at *revision*, unpacked into the cache once.

    Read as git's raw objects (``ls-tree``, ``cat-file --batch``): no filter, attribute, hook or other
    program a repository's configuration names is run (``git archive`` would run a ``smudge`` filter).
    """
    sha = commit(repository, revision)
    final = _entry(cache_dir, f"git-{sha}-{_GIT_LAYOUT}")
    if final.is_dir():
        return final
    budget = _Budget(limits.unpacked_bytes, f"{revision} of {repository}")
    wanted: list[tuple[PurePosixPath, str]] = []
    for row in _git(repository, "ls-tree", "-r", "-z", "--long", "--full-tree", sha).split(b"\0"):
        meta, _, name = row.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4 or fields[0] not in (b"100644", b"100755") or fields[1] != b"blob":
            continue  # links, submodules and trees are not files of the tree
        path = PurePosixPath(os.fsdecode(name))
        if not _kept(path) or path.is_absolute() or ".." in path.parts:
            continue
        budget.spend(int(fields[3]))
        wanted.append((path, fields[2].decode("ascii")))
    contents = _git_blobs(repository, [blob for _, blob in wanted])
    work = Path(tempfile.mkdtemp(prefix=".git-", dir=_ensure(cache_dir)))
    try:
        tree = work / "tree"
        for path, blob in wanted:
            destination = tree.joinpath(*path.parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(contents[blob])
        return _publish(tree, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _git_blobs(repository: str, blobs: list[str]) -> dict[str, bytes]:
    """The raw contents of *blobs* (``git cat-file --batch``: no filter, no text conversion)."""
    if not blobs:
        return {}
    output = _git(repository, "cat-file", "--batch", feed="".join(f"{b}\n" for b in blobs).encode())
    found: dict[str, bytes] = {}
    at = 0
    while at < len(output):
        end = output.index(b"\n", at)
        header = output[at:end].split()
        if len(header) != 3:
            raise FetchError(f"git cat-file gave an unexpected answer in {repository}: {header[:2]!r}")
        size = int(header[2])
        found[header[0].decode("ascii")] = output[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


#: Settings given to every git process on its command line, where they win over the repository's own
#: configuration: every program a configuration can name is turned off (a repository handed over as a
#: folder carries its own ``.git/config``; hooks, filters and text conversions are not run by the
#: commands sgtrace uses, and are turned off all the same).
_GIT_SAFE = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=false",
    "core.sshCommand=false", "core.gitProxy=false", "core.askPass=false", "core.alternateRefsCommand=false",
    "credential.helper=", "diff.external=", "gpg.program=false", "gpg.ssh.program=false", "gpg.x509.program=false",
    "sequence.editor=false", "uploadpack.packObjectsHook=", "protocol.allow=never", "core.attributesFile=/dev/null",
)  # fmt: skip


def _git_environment() -> dict[str, str]:
    """The environment of a git process: no ``GIT_*`` of the caller's, no system or user configuration,
    no prompt, no pager, and no replacement objects."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in ("PAGER", "EDITOR", "VISUAL")}
    return {
        **kept,
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_OPTIONAL_LOCKS": "0",
    }  # fmt: skip


def _git(repository: str, *arguments: str, feed: bytes | None = None) -> bytes:
    settings = [item for setting in _GIT_SAFE for item in ("-c", setting)]
    command = ["git", "--no-pager", *settings, "-C", os.path.abspath(repository), *arguments]
    with tempfile.TemporaryDirectory(prefix="sgtrace-git-") as scratch:
        proc = _run(command, Path(scratch), feed, _git_environment())
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise FetchError(f"git {arguments[0]} failed in {repository}: {message[-1] if message else proc.returncode}")
    return proc.stdout


def git_read(repository: str, *arguments: str, timeout: float = 10.0, overrides: Sequence[str] = ()) -> bytes | None:
    """What a git command prints in *repository*, run as :func:`_git` runs it (with *overrides*, more
    ``name=value`` settings, besides) but within *timeout*; None when git is missing, fails (not a
    repository, no such revision) or takes longer."""
    settings = [item for setting in (*_GIT_SAFE, *overrides) for item in ("-c", setting)]
    command = ["git", "--no-pager", *settings, "-C", os.path.abspath(repository), *arguments]
    try:
        with tempfile.TemporaryDirectory(prefix="sgtrace-git-") as scratch:
            proc = _run(command, Path(scratch), None, _git_environment(), timeout)
    except FetchError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def commit(repository: str, revision: str) -> str:
    """The commit *revision* names in *repository*; a FetchError that names it when there is none."""
    try:
        return _git(repository, "rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}").decode().strip()
    except FetchError as exc:
        raise FetchError(f"no commit {revision} in {repository} ({exc})") from None


def tags(repository: str) -> dict[str, tuple[str, ...]]:
    """commit -> the tags that point at it (annotated tags by the commit they tag)."""
    found: dict[str, list[str]] = {}
    listed = _git(repository, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname:short)", "refs/tags")
    for line in listed.decode("utf-8", "replace").splitlines():
        fields = line.split()
        if len(fields) == 3:
            found.setdefault(fields[1], []).append(fields[2])
        elif len(fields) == 2:
            found.setdefault(fields[0], []).append(fields[1])
    return {sha: tuple(sorted(names)) for sha, names in found.items()}


def files_at(repository: str, revision: str) -> list[str]:
    """The paths of the files of *revision*, relative to the repository's top."""
    listed = _git(repository, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options", revision)
    return [os.fsdecode(name) for name in listed.split(b"\0") if name]
