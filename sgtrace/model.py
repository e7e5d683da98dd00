"""Records that flow between the stages: fields only, no behaviour, no text."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Kinds of attribute write that ``find`` reports.
WRITE_KINDS = (
    "assign",
    "annassign",
    "augassign",
    "unpack",
    "for",
    "with",
    "setattr",
    "field",
    "name",
)
#: Kinds of attribute read that ``find --reads`` reports.
READ_KINDS = ("read", "getattr")


class ExitCode(enum.IntEnum):
    """Process exit codes, as grep uses them; an internal error (a bug of sgtrace's) has its own."""

    FOUND = 0
    NOT_FOUND = 1
    ERROR = 2
    INTERNAL = 3


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A Python file to analyse, as discovery found it."""

    #: Absolute path on disk.
    abspath: str
    #: Path relative to the analysis root, with POSIX separators.
    path: str
    #: Dotted module name (``pkg.sub.mod``), as far as the layout tells.
    module: str
    #: A script outside any package (named by its path): run, its own folder is first on the import path.
    script: bool = False


@dataclass(frozen=True, slots=True)
class PathFilter:
    """Which files under a root are analysed, as linters scope a run."""

    #: Gitignore-style patterns, relative to the root, of paths left out.
    exclude: tuple[str, ...] = ()
    #: Gitignore-style patterns of the only files analysed (empty: every ``.py`` file).
    include: tuple[str, ...] = ()
    #: Whether ``.gitignore`` files (and ``.git/info/exclude``) of a git checkout are honoured.
    gitignore: bool = True
    #: Whether symbolic links leading out of the root are followed (inside ones always are, once).
    follow_links: bool = False


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one run reads and keeps, so that no input can take unbounded time, memory or output."""

    #: Bytes of one file analysed; a larger one is a per-file error ("too large").
    file_bytes: int = 10 * 1024 * 1024
    #: Bytes unpacked from one wheel or git revision (the ``.py`` and packaging files kept).
    unpacked_bytes: int = 1024 * 1024 * 1024
    #: Nesting of one expression or block that is analysed; deeper is a per-file error.
    depth: int = 200


@dataclass(frozen=True, slots=True)
class Shadowed:
    """A package found under two import roots: one copy is analysed, the others are left out."""

    #: The top-level package name (``sglang``).
    package: str
    #: Its directory that is analysed, relative to the root.
    used: str
    #: Its other directories, left out, relative to the root.
    left_out: tuple[str, ...]
    #: How many files were left out.
    files: int


@dataclass(frozen=True, slots=True)
class FileError:
    """A file, or part of one, that could not be read or parsed."""

    #: Path relative to the analysis root (POSIX separators).
    path: str
    #: 1-based line of the problem, or 0 when it concerns the whole file.
    line: int
    #: One-line description.
    message: str


@dataclass(frozen=True, slots=True)
class Access:
    """One access to the attribute in one file, independent of where the file lives.

    This is what the per-file scan returns and what the cache stores; the
    pass over the tree (:mod:`sgtrace.index.findpass`) adds the path and the module to make a :class:`Site`.
    """

    #: 1-based line of the accessed target.
    line: int
    #: 1-based column (in characters) of the accessed target.
    column: int
    #: One of WRITE_KINDS or READ_KINDS.
    kind: str
    #: Qualified name of the enclosing class within its module, or None.
    cls: str | None
    #: Qualified name of the enclosing function (``Class.method``), or None.
    function: str | None
    #: Source of the enclosing statement (header only for compound ones).
    code: str


@dataclass(frozen=True, slots=True)
class FileScan:
    """Everything the scan of one file found."""

    #: Accesses in source order.
    accesses: tuple[Access, ...] = ()
    #: Problems met in the file; accesses elsewhere in it are still reported.
    errors: tuple[FileError, ...] = ()


@dataclass(frozen=True, slots=True)
class Site:
    """An access located in the analysed tree."""

    #: Path relative to the root, POSIX separators.
    path: str
    #: 1-based line of the accessed target.
    line: int
    #: 1-based character column of the accessed target.
    column: int
    #: One of WRITE_KINDS or READ_KINDS.
    kind: str
    #: Dotted ``module.Class`` of the enclosing class, or None.
    owner: str | None
    #: ``Class.method`` or ``func`` enclosing the access, or None.
    function: str | None
    #: Source of the enclosing statement.
    code: str


@dataclass(frozen=True, slots=True)
class FindQuery:
    """What ``find`` was asked."""

    #: The attribute name.
    attribute: str
    #: Whether to list bare-name bindings (kind ``name``).
    names: bool = False
    #: Whether to list reads as well as writes.
    reads: bool = False


@dataclass(frozen=True, slots=True)
class TreeIdentity:
    """Which code an answer read: a release by its spec and version, a checkout by its commit and state."""

    #: How the tree is named to the user (the path or spec as given).
    display: str
    #: The folder read, absolute: a checkout's top, a release's unpacked folder, the folder named.
    root: str
    #: ``checkout``, ``release``, ``installed``, ``sample`` or ``folder``.
    kind: str
    #: The commit read (full sha); None for a tree that is not in a git repository.
    commit: str | None = None
    #: ``git describe --tags`` of the commit: the nearest tag and the commits since; None where no tag is reachable.
    describe: str | None = None
    #: The version its packaging gives (a spec's version, ``pyproject.toml``, a ``__version__`` literal).
    version: str | None = None
    #: Whether the work tree differs from the commit (a change, or a file git does not track yet).
    dirty: bool = False
    #: How many ``.py`` files under the tree read differ from the commit.
    dirty_files: int = 0
    #: The release spec (``sglang==0.5.9``) when the tree is a release; else None.
    spec: str | None = None


@dataclass(frozen=True, slots=True)
class TreeOrder:
    """Which of two trees compared is the older: by the ancestry of their commits, or by their versions."""

    #: Whether the new tree is older than the old one (a comparison that runs backwards in time).
    new_is_older: bool
    #: What told: ``ancestry`` (one commit is an ancestor of the other) or ``version``.
    by: str
    #: The old tree's commit or version compared.
    old: str
    #: The new tree's commit or version compared.
    new: str


@dataclass(frozen=True, slots=True)
class FindResult:
    """The answer of ``find``: sorted writes, reads and errors."""

    #: The attribute name.
    attribute: str
    #: The root as given (or as resolved for a spec / default).
    root: str
    #: Writes, sorted by path, line, column.
    writes: tuple[Site, ...]
    #: Reads, sorted likewise; None when they were not asked for.
    reads: tuple[Site, ...] | None = None
    #: Files or parts of files that could not be analysed.
    errors: tuple[FileError, ...] = ()
    #: Statistics of the run: files seen, parsed, cached.
    stats: dict[str, int] = field(default_factory=dict)
    #: Packages found twice under the root, and which copy was analysed.
    shadowed: tuple[Shadowed, ...] = ()
    #: Which code each tree read is, in the order the trees were given.
    trees: tuple[TreeIdentity, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceQuery:
    """What ``trace`` and ``graph`` were asked."""

    #: The attribute name.
    attribute: str
    #: The slice stops growing past this many nodes (and says so).
    max_nodes: int = 2000
    #: Receivers whose attributes are configuration knobs (``server_args.X``); none given: the engine's words
    #: (:func:`sgtrace.engine.engine_of` the tree).
    knob_receivers: tuple[str, ...] = ()
    #: Whether calls on receivers of unknown type stay unresolved (no approximate guess by method name).
    strict_types: bool = False


@dataclass(frozen=True)
class TraceResult:
    """The data-flow graph of one attribute."""

    #: The attribute name.
    attribute: str
    #: The root as given.
    root: str
    #: networkx.DiGraph of graph.points.Point nodes, edges with ``op`` and ``approximate``.
    graph: Any
    #: Whether the node limit cut the slice short.
    truncated: bool
    #: Files that could not be analysed.
    errors: tuple[FileError, ...] = ()
    #: Counts of the run.
    stats: dict[str, int] = field(default_factory=dict)
    #: Packages found twice under the root, and which copy was analysed.
    shadowed: tuple[Shadowed, ...] = ()
    #: Which code was read (None: not identified).
    tree: TreeIdentity | None = None


@dataclass(frozen=True, slots=True)
class BudgetSite:
    """Where the budget knob enters the computation (the formula, or a reservation subtracted from it)."""

    #: File, relative to the root.
    path: str
    #: 1-based line.
    line: int
    #: The statement.
    code: str
    #: Knobs and environment variables the statement depends on.
    knobs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cap:
    """A step on the value's path from the budget to the pool size that sets, lowers or replaces it."""

    #: File, relative to the root.
    path: str
    #: 1-based line of the written target.
    line: int
    #: ``module.Class`` the code belongs to, or None.
    owner: str | None
    #: ``Class.method`` or ``func``.
    function: str | None
    #: The name written (attribute, local or field).
    target: str
    #: base, min, round, reduce, override, split or reserve.
    category: str
    #: Enclosing conditions, outermost first (``not (c)`` in else branches).
    guard: tuple[str, ...]
    #: Knobs and environment variables it depends on.
    knobs: tuple[str, ...]
    #: The statement.
    code: str
    #: Whether the path to it passes a call resolved only by method name (a receiver of unknown type).
    approximate: bool = False
    #: ``not (c)`` for each earlier ``if c: return`` (or raise, continue, break) of its blocks: it runs
    #: only when these hold too.
    exits: tuple[str, ...] = ()

    @property
    def conditions(self) -> tuple[str, ...]:
        """Everything that must hold for the write to run: its guard, then its exits."""
        return (*self.guard, *self.exits)


@dataclass(frozen=True)
class CapsResult:
    """What ``caps`` found."""

    #: The attribute whose value is capped.
    attribute: str
    #: The budget knob's name.
    budget: str
    #: The root as given.
    root: str
    #: Budget sites, in code order.
    budget_sites: tuple[BudgetSite, ...]
    #: Caps, grouped by owner, in code order.
    caps: tuple[Cap, ...]
    #: Files that could not be analysed.
    errors: tuple[FileError, ...] = ()
    #: Whether the slice the analysis ran on was cut short.
    truncated: bool = False
    #: Packages found twice under the root, and which copy was analysed.
    shadowed: tuple[Shadowed, ...] = ()
    #: Which code was read (None: not identified).
    tree: TreeIdentity | None = None


@dataclass(frozen=True)
class ModelFacts:
    """What the operator says of the model and the environment besides the log: its config.json, --env."""

    #: The model's ``config.json`` as read (None: not given).
    config: Mapping[str, Any] | None = None
    #: Where it was read.
    origin: str = ""
    #: ``--env NAME=VALUE``: environment variables the release reads.
    env: Mapping[str, str] = field(default_factory=dict)
    #: The bytes of the model's weight files beside its config.json, and what gave them (None: not known).
    weights: tuple[int, str] | None = None
