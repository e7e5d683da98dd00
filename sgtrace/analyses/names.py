"""The names a question is asked with, held against the tree: the attribute and the budget knob.

A name the tree does not hold as a word anywhere is a typo, not a question with an empty answer: it
is refused with the tree's words most like it (the identifier index the graph stage builds). A name
the tree holds but never writes, and a budget that never reaches the attribute, are answers, said
plainly (and a budget that does not reach calls no cap an override: see ``analyses.caps``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sgtrace.index.identifiers import IdentifierIndex
from sgtrace.model import FileError, SourceFile
from sgtrace.parse import read_bytes


class UnknownName(Exception):
    """A name no tree of the question holds (exit code 2); the message is one line with a did-you-mean."""

    def __init__(self, message: str, option: str = "", name: str = "", where: str = "") -> None:
        super().__init__(message)
        #: The option that gave the name ("" for an argument), the name, and the trees as the user named them.
        self.option, self.name, self.where = option, name, where


class NotWritten(Exception):
    """The attribute is in the tree but nothing writes it: there is nothing to analyse (exit code 1)."""

    def __init__(self, message: str, errors: Sequence[FileError] = ()) -> None:
        super().__init__(message)
        #: The files that could not be read or parsed (one of them may hold the write).
        self.errors = tuple(errors)


@dataclass(frozen=True)
class Tree:
    """A tree a name is looked for in."""

    #: How the tree is named to the user.
    display: str
    #: Its identifier index, built when first asked for (only a name that is not found needs it).
    index: Callable[[], IdentifierIndex]
    #: Whether every file of the tree could be read (a file that could not may hold any name).
    complete: bool = True


def index_of(files: Sequence[SourceFile], contents: dict[str, bytes] | None = None) -> IdentifierIndex:
    """The identifier index of a tree's files (one file per module, as the project keeps them)."""
    first: dict[str, SourceFile] = {}
    for source in files:
        first.setdefault(source.module, source)
    known = contents or {}
    return IdentifierIndex([(module, known.get(module) or _bytes(first[module].abspath)) for module in sorted(first)])


def require(name: str, option: str, trees: Sequence[Tree]) -> None:
    """UnknownName unless one of *trees* holds *name* (*option*: how the command line gave it, "" for an argument),
    or a file of theirs could not be read (it may hold the name: that is not a typo for certain)."""
    indexes = [tree.index() for tree in trees]
    if any(index.holds(name) for index in indexes) or not all(tree.complete for tree in trees):
        return
    close = sorted({word for index in indexes for word in index.closest(name, 1)})
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    where = _where(trees)
    raise UnknownName(f"{option + ' ' if option else ''}{name}: not a name in {where}{hint}", option, name, where)


def not_written(attribute: str, trees: Sequence[Tree], errors: Sequence[FileError] = ()) -> NotWritten:
    """The answer for an attribute the trees hold but never write (*errors*: the files that could not be read)."""
    return NotWritten(f"no writes of .{attribute} under {_where(trees)}", errors)


def unreached(budget: str, attribute: str, trees: Sequence[Tree]) -> str:
    """That the budget, which the trees hold, is found nowhere in the attribute's computation."""
    return f"--budget {budget} does not reach .{attribute} in {_where(trees)}"


def _where(trees: Sequence[Tree]) -> str:
    """The trees, as the user named them (a tree given twice, once)."""
    return " or ".join(dict.fromkeys(tree.display for tree in trees))


def _bytes(path: str) -> bytes:
    try:
        return read_bytes(path)
    except OSError:
        return b""
