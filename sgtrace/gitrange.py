"""Stage 1 (sources): the commits of a checkout a ``history --git LOW..HIGH`` stops at, read from git.

The stops are both ends (always), the first-parent commits between them that touch a file the slice reads,
the first-parent commits that carry a tag, and the commits where a tagged release branch leaves the line
(SGLang tags its releases on release branches, off main's first-parent line). What the range cannot show
(a shallow clone's missing history, a work tree's uncommitted changes, an end off the line) is said as data
beside the stops. Every git process is run as :func:`sgtrace.fetch.git_read` runs it: nothing a
repository's configuration names is run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sgtrace.fetch import FetchError, commit, git_read, tags
from sgtrace.identity import GIT_SECONDS, changed_paths

#: Why a commit is a stop of the range.
END, SLICE, TAG, BASE = "end", "slice", "tag", "base"


@dataclass(frozen=True, slots=True)
class RangeStop:
    """One commit a git range stops at."""

    #: The commit (full sha).
    commit: str
    #: Its subject line.
    subject: str
    #: Why it is a stop: ``end``, ``slice`` (it touches a file the slice reads), ``tag`` or ``base``.
    why: str
    #: The tags on the commit.
    tags: tuple[str, ...] = ()
    #: The tags whose release branch leaves the first-parent line at this commit (see :class:`OffLine`).
    bases: tuple[str, ...] = ()
    #: How the command line named it, when it is an end named other than by a tag or its sha (``HEAD``, ``main~3``).
    named: str = ""
    #: Whether it is a merge (its step brings in the whole branch merged, as one step).
    merge: bool = False
    #: ``git describe --tags`` of it; None where no tag is reachable.
    describe: str | None = None


@dataclass(frozen=True, slots=True)
class OffLine:
    """A tag whose commit is on a branch off the first-parent line (a release branch): shown at its base."""

    #: The tag.
    tag: str
    #: The commit it tags.
    commit: str
    #: The commit of the line its branch leaves from (``git merge-base`` of the tag and HIGH).
    base: str
    #: Commits on its branch after the base.
    commits: int
    #: How many of them touch a file the slice reads.
    touching: int


@dataclass(frozen=True, slots=True)
class GitRange:
    """The stops of ``LOW..HIGH`` and what the range cannot show."""

    #: The range as given.
    text: str
    #: The stops, oldest first: LOW first, HIGH last.
    stops: tuple[RangeStop, ...]
    #: How many first-parent commits the range holds after LOW.
    commits: int
    #: Tags off the line, shown at their bases.
    off_line: tuple[OffLine, ...] = ()
    #: When LOW is not on HIGH's first-parent line: the commit the line leaves LOW's history at (None if unrelated).
    low_base: str | None = None
    #: Whether LOW is off HIGH's first-parent line (a release branch's tag, a merged branch's commit).
    low_off_line: bool = False
    #: A shallow clone's boundary: the commits whose parents it does not have, newest first (empty when whole).
    shallow: tuple[str, ...] = ()
    #: The date of the newest of them (``YYYY-MM-DD``), "" when whole.
    shallow_since: str = ""
    #: The boundary commit HIGH's line stops at before it meets LOW's history (None when it meets it).
    cut: str | None = None
    #: Whether HEAD is detached (named only when an end is HEAD).
    detached: bool = False
    #: The files the slice reads that the work tree changes, when HIGH is the commit checked out.
    dirty: tuple[str, ...] = ()


def _ends(text: str) -> tuple[str, str]:
    """LOW and HIGH of ``LOW..HIGH`` as git takes them (an empty side is HEAD)."""
    low, _, high = text.partition("..")
    return low or "HEAD", high or "HEAD"


def resolve_range(repository: str, text: str, slice_paths: Callable[[str, str], Sequence[str]]) -> GitRange:
    """The stops of *text* (``LOW..HIGH``) in *repository*; *slice_paths* gives the repository's files the
    slice reads at either end (it is given the two commits, once they are known to make a range).

    A FetchError names what is wrong: an end with no commit (in a shallow clone, with how to fetch more),
    two ends that are one commit, or a HIGH older than LOW.
    """
    low_name, high_name = _ends(text)
    top = _text(git_read(repository, "rev-parse", "--show-toplevel", timeout=GIT_SECONDS))
    repository = top or repository  # the paths are the top's (a bare repository has none)
    shallow = _shallow(repository)
    low, high = _commit(repository, low_name, shallow), _commit(repository, high_name, shallow)
    if low == high:
        raise FetchError(f"{text}: both ends are the commit {low[:10]}; a history needs two commits")
    if _is_ancestor(repository, high, low):
        raise FetchError(
            f"{text}: {high_name} is older than {low_name} (an ancestor of it); name it {high_name}..{low_name}"
        )
    paths = slice_paths(low, high)
    line = _line(repository, low, high)
    touching = set(_listed(repository, "log", "--first-parent", "--format=%H", f"{low}..{high}", "--", *paths))
    tagged = tags(repository)
    base = line[0][1][0] if line and line[0][1] else None
    # a branch leaving the line at one of its commits contains the line's first commit (or LOW, leaving at it)
    first = low if base == low else line[0][0] if line else None
    off = _off_line(repository, high, base if base == low else None, first, {sha for sha, _, _ in line}, paths)
    bases: dict[str, list[str]] = {}
    for found in off:
        bases.setdefault(found.base, []).append(found.tag)
    head = _text(git_read(repository, "rev-parse", "--verify", "HEAD^{commit}", timeout=GIT_SECONDS))
    stops = [_stop(repository, low, END, tagged, bases, low_name, head)]
    for sha, parents, subject in line:
        why = _why(sha, high, touching, tagged, bases)
        if why:
            named = high_name if sha == high else ""
            stops.append(_stop(repository, sha, why, tagged, bases, named, head, subject, len(parents) > 1))
    detached = "HEAD" in (low_name, high_name) and git_read(repository, "symbolic-ref", "-q", "HEAD") is None
    stops = _described(repository, stops)
    cut = line[0][0] if line and not line[0][1] and line[0][0] in shallow else None
    return GitRange(
        text, tuple(stops), len(line), off, base if base != low else None, base != low, shallow,
        _since(repository, shallow), cut, detached, _dirty(repository, high, head, paths),
    )  # fmt: skip


def _why(sha: str, high: str, touching: set[str], tagged: Mapping[str, object], bases: Mapping[str, object]) -> str:
    """Why a commit of the line is a stop ("" when it is not one)."""
    if sha == high:
        return END
    return SLICE if sha in touching else TAG if sha in tagged else BASE if sha in bases else ""


def _commit(repository: str, name: str, shallow: tuple[str, ...]) -> str:
    """The commit *name* names; in a shallow clone, the error says how to fetch the history it lacks."""
    try:
        return commit(repository, name)
    except FetchError as exc:
        if not shallow:
            raise
        raise FetchError(
            f"{exc}: the clone is shallow (its history stops at {shallow[0][:10]}); fetch more of it "
            "(git fetch --unshallow, or --deepen N, and --tags) or name a later commit"
        ) from None


def _line(repository: str, low: str, high: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(commit, parents, subject) of HIGH's first-parent commits after LOW, oldest first."""
    found = []
    for row in _listed(repository, "log", "--first-parent", "--reverse", "--format=%H%x1f%P%x1f%s", f"{low}..{high}"):
        sha, parents, subject = (row.split("\x1f") + ["", ""])[:3]
        found.append((sha, tuple(parents.split()), subject))
    return found


