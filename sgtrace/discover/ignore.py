"""Which paths a run leaves out: tool folders, ``--exclude``/``--include``, and a checkout's ``.gitignore``.

Pattern semantics are gitignore's, from :mod:`pathspec`; ``.gitignore`` files
count only inside a git checkout (as ripgrep does), each relative to its own
folder, the deepest one that decides winning. The folder a run is given is
never ignored itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sgtrace.model import PathFilter

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

#: Folders never descended into: version control, caches, virtual environments, other tools' output.
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".pytype",
        ".tox", ".nox", ".venv", "venv", ".direnv", ".eggs", "__pypackages__", "node_modules",
        ".ipynb_checkpoints",
    }
)  # fmt: skip

#: A folder holding one of these is a Python environment (whatever its name), not source.
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


class Ignorer:
    """Answers "is this path left out?" for the paths under one root, loading ``.gitignore`` files as it goes."""

    def __init__(self, top: Path, path_filter: PathFilter) -> None:
        self.exclude = _compile(path_filter.exclude) if path_filter.exclude else None
        self.include = _compile(path_filter.include) if path_filter.include else None
        self.checkout = git_top(top) if path_filter.gitignore else None
        #: (folder relative to the root, or a path prefix reaching the root from above, spec)
        self.specs: dict[tuple[str, ...], GitIgnoreSpec] = {}
        self.above: list[tuple[tuple[str, ...], GitIgnoreSpec]] = []
        if self.checkout is not None:
            self._load_above(top.resolve(), self.checkout)
            if top.resolve() != self.checkout and self._git_ignores((), is_dir=True):
                # The folder named is itself ignored (a package in the checkout's .venv, a build copy): it is
                # analysed, as ripgrep searches a path it is given, and the rules above it, written to keep
                # that folder out, do not reach into it. Its own .gitignore files and those below still count.
                self.above = []

    def _load_above(self, top: Path, checkout: Path) -> None:
        """The checkout's ``info/exclude`` and the ``.gitignore`` files between its top and the root."""
        reach = top.relative_to(checkout).parts
        exclude = _spec(checkout / ".git" / "info" / "exclude")
        if exclude is not None:
            self.above.append((reach, exclude))
        for depth in range(len(reach)):
            spec = _spec(checkout.joinpath(*reach[:depth], ".gitignore"))
            if spec is not None:
                self.above.append((reach[depth:], spec))

    def enter(self, rel: tuple[str, ...], directory: str) -> None:
        """Read the ``.gitignore`` of a folder about to be listed (inside a checkout)."""
        if self.checkout is not None:
            spec = _spec(Path(directory) / ".gitignore")
            if spec is not None:
                self.specs[rel] = spec

    def skips_dir(self, rel: tuple[str, ...]) -> bool:
        """Whether a folder (path parts below the root) is left out with all it holds.

        (A Python environment is recognised by what it holds, once it is listed: see ENVIRONMENT_MARKERS.)
        """
        if rel[-1] in SKIP_DIRS:
            return True
        path = "/".join(rel) + "/"
        if self.exclude is not None and self.exclude.match_file(path):
            return True
        return self._git_ignores(rel, is_dir=True)

    def skips_file(self, rel: tuple[str, ...]) -> bool:
        """Whether a ``.py`` file (path parts below the root) is left out."""
        path = "/".join(rel)
        if self.exclude is not None and self.exclude.match_file(path):
            return True
        if self.include is not None and not self.include.match_file(path):
            return True
        return self._git_ignores(rel, is_dir=False)

    def _git_ignores(self, rel: tuple[str, ...], is_dir: bool) -> bool:
        if self.checkout is None:
            return False
        suffix = "/" if is_dir else ""
        decision: bool | None = None
        for reach, spec in self.above:
            decision = _decide(spec, "/".join((*reach, *rel)) + suffix, decision)
        for depth in range(len(rel)):
            local = self.specs.get(rel[:depth])
            if local is not None:
                decision = _decide(local, "/".join(rel[depth:]) + suffix, decision)
        return bool(decision)


def _decide(spec: GitIgnoreSpec, path: str, decision: bool | None) -> bool | None:
    """A deeper ``.gitignore`` that says something about *path* overrides what shallower ones said."""
    result = spec.check_file(path).include
    return decision if result is None else result


def _spec(path: Path) -> GitIgnoreSpec | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return _compile(text.splitlines())


def _compile(lines: list[str] | tuple[str, ...]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec  # imported when a pattern is met: most runs have none

    return GitIgnoreSpec.from_lines(lines)


def git_top(start: Path) -> Path | None:
    """The top folder of the git checkout holding *start*, or None."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None
