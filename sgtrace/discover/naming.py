"""Module names for the files of a tree, and the choice between two copies of one package."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sgtrace.discover.roots import identifiers
from sgtrace.model import Shadowed, SourceFile

Parts = tuple[str, ...]

#: Escapes for the control characters that have a short one.
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def printable(name: str) -> str:
    """A file name as sgtrace prints it: itself when every character is printable, else escaped.

    Bytes that are not UTF-8 (which Python keeps as lone surrogates) become ``\\xNN``, newlines and
    tabs ``\\n``/``\\t``, other unprintable characters ``\\xNN``/``\\uNNNN``, and a backslash ``\\\\``, so
    that output is valid UTF-8, one line per finding, and the escape can be read back.
    """
    if name.isprintable():
        return name
    return "".join(_escape(c) for c in name)


def _escape(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    if char.isprintable():
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@dataclass
class Layout:
    """What discovery saw of a tree's layout, as path parts below the analysis root."""

    #: Folders that hold ``__init__.py``.
    init_dirs: set[Parts] = field(default_factory=set)
    #: Package names of the root and of its package ancestors, outermost first, when the root lies in a package.
    above: Parts = ()
    #: Roots named by packaging settings (``where``, ``package-dir``...): they name namespace packages too.
    strong: set[Parts] = field(default_factory=set)
    #: Folders holding a packaging file, and ``src``/``python`` beside one: roots of single-file modules.
    weak: set[Parts] = field(default_factory=set)
    #: folder -> its import root, remembered.
    _bases: dict[Parts, Parts] = field(default_factory=dict, repr=False)

    def base(self, folder: Parts, memo: dict[Parts, bool]) -> Parts:
        """The import root of a folder in a package: the first folder up that is no package (remembered)."""
        if folder not in self._bases:
            self._bases[folder] = self.base(folder[:-1], memo) if folder and self.in_package(folder, memo) else folder
        return self._bases[folder]

    def in_package(self, folder: Parts, memo: dict[Parts, bool]) -> bool:
        """Whether *folder* is a package: it holds ``__init__.py`` or lies in one (a namespace portion)."""
        if not folder:
            return bool(self.above)
        if folder not in memo:
            memo[folder] = folder[-1].isidentifier() and (
                folder in self.init_dirs or self.in_package(folder[:-1], memo)
            )
        return memo[folder]


@dataclass(frozen=True, slots=True)
class _Named:
    abspath: str
    rel: Parts
    module: str
    #: Import root the name is relative to (None: above the analysis root); for scripts, None.
    base: Parts | None
    #: "package" (inside a package), "single" (a top-level module of a root) or "script".
    kind: str


def name_files(files: list[tuple[str, Parts]], layout: Layout) -> tuple[list[SourceFile], list[Shadowed]]:
    """Name every (abspath, path parts) file; leave out all but one copy of a package found twice."""
    memo: dict[Parts, bool] = {}
    packaged = [_package_name(a, r, layout, memo) for a, r in files if layout.in_package(r[:-1], memo)]
    bases = {n.base for n in packaged if n.base is not None}
    roots = bases | layout.strong | layout.weak
    others = [_single_name(a, r, roots) for a, r in files if not layout.in_package(r[:-1], memo)]
    kept, shadowed = _one_copy(packaged, layout)
    named = _unique([_namespace(n, layout.strong) for n in kept] + others)
    sources = [
        SourceFile(n.abspath, printable("/".join(n.rel)), printable(n.module), n.kind == "script") for n in named
    ]
    return sources, shadowed


def _tail(rel: Parts) -> list[str]:
    stem = rel[-1].rsplit(".", 1)[0]
    return [] if stem == "__init__" else [stem]


def _package_name(abspath: str, rel: Parts, layout: Layout, memo: dict[Parts, bool]) -> _Named:
    """Walk up while the folder is a package; the folder reached is the import root."""
    folder = rel[:-1]
    base = layout.base(folder, memo)
    if not base and layout.in_package(base, memo):
        return _Named(abspath, rel, ".".join([*layout.above, *folder, *_tail(rel)]), None, "package")
    return _Named(abspath, rel, ".".join([*folder[len(base) :], *_tail(rel)]), base, "package")


def _namespace(named: _Named, strong: set[Parts]) -> _Named:
    """A package whose import root lies below a configured root is a portion of a namespace package there."""
    base = named.base
    if base is None:
        return named
    reaching = [r for r in strong if len(r) < len(base) and base[: len(r)] == r and identifiers(base[len(r) :])]
    if not reaching:
        return named
    root = max(reaching, key=len)
    return _Named(named.abspath, named.rel, ".".join([*base[len(root) :], named.module]), root, named.kind)


def _single_name(abspath: str, rel: Parts, roots: set[Parts]) -> _Named:
    folder = rel[:-1]
    reaching = [r for r in roots if folder[: len(r)] == r and identifiers(folder[len(r) :])]
    if reaching and _tail(rel):
        root = max(reaching, key=len)
        return _Named(abspath, rel, ".".join([*folder[len(root) :], *_tail(rel)]), root, "single")
    return _script(abspath, rel)


def _script(abspath: str, rel: Parts) -> _Named:
    """A file no root reaches is named by its path from the analysis root (as pytest's importlib mode does)."""
    return _Named(abspath, rel, ".".join([*rel[:-1], *(_tail(rel) or [rel[-1].rsplit(".", 1)[0]])]), None, "script")


def _one_copy(packaged: list[_Named], layout: Layout) -> tuple[list[_Named], list[Shadowed]]:
    """Where a top-level package lies under two roots with modules in common, keep one root's copy."""
    by_top: dict[str, dict[Parts | None, list[_Named]]] = defaultdict(lambda: defaultdict(list))
    for named in packaged:
        by_top[named.module.split(".")[0]][named.base].append(named)
    kept: list[_Named] = []
    shadowed: list[Shadowed] = []
    for top, copies in sorted(by_top.items()):
        if len(copies) == 1 or not _overlap(copies):
            kept.extend(n for group in copies.values() for n in group)
            continue
        chosen = min(copies, key=lambda b: _preference(b, layout))
        kept.extend(copies[chosen])
        others = sorted((b for b in copies if b != chosen), key=lambda b: _preference(b, layout))
        shadowed.append(
            Shadowed(
                top,
                _folder(chosen, top),
                tuple(_folder(b, top) for b in others),
                sum(len(copies[b]) for b in others),
            )
        )
    return kept, shadowed


def _overlap(copies: dict[Parts | None, list[_Named]]) -> bool:
    seen: set[str] = set()
    for group in copies.values():
        names = {n.module for n in group}
        if seen & names:
            return True
        seen |= names
    return False


def _preference(base: Parts | None, layout: Layout) -> tuple[int, int, Parts]:
    """Declared roots first, then the shallowest, then by name: deterministic."""
    if base is None:
        return (0, -1, ())
    return (0 if base in layout.strong or base in layout.weak else 1, len(base), base)


def _folder(base: Parts | None, top: str) -> str:
    return "/".join([*(base or ()), top]) if base is not None else "."


def _unique(named: list[_Named]) -> list[_Named]:
    """Top-level modules of two roots with one name (two ``setup.py``) are named by their paths instead."""
    counts: dict[str, int] = defaultdict(int)
    for item in named:
        counts[item.module] += 1
    return [_script(n.abspath, n.rel) if counts[n.module] > 1 and n.kind == "single" else n for n in named]