def _off_line(
    repository: str, high: str, low: str | None, first: str | None, line: set[str], paths: Sequence[str]
) -> tuple[OffLine, ...]:
    """The tags whose commit HIGH does not reach but whose branch leaves the line within the range (at a line
    commit, or at LOW when LOW is on the line): a release branch's tags, each at the commit it branches from.
    Only the tags that contain *first* (the oldest commit a branch can leave from) are looked at."""
    within = ["--contains", first] if first else []
    candidates = _listed(
        repository, "for-each-ref", "--format=%(refname:short)%1f%(objectname)%1f%(*objectname)", "--no-merged", high,
        "--no-contains", high, *within, "refs/tags",
    )  # fmt: skip
    found = []
    for row in candidates:
        name, obj, peeled = (row.split("\x1f") + ["", ""])[:3]
        tagged = peeled or obj
        fork = _text(git_read(repository, "merge-base", tagged, high, timeout=GIT_SECONDS))
        if fork is None or not (fork in line or fork == low):
            continue
        count = len(_listed(repository, "rev-list", f"{fork}..{tagged}"))
        touching = len(_listed(repository, "rev-list", f"{fork}..{tagged}", "--", *paths)) if paths else 0
        found.append(OffLine(name, tagged, fork, count, touching))
    return tuple(sorted(found, key=lambda item: item.tag))


