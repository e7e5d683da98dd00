"""Pieces of work run in forked child processes, in one or two lanes, one child a piece.

A history reads a dozen releases; each read allocates a few hundred MB that a child gives back when it
ends, and two children use two cores. The lanes run from both ends of the list towards each other, so
each child follows the piece next to the one its lane did last (consecutive releases share most of their
files, which the content store then already holds) and neither lane waits for the other. Where ``fork``
is not available (Windows, and macOS by default) the work runs here, one piece after the other.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Whether pieces can run in forked children here."""
    return "fork" in multiprocessing.get_all_start_methods()


def from_both_ends(
    pieces: Sequence[int],
    work: Callable[[int], T],
    lanes: int,
    done: Callable[[int, T | None, str], None],
) -> None:
    """Run ``work(piece)`` for every piece, each in a child of its own, *lanes* (1 or 2) at a time: one lane
    from the first piece on, the other from the last back. ``done(piece, result, "")`` is called here as each
    ends, or ``done(piece, None, why)`` when it raised or the child died."""
    if not pieces:
        return
    if not can_fork():
        for piece in pieces:
            _here(piece, work, done)
        return
    context = multiprocessing.get_context("fork")
    front, back = 0, len(pieces) - 1
    running: dict[Connection, tuple[Any, int, bool]] = {}

    def start(forward: bool) -> None:
        nonlocal front, back
        index = front if forward else back
        if forward:
            front += 1
        else:
            back -= 1
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(work, pieces[index], writer), daemon=True)
        child.start()
        writer.close()
        running[reader] = (child, pieces[index], forward)

    try:
        start(True)
        if lanes > 1 and front <= back:
            start(False)
        while running:
            for ready in wait(list(running)):
                assert isinstance(ready, Connection)
                child, piece, forward = running.pop(ready)
                result, why = _received(ready, child)
                done(piece, result, why)
                if front <= back:
                    start(forward)
    finally:
        for child, _, _ in running.values():
            child.terminate()
            child.join()


def _here(piece: int, work: Callable[[int], T], done: Callable[[int, T | None, str], None]) -> None:
    try:
        result = work(piece)
    except Exception as exc:  # as a child would report it
        done(piece, None, f"{type(exc).__name__}: {exc}")
        return
    done(piece, result, "")


def _child(work: Callable[[int], Any], piece: int, writer: Connection) -> None:
    """In the child: do the piece, send its result (or why not), and end without the parent's exit handlers."""
    code = 0
    try:
        try:
            answer: tuple[bool, Any] = (True, work(piece))
        except BaseException as exc:  # noqa: BLE001  (the parent says it, the child has no one to tell)
            answer = (False, f"{type(exc).__name__}: {exc}".strip())
            if os.environ.get("SGTRACE_DEBUG"):
                traceback.print_exc()
        try:
            writer.send(answer)
        except Exception as exc:  # noqa: BLE001  (a result that cannot be pickled)
            writer.send((False, f"the answer could not be sent back: {type(exc).__name__}: {exc}"))
        writer.close()
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def _received(reader: Connection, child: Any) -> tuple[Any, str]:
    """The child's result and ""; or None and why there is none."""
    try:
        ok, value = reader.recv()
    except (EOFError, OSError):
        child.join()
        return None, f"the process reading it ended with no answer (exit code {child.exitcode})"
    finally:
        reader.close()
    child.join()
    return (value, "") if ok else (None, str(value))
