"""Stage 1 (sources): what tree a command analyses, given a path, a spec, a wheel or nothing."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sgtrace.discover import printable
from sgtrace.fetch import FetchError, NoSuchPackage, git_tree, installed_package, is_spec, release_dir, wheel_dir
from sgtrace.model import Limits
from sgtrace.registry import spec_hint

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


def sample_tree() -> Path:
    """The small SGLang-shaped sample shipped inside sgtrace."""
    return Path(str(resources.files("sgtrace") / "sample"))


def resolve(
    target: str | None, cache_dir: Path, git: str | None = None, limits: Limits = Limits(), sample: bool = True
) -> Target:
    """Turn the command line's PATH|SPEC (or its absence, or a revision of *git*) into a tree on disk.

    With no PATH|SPEC: the installed package, else the sample tree -- or, without *sample*, a FetchError
    asking for one. Raises FetchError for a spec or revision that cannot be fetched.
    """
    if git is not None and target is not None:
        return Target(str(git_tree(git, target, cache_dir, limits)), printable(target))
    if target is None:
        return _default(sample)
    if is_spec(target):
        return Target(str(_release(target, cache_dir, limits)), target)
    if target.endswith(".whl") and Path(target).is_file():
        return Target(str(wheel_dir(Path(target), cache_dir, limits)), printable(target))
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
    installed = installed_package(DEFAULT_PACKAGE)
    if installed is not None:
        return Target(str(installed), str(installed), f"analysing the installed {DEFAULT_PACKAGE} at {installed}")
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
    )
