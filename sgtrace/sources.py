"""Stage 1 (sources): what tree a command analyses, given a path, a spec, a wheel or nothing."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sgtrace.discover import git_top, package_at, printable
from sgtrace.fetch import (
    SPEC,
    FetchError,
    NoSuchPackage,
    every_version,
    git_tree,
    installed_package,
    is_spec,
    release_dir,
    wheel_dir,
)
from sgtrace.model import Limits, TreeIdentity
from sgtrace.registry import between, spec_hint, version_key

#: The package analysed when no path is given, if it is installed.
DEFAULT_PACKAGE = "sglang"


@dataclass(frozen=True, slots=True)
class Target:
    """A tree to analyse."""

    #: Directory or file on disk.
    path: str
    #: How to name it to the user (the path or spec as given).
    display: str
    #: Why this tree was chosen, when the user did not name it; else None.
    note: str | None = None
    #: What it is: ``release`` (a spec or a wheel), ``installed``, ``sample``, else ``folder`` (a checkout is
    #: told by :func:`sgtrace.identity.identify`).
    kind: str = "folder"
    #: The release spec (``sglang==0.5.9``) when it is one.
    spec: str | None = None
    #: The checkout a revision was read from (``--git``), and the revision as given; else None.
    repository: str | None = None
    revision: str | None = None
    #: Which code it is (its commit, version, state), once :func:`sgtrace.identity.identify` has read it.
    identity: TreeIdentity | None = None


def sample_tree() -> Path:
    """The small SGLang-shaped sample shipped inside sgtrace."""
    return Path(str(resources.files("sgtrace") / "sample"))


def resolve(
    target: str | None, cache_dir: Path, git: str | None = None, limits: Limits = Limits(), sample: bool = True
) -> Target:
    """Turn the command line's PATH|SPEC (or its absence, or a revision of *git*) into a tree on disk.

    With no PATH|SPEC: the git checkout holding the current folder if it holds the package, else the installed
    package, else the sample tree -- or, without *sample*, a FetchError asking for one. Raises FetchError for a
    spec or revision that cannot be fetched.
    """
    if git is not None and target is not None:
        tree = git_tree(git, target, cache_dir, limits)
        return Target(str(tree), printable(target), repository=git, revision=target)
    if target is None:
        return _default(sample)
    if is_spec(target):
        return Target(str(_release(target, cache_dir, limits)), target, kind="release", spec=target)
    if target.endswith(".whl") and Path(target).is_file():
        return Target(str(wheel_dir(Path(target), cache_dir, limits)), printable(target), kind="release")
    meant = spec_hint(target)
    if meant and not os.path.lexists(target):
        raise FetchError(f"no such file or directory: {printable(target)} (did you mean the release {meant}?)")
    return Target(target, printable(target))


def _release(spec: str, cache_dir: Path, limits: Limits) -> Path:
    """:func:`release_dir`, with a did-you-mean for a package name near the default one."""
    try:
        return release_dir(spec, cache_dir, limits)
    except NoSuchPackage as exc:
        close = difflib.get_close_matches(exc.name.lower(), [DEFAULT_PACKAGE], n=1)
        raise FetchError(f"{exc} (did you mean {close[0]}?)" if close else str(exc)) from exc


def _default(sample_allowed: bool = True) -> Target:
    """The tree read when none is named: the checkout the user stands in, the installed package, the sample."""
    checkout = standing_in()
    if checkout is not None:
        shown = printable(str(checkout))
        return Target(
            str(checkout),
            shown,
            f"analysing the checkout {shown} (the git repository holding the current folder);"
            " name a tree to read another",
        )
    installed = installed_package(DEFAULT_PACKAGE)
    if installed is not None:
        note = f"analysing the installed {DEFAULT_PACKAGE} at {installed}"
        return Target(str(installed), str(installed), note, kind="installed")
    if not sample_allowed:
        raise FetchError(
            f"{DEFAULT_PACKAGE} is not installed: name the release that served the log"
            f" ({DEFAULT_PACKAGE}==X.Y.Z, a wheel or a path to its source)"
        )
    sample = sample_tree()
    return Target(
        str(sample),
        "<sample>",
        f"{DEFAULT_PACKAGE} is not installed; analysing the sample tree shipped with sgtrace ({sample})",
        kind="sample",
    )


def standing_in() -> Path | None:
    """The top of the git checkout holding the current folder, when it holds the default package where a walk of
    it would name it so (``python/sglang``, ``sglang``...); None otherwise. The walk up stops below $HOME's parent."""
    try:
        here = Path.cwd()
    except OSError:  # the current folder was removed
        return None
    home = Path(os.path.expanduser("~"))
    top = git_top(here, home.parent if home.is_absolute() else None)
    if top is None or package_at(top, DEFAULT_PACKAGE) is None:
        return None
    return top


