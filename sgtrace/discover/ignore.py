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
        self.exclude = _patterns(path_filter.exclude, "--exclude") if path_filter.exclude else None
        self.include = _patterns(path_filter.include, "--include") if path_filter.include else None
        #: Lines of ignore files that git itself ignores, said once each.
        self.warnings: list[str] = []
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
        exclude = self._spec(checkout / ".git" / "info" / "exclude", ".git/info/exclude")
        if exclude is not None:
            self.above.append((reach, exclude))
        for depth in range(len(reach)):
            spec = self._spec(checkout.joinpath(*reach[:depth], ".gitignore"), "/".join((*reach[:depth], ".gitignore")))
            if spec is not None:
                self.above.append((reach[depth:], spec))

    def enter(self, rel: tuple[str, ...], ignore_file: str) -> None:
        """Read the ``.gitignore`` of a folder about to be listed (inside a checkout)."""
        if self.checkout is not None:
            spec = self._spec(Path(ignore_file), "/".join((*rel, ".gitignore")))
            if spec is not None:
                self.specs[rel] = spec

    def _spec(self, path: Path, shown: str) -> GitIgnoreSpec | None:
        """An ignore file's patterns; a line git would ignore is left out, with a warning."""
        try:
            if not path.is_file():
                return None  # missing, or not a regular file (a FIFO would block the read)
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read(_MOST).splitlines()
        except OSError:
            return None
        try:
            return _compile(lines)
        except ValueError:  # pathspec refuses what git passes over: `[z-a]`, `!`, a trailing backslash
            kept = []
            for number, line in enumerate(lines, 1):
                try:
                    _compile([line])
                except ValueError:
                    self.warnings.append(f"warning: {shown}:{number}: pattern {line!r} ignored, as git ignores it")
                    continue
                kept.append(line)
            return _compile(kept)

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


#: Bytes of one ignore file read (a larger one is read this far).
_MOST = 1 << 20


def _compile(lines: list[str] | tuple[str, ...]) -> GitIgnoreSpec:
    """Compile gitignore lines; ValueError for a pattern pathspec refuses."""
    from pathspec import GitIgnoreSpec  # imported when a pattern is met: most runs have none

    try:
        spec: GitIgnoreSpec = GitIgnoreSpec.from_lines(lines)  # typed here: pathspec 0.12.0 and 1.0.0-1.0.2 say Any
    except ValueError:
        raise
    except Exception as exc:  # pathspec's own error types are not all ValueErrors (re.error is)
        raise ValueError(str(exc)) from exc
    return spec


class PatternError(ValueError):
    """A pattern given on the command line (or in configuration) that cannot be used."""


def _patterns(patterns: tuple[str, ...], option: str) -> GitIgnoreSpec:
    """The user's own patterns: one that cannot be compiled is an error, not passed over."""
    for pattern in patterns:
        try:
            _compile([pattern])
        except ValueError as exc:
            raise PatternError(f"{option} {pattern!r} is not a valid gitignore-style pattern: {exc}") from None
    return _compile(patterns)


def git_top(start: Path, ceiling: Path | None = None) -> Path | None:
    """The top folder of the git checkout holding *start* (its ``.git`` a folder, or a file in a worktree), or
    None; with *ceiling*, neither it nor the folders above it are looked at (as git's GIT_CEILING_DIRECTORIES)."""
    here = start.resolve()
    stop = ceiling.resolve() if ceiling is not None else None
    for folder in (here, *here.parents):
        if folder == stop:
            return None
        if (folder / ".git").exists():
            return folder
    return None
