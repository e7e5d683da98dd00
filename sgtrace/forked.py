"""Pieces of work run in forked child processes, in one or two lanes, each lane one child.

A history reads a dozen releases; each read allocates a few hundred MB, and two children use two cores.
The lanes run from both ends of the list towards each other, so each lane's child does the piece next to
the one it did last: consecutive releases share most of their files, and what the child learnt of a
file's contents (its words, :class:`~sgtrace.index.identifiers.Vocabulary`; the content store on disk
besides) serves again; neither lane waits for the other. A child that dies is replaced by a new one for
its lane's next piece. The lanes may begin before the list of pieces is known, on what will likely be its
ends (:meth:`Lanes.begin`: a history's range is read from its ends while the registry lists what lies
between). Where ``fork`` is not available (Windows, and macOS by default) the work runs here, one piece
after the other.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
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
        self.payload: Any = None

    def give(self, piece: int, payload: Callable[[int], Any]) -> None:
        """Send the child *piece*'s payload (-1: a payload that is no piece's yet, see :meth:`Lanes.begin`)."""
        self.piece = piece
        self.payload = payload(piece)
        self.connection.send(self.payload)

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

    def stop(self) -> None:
        """End the child now, and what it started (pip fetching a release: its own process group)."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):  # not its own group yet: the child alone
            pass
        self.process.terminate()
        self.process.join()

    def end(self) -> None:
        """Tell the child there is no more work, and wait for it."""
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.connection.close()
        self.process.join(5)
        if self.process.is_alive():
            self.stop()


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
    with Lanes(work, lanes) as running:
        running.run(pieces, lambda piece: piece, done)


class Lanes:
    """The lanes of :func:`from_both_ends`, whose children may be given their first pieces before the list of
    pieces is known (:meth:`begin`: a history's two ends are read while the registry lists what lies between);
    a context manager, its children ended on leaving it."""

    def __init__(self, work: Callable[[Any], Any], lanes: int) -> None:
        #: What a child does with a piece's payload.
        self.work = work
        self.lanes = max(1, min(2, lanes))
        self.context = multiprocessing.get_context("fork") if can_fork() else None
        self.running: dict[Connection, _Lane] = {}

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *_: object) -> None:
        for lane in self.running.values():
            lane.stop()
        self.running.clear()

    def begin(self, first: Any, last: Any) -> bool:
        """Start the lanes now on the payloads of the first and last pieces (the last with two lanes only), as
        :meth:`run` would, and say whether they were (not without fork, nor twice); a payload that turns out not
        to be the first or last piece's is read for nothing."""
        if self.context is None or self.running:
            return False
        self._start(True, -1, lambda _: first)
        if self.lanes > 1:
            self._start(False, -1, lambda _: last)
        return True

    def run(self, pieces: Sequence[int], payload: Callable[[int], Any], done: Callable[[int, Any, str], None]) -> None:
        """Every piece's payload done by the lanes (here, one after the other, where there is no fork), and
        ``done(piece, result, why)`` called for each."""
        if self.context is None:
            for piece in pieces:
                _here(piece, lambda index: self.work(payload(index)), done)
            return
        front, back = 0, len(pieces) - 1
        for lane in self.running.values():  # lanes begun: the piece each is on, when it is the one at its end
            at = front if lane.forward else back
            if front <= back and lane.payload == payload(pieces[at]):
                lane.piece = pieces[at]
                front, back = (front + 1, back) if lane.forward else (front, back - 1)

        def next_piece(forward: bool) -> int:
            nonlocal front, back
            index = front if forward else back
            front, back = (front + 1, back) if forward else (front, back - 1)
            return pieces[index]

        if not self.running and front <= back:
            self._start(True, next_piece(True), payload)
        if len(self.running) < self.lanes and front <= back:
            self._start(False, next_piece(False), payload)
        while self.running:
            for ready in wait(list(self.running)):
                assert isinstance(ready, Connection)
                lane = self.running.pop(ready)
                result, why, going_on = lane.received()
                if lane.piece >= 0:  # not a begun payload that was no piece's
                    done(lane.piece, result, why)
                if front <= back and going_on:
                    lane.give(next_piece(lane.forward), payload)
                    self.running[lane.connection] = lane
                    continue
                lane.end()
                if front <= back:
                    self._start(lane.forward, next_piece(lane.forward), payload)

    def _start(self, forward: bool, piece: int, payload: Callable[[int], Any]) -> None:
        """A new lane's child, given *piece* (-1: a begun payload, no piece's yet)."""
        assert self.context is not None
        lane = _Lane(self.context, self.work, forward)
        lane.give(piece, payload)
        self.running[lane.connection] = lane


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
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)  # what it starts (pip) ends with it when the lanes are left early (see _Lane.stop)
        # its own group is not the terminal's foreground group: under ``stty tostop`` a write to the terminal
        # (a warning) would stop it, and the parent would wait for it for ever, unless SIGTTOU is ignored
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
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
            gc.freeze()  # what is left lives on (what is kept for the next pieces): later collections pass it by
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