@dataclass(frozen=True, slots=True)
class Point:
    """One release, tree or commit of a history, named but not fetched yet."""

    #: What :func:`resolve` takes: a spec, a path, a wheel, or a revision of the checkout.
    text: str
    #: How a row names it: the version, the path, or a short commit.
    label: str
    #: The git tags on the commit.
    tags: tuple[str, ...] = ()


def points(arguments: Sequence[str], cache_dir: Path, pre: bool = False) -> list[Point]:
    """The releases or trees a history runs through, oldest first as given.

    ``name==LOW..HIGH`` is every version the registry has between them (post-releases included,
    pre-releases with *pre* or when an end is one); ``name==A,B,C`` those versions; any other argument one
    tree (a path, a wheel, a spec). A range the registry cannot list, or that holds no version, is a
    FetchError.
    """
    found: list[Point] = []
    for argument in arguments:
        match = _SPAN.match(argument)
        if match is None:
            found.append(Point(argument, _label(argument)))
            continue
        name, versions = match["name"], match["versions"]
        if ".." in versions:
            low, _, high = versions.partition("..")
            listed = between(_listed(name, cache_dir), low, high, pre)
            if not listed:
                raise FetchError(f"{argument}: the registry has no version of {name} from {low} to {high}")
        else:
            listed = [v.strip() for v in versions.split(",") if v.strip()]
        found += [_stop(name, version) for version in listed]
    return found


def range_ends(arguments: Sequence[str]) -> tuple[Point, Point] | None:
    """The first and last release of a lone ``name==LOW..HIGH``, as :func:`points` names them when the registry
    has both (before it is asked: they can be read while it lists what lies between); None for other stops."""
    match = _SPAN.match(arguments[0]) if len(arguments) == 1 else None
    if match is None or ".." not in match["versions"]:
        return None
    name = match["name"]
    low, high = sorted(match["versions"].split("..", 1), key=version_key)
    return _stop(name, low), _stop(name, high)


def _stop(name: str, version: str) -> Point:
    """One release of a span: fetched by its spec, named by its version."""
    return Point(f"{name}=={version}", version)


#: ``name==LOW..HIGH`` or ``name==A,B,...``: a span of releases rather than one.
_SPAN = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<versions>[A-Za-z0-9.+!_-]+(?:\.\.[A-Za-z0-9.+!_-]+|(?:,[A-Za-z0-9.+!_-]+)+))$"
)


def _label(argument: str) -> str:
    """How a row names one tree: a spec's version, a path's last part (``~/src/sglang-0.5.9/`` -> ``sglang-0.5.9``)."""
    spec = SPEC.match(argument)
    if spec is not None and not os.path.exists(argument):
        return spec["version"]
    return printable(Path(argument).name or argument)


def _listed(name: str, cache_dir: Path) -> list[str]:
    """Every version the registry lists of *name*; a FetchError when it lists none."""
    versions = every_version(name, cache_dir)
    if not versions:
        raise FetchError(f"the registry lists no version of {name} (is it reachable, and is the name right?)")
    return versions
