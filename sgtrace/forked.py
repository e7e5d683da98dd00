"""Pieces of work run in forked child processes, in one or two lanes, each lane one child.

A history reads a dozen releases; each read allocates a few hundred MB, and two children use two cores.
The lanes run from both ends of the list towards each other, so each lane's child does the piece next to
the one it did last: consecutive releases share most of their files, and what the child learnt of a
file's contents (its words, :class:`~sgtrace.index.identifiers.Vocabulary`; the content store on disk
besides) serves again; neither lane waits for the other. A child that dies is replaced by a new one for
its lane's next piece. Where ``fork`` is not available (Windows, and macOS by default) the work runs
here, one piece after the other.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

T = TypeVar("T")

#: A lane's child whose resident memory grew by more than this (MiB) since it began, once a piece is done, is
#: replaced by a new one for the next piece: what the pieces leave behind (the words kept, the allocator's free
#: but unreturned memory) grows with each (about 40 MB a release of the newest SGLang when a log is evaluated),
#: and a piece takes a couple of hundred MB more while it runs. (Growth, not the whole: a child begins with
#: what its parent held, a test suite's process a GB or more.)
MOST_MIB = 300


def can_fork() -> bool:
    """Whether pieces can run in forked children here."""
    return "fork" in multiprocessing.get_all_start_methods()


class _Lane:
    """A child that does the pieces it is given one after another, and the piece it is doing."""

    def __init__(self, context: Any, work: Callable[[int], Any], forward: bool) -> None:
        self.connection, theirs = context.Pipe(duplex=True)
        self.process = context.Process(target=_lane, args=(work, theirs), daemon=True)
        self.process.start()
        theirs.close()
        self.forward = forward
        self.piece = -1

    def give(self, piece: int) -> None:
        self.piece = piece
        self.connection.send(piece)

    def received(self) -> tuple[Any, str, bool]:
        """The child's result and ""; or None and why there is none; and whether the child is to go on (it is
        there, and has not grown by more than :data:`MOST_MIB`)."""
        try:
            ok, value, grown = self.connection.recv()
        except (EOFError, OSError):
            self.process.join()
            return None, f"the process reading it ended with no answer (exit code {self.process.exitcode})", False
        going_on = grown is None or grown <= MOST_MIB
        return (value, "", going_on) if ok else (None, str(value), going_on)

    def end(self) -> None:
        """Tell the child there is no more work, and wait for it."""
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.connection.close()
        self.process.join(5)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()


def from_both_ends(
    pieces: Sequence[int],
    work: Callable[[int], T],
    lanes: int,
    done: Callable[[int, T | None, str], None],
) -> None:
    """Run ``work(piece)`` for every piece in forked children, *lanes* (1 or 2) at a time: one lane from the
    first piece on, the other from the last back, each lane one child doing its pieces in turn.
    ``done(piece, result, "")`` is called here as each ends, or ``done(piece, None, why)`` when it raised or
    the child died."""
    if not pieces:
        return
    if not can_fork():
        for piece in pieces:
            _here(piece, work, done)
        return
    context = multiprocessing.get_context("fork")
    front, back = 0, len(pieces) - 1
    running: dict[Connection, _Lane] = {}

    def next_piece(forward: bool) -> int:
        nonlocal front, back
        index = front if forward else back
        if forward:
            front += 1
        else:
            back -= 1
        return pieces[index]

    def start(forward: bool) -> None:
        lane = _Lane(context, work, forward)
        lane.give(next_piece(forward))
        running[lane.connection] = lane

    try:
        start(True)
        if lanes > 1 and front <= back:
            start(False)
        while running:
            for ready in wait(list(running)):
                assert isinstance(ready, Connection)
                lane = running.pop(ready)
                result, why, going_on = lane.received()
                done(lane.piece, result, why)
                if front <= back and going_on:
                    lane.give(next_piece(lane.forward))
                    running[lane.connection] = lane
                    continue
                lane.end()
                if front <= back:
                    start(lane.forward)
    finally:
        for lane in running.values():
            lane.process.terminate()
            lane.process.join()


def _here(piece: int, work: Callable[[int], T], done: Callable[[int, T | None, str], None]) -> None:
    try:
        result = work(piece)
    except Exception as exc:  # as a child would report it
        done(piece, None, f"{type(exc).__name__}: {exc}")
        return
    done(piece, result, "")


def _lane(work: Callable[[int], Any], connection: Connection) -> None:
    """In the child: do each piece sent until told to stop (None, or the parent gone), sending back each
    result (or why not); end without the parent's exit handlers."""
    code = 0
    began = _resident_mib()
    try:
        while True:
            try:
                piece = connection.recv()
            except (EOFError, OSError):
                break
            if piece is None:
                break
            try:
                answer: tuple[bool, Any] = (True, work(piece))
            except BaseException as exc:  # noqa: BLE001  (the parent says it, the child has no one to tell)
                answer = (False, f"{type(exc).__name__}: {exc}".strip())
                if os.environ.get("SGTRACE_DEBUG"):
                    traceback.print_exc()
            gc.collect()  # what the piece left in cycles (the CLI collects rarely: see cli.run)
            now = _resident_mib()
            grown = now - began if now is not None and began is not None else None
            try:
                connection.send((*answer, grown))
            except Exception as exc:  # noqa: BLE001  (a result that cannot be pickled)
                connection.send((False, f"the answer could not be sent back: {type(exc).__name__}: {exc}", grown))
            del answer
        connection.close()
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def _resident_mib() -> int | None:
    """This process's resident memory in MiB, where the system says it (Linux's /proc), else None."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return None