def _stop(
    repository: str,
    sha: str,
    why: str,
    tagged: dict[str, tuple[str, ...]],
    bases: dict[str, list[str]],
    named: str,
    head: str | None,
    subject: str | None = None,
    merge: bool | None = None,
) -> RangeStop:
    """A stop, with its tags, the release branches based on it, how it was named and its ``describe``."""
    if subject is None or merge is None:
        row = _listed(repository, "log", "-1", "--format=%P%x1f%s", sha)
        parents, _, subject = (row[0] if row else "\x1f").partition("\x1f")
        merge = len(parents.split()) > 1
    on = tagged.get(sha, ())
    shown = "" if not named or named in on or sha.startswith(named) else named
    if shown == "HEAD" and head == sha and git_read(repository, "symbolic-ref", "-q", "HEAD") is None:
        shown = "HEAD, detached"
    return RangeStop(sha, subject, why, on, tuple(sorted(bases.get(sha, ()))), shown, merge)


def _described(repository: str, stops: list[RangeStop]) -> list[RangeStop]:
    """*stops* with their ``git describe --tags``, asked in one process (``--always`` answers a commit no tag
    reaches with its short sha: that is no describe)."""
    if not stops:
        return stops
    output = git_read(repository, "describe", "--tags", "--always", *(stop.commit for stop in stops), timeout=60.0)
    said = output.decode("utf-8", "replace").split() if output is not None else []
    if len(said) != len(stops):  # git could not say: no describe, as identity has none when git cannot say
        return stops
    return [
        dataclasses.replace(stop, describe=None if stop.commit.startswith(name) else name)
        for stop, name in zip(stops, said, strict=True)
    ]


def _is_ancestor(repository: str, older: str, newer: str) -> bool:
    return git_read(repository, "merge-base", "--is-ancestor", older, newer, timeout=GIT_SECONDS) is not None


def _shallow(repository: str) -> tuple[str, ...]:
    """The boundary commits of a shallow clone (git's ``shallow`` file), empty for a whole one."""
    if _text(git_read(repository, "rev-parse", "--is-shallow-repository", timeout=GIT_SECONDS)) != "true":
        return ()
    where = _text(git_read(repository, "rev-parse", "--path-format=absolute", "--git-path", "shallow"))
    try:
        listed = Path(where).read_text(encoding="ascii").split() if where else []
    except (OSError, UnicodeDecodeError):
        return ()
    newest = _text(git_read(repository, "log", "--no-walk", "--format=%H", *listed)) if listed else None
    return tuple(newest.split()) if newest else tuple(sorted(listed))


def _since(repository: str, shallow: tuple[str, ...]) -> str:
    """The date of the newest boundary commit of a shallow clone."""
    return (
        _text(git_read(repository, "log", "-1", "--format=%cs", shallow[0], timeout=GIT_SECONDS)) or ""
        if shallow
        else ""
    )


def _dirty(repository: str, high: str, head: str | None, paths: Sequence[str]) -> tuple[str, ...]:
    """The files of *paths* the work tree changes, when HIGH is the commit checked out (else none)."""
    if head != high:
        return ()
    changed = set(changed_paths(Path(repository)) or ())
    return tuple(sorted(changed & set(paths)))


def _listed(repository: str, *arguments: str) -> list[str]:
    """The lines a git command prints; a FetchError when it fails."""
    output = git_read(repository, *arguments, timeout=60.0)
    if output is None:
        raise FetchError(f"git {arguments[0]} failed in {os.path.abspath(repository)}")
    return [line for line in output.decode("utf-8", "replace").splitlines() if line]


def _text(output: bytes | None) -> str | None:
    text = output.decode("utf-8", "replace").strip() if output is not None else ""
    return text or None
