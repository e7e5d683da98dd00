"""Modules parsed on the worker processes before a slice asks for them.

When a question names a batch of modules at once (the callers of a function, the writers of an
attribute, the subclasses of a class), the project hands the ones it has not loaded to the workers
(:meth:`sgtrace.index.project.Project.prefetch`): each parses its file and sends back the outline, while the
parent goes on with the first. The parent keeps no tree of such a module: a body is read later from a
parse of the function's own bytes (:func:`sgtrace.parse.parse_range`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sgtrace.index.exprs import NestingError
from sgtrace.index.outline import outline
from sgtrace.model import FileError
from sgtrace.parse import parse, read_bytes
from sgtrace.records import Outline


@dataclass(frozen=True, slots=True)
class Outlined:
    """A module's file as a worker found it."""

    #: Its outline; None if the file could not be decoded or is nested too deeply.
    outline: Outline | None
    #: Its syntax error, or why it could not be decoded.
    error: FileError | None = None
    #: The line past the nesting bound, when the outline stopped there.
    nested: int | None = None


def outline_file(abspath: str, path: str, depth: int) -> Outlined | None:
    """Parse one file and outline it (on a worker); None if it cannot be read (the parent says why)."""
    try:
        data = read_bytes(abspath)
    except OSError:
        return None
    parsed = parse(path, data)
    if isinstance(parsed, FileError):
        return Outlined(None, parsed)
    try:
        return Outlined(outline(parsed.tree, depth), parsed.error)
    except NestingError as exc:
        return Outlined(None, parsed.error, exc.line)
