"""Pieces of work in forked children: each lane one child doing its pieces in turn, from both ends."""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.forked import can_fork, from_both_ends

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork (Linux)")

#: What a child did before (each lane's child keeps its own: it is not sent back).
_SEEN: list[int] = []


def _run(count: int, lanes: int, work: object) -> dict[int, tuple[object, str]]:
    done: dict[int, tuple[object, str]] = {}

    def record(piece: int, result: object, why: str) -> None:
        assert piece not in done
        done[piece] = (result, why)

    from_both_ends(list(range(count)), work, lanes, record)  # type: ignore[arg-type]
    return done


def _remembering(piece: int) -> tuple[int, int, tuple[int, ...]]:
    _SEEN.append(piece)
    return piece, os.getpid(), tuple(_SEEN)


def test_each_lane_is_one_child_doing_its_pieces_in_turn_from_its_end() -> None:
    done = _run(7, 2, _remembering)
    assert sorted(done) == list(range(7)) and all(why == "" for _, why in done.values())
    by_child: dict[int, tuple[int, ...]] = {}
    for result, _ in done.values():
        piece, pid, seen = result  # type: ignore[misc]
        assert pid != os.getpid() and seen[-1] == piece
        by_child[pid] = max(by_child.get(pid, ()), seen, key=len)
    assert len(by_child) == 2 and _SEEN == []  # nothing ran here
    lanes = sorted(by_child.values())
    assert lanes[0][0] == 0 and list(lanes[0]) == sorted(lanes[0])  # one lane from the first piece up
    assert lanes[1][0] == 6 and list(lanes[1]) == sorted(lanes[1], reverse=True)  # the other from the last down
    assert sorted(lanes[0] + lanes[1]) == list(range(7))


def test_one_lane_does_every_piece_in_order_in_one_child() -> None:
    done = _run(4, 1, _remembering)
    assert done[3][0][2] == (0, 1, 2, 3)  # type: ignore[index]


def _failing(piece: int) -> int:
    if piece == 1:
        raise ValueError("no wheel")
    if piece == 2:
        os._exit(3)  # the child dies: no answer
    return piece * 10


@pytest.mark.parametrize("lanes", [1, 2])
def test_a_piece_that_raises_or_kills_its_child_is_said_and_the_rest_are_done(lanes: int) -> None:
    done = _run(6, lanes, _failing)
    assert done[1] == (None, "ValueError: no wheel")
    assert done[2][0] is None and "ended with no answer (exit code 3)" in done[2][1]
    assert {piece: done[piece] for piece in (0, 3, 4, 5)} == {p: (p * 10, "") for p in (0, 3, 4, 5)}


def _unsendable(piece: int) -> object:
    return (lambda: piece) if piece == 0 else piece


def test_an_answer_that_cannot_be_sent_back_is_said() -> None:
    done = _run(2, 1, _unsendable)
    assert done[0][0] is None and "could not be sent back" in done[0][1] and done[1] == (1, "")


def test_what_a_child_begins_with_is_not_counted_against_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child begins with its parent's memory (a test suite's process: a GB or more): only its growth counts."""
    import sgtrace.forked

    monkeypatch.setattr(sgtrace.forked, "MOST_MIB", 50)
    held = b"x" * (120 * 2**20)  # the parent holds more than the bound
    done = _run(4, 1, _remembering)
    assert len(held) and done[3][0][2] == (0, 1, 2, 3)  # type: ignore[index]


def test_a_child_holding_too_much_memory_is_replaced_for_its_next_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    import sgtrace.forked

    # growth below any a child shows (it can be below zero: a child that begins with a big parent's pages may free
    # some), so every child is replaced: each piece in a new one
    monkeypatch.setattr(sgtrace.forked, "MOST_MIB", -(10**9))
    done = _run(5, 2, _remembering)
    assert all(why == "" for _, why in done.values())
    assert len({result[1] for result, _ in done.values()}) == 5  # type: ignore[index]
    assert all(result[2] == (piece,) for piece, (result, _) in done.items())  # type: ignore[index]


def _named(name: str) -> tuple[str, int, tuple[str, ...]]:
    _NAMES.append(name)
    return name, os.getpid(), tuple(_NAMES)


#: What a child named before (as _SEEN, for payloads that are names).
_NAMES: list[str] = []


def _begun(
    first: str, last: str, names: list[str], work: Callable[[str], object] = _named
) -> dict[int, tuple[object, str]]:
    from sgtrace.forked import Lanes

    done: dict[int, tuple[object, str]] = {}

    def record(piece: int, result: object, why: str) -> None:
        assert piece not in done
        done[piece] = (result, why)

    with Lanes(work, 2) as lanes:
        lanes.begin(first, last)  # before the list is known (a registry's listing, in a history)
        lanes.run(range(len(names)), names.__getitem__, record)
    return done


def test_lanes_begun_on_the_ends_before_the_list_is_known_go_on_from_them() -> None:
    names = ["a", "b", "c", "d", "e"]
    done = _begun("a", "e", names)
    assert sorted(done) == [0, 1, 2, 3, 4] and all(why == "" for _, why in done.values())
    assert [result[0] for result, _ in (done[i] for i in range(5))] == names  # type: ignore[index]
    assert len({result[1] for result, _ in done.values()}) == 2  # type: ignore[index]  # the two begun children
    by_child: dict[int, tuple[str, ...]] = {}
    for result, _ in done.values():
        _, pid, seen = result  # type: ignore[misc]
        by_child[pid] = max(by_child.get(pid, ()), seen, key=len)
    read = [name for seen in by_child.values() for name in seen]
    assert sorted(read) == sorted(set(read)) == names  # each read once: the ends were not read again
    assert done[0][0][2][0] == "a" and done[4][0][2][0] == "e"  # type: ignore[index]


def test_a_begun_end_that_is_in_no_list_is_read_for_nothing_and_not_said(tmp_path: Path) -> None:
    names = ["b", "c", "d"]
    started = tmp_path / "started"

    def logged(name: str) -> tuple[str, int, tuple[str, ...]]:
        with started.open("a") as stream:  # as soon as a child begins it (a child may be left before it ends)
            stream.write(f"{name}\n")
        time.sleep(0.2)  # so that one lane cannot do every piece while the other starts
        return _named(name)

    done = _begun("a", "d", names, logged)  # "a" is not in the list the registry gave: its answer is dropped
    assert sorted(done) == [0, 1, 2] and [done[i][0][0] for i in range(3)] == names  # type: ignore[index]
    assert "a" in started.read_text().split()  # it was read


def test_lanes_begun_on_a_list_of_one_say_it_once() -> None:
    done = _begun("a", "a", ["a"])
    assert list(done) == [0] and done[0][0][0] == "a"  # type: ignore[index]


def _fetching(marker: str) -> None:
    """Start a helper process (as a child fetching a release starts pip), say its pid, and wait."""
    import subprocess
    import time

    helper = subprocess.Popen(["sleep", "60"])
    Path(marker).write_text(str(helper.pid))
    time.sleep(60)


def _stat(pid: int) -> list[str]:
    """The fields of a process's Linux /proc stat after its name (state, parent, group, session, ...); OSError if
    there is no such process."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def _running(pid: int) -> bool:
    try:
        return _stat(pid)[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_lanes_left_early_end_what_their_children_started(tmp_path: Path) -> None:
    """A history whose range the registry refuses leaves its begun lanes while they fetch: pip goes too."""
    import time

    from sgtrace.forked import Lanes

    markers = [tmp_path / "first", tmp_path / "last"]
    with pytest.raises(LookupError), Lanes(_fetching, 2) as lanes:
        lanes.begin(str(markers[0]), str(markers[1]))
        deadline = time.monotonic() + 30
        while not all(m.exists() and m.read_text() for m in markers) and time.monotonic() < deadline:
            time.sleep(0.05)
        raise LookupError("the registry has no such version")
    helpers = [int(m.read_text()) for m in markers]
    deadline = time.monotonic() + 10
    while any(map(_running, helpers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_running, helpers))


def _frozen(piece: int) -> tuple[int, int, int]:
    _SEEN.append(piece)
    return piece, os.getpid(), gc.get_freeze_count()


def test_what_a_piece_leaves_is_frozen_for_the_pieces_after_it() -> None:
    """After each piece the child collects and freezes what lives on (what it keeps for the next pieces):
    the next collections pass it by."""
    done = _run(3, 1, _frozen)
    counts = [done[piece][0][2] for piece in range(3)]  # type: ignore[index]
    assert counts[1] > counts[0] and counts[2] >= counts[1]


_SPEAKING = """
import sys
from sgtrace.forked import Lanes

def work(piece):
    print(f"sgtrace: warning: piece {piece} says so", file=sys.stderr, flush=True)
    return piece * 2

done = {}
with Lanes(work, 2) as lanes:
    lanes.run([0, 1, 2, 3], lambda piece: piece, lambda piece, value, why: done.__setitem__(piece, value))
print("done", sorted(done.items()), flush=True)
"""


def _under_a_terminal(code: str, tostop: bool, limit: float = 30.0) -> tuple[int | None, str]:
    """Run *code* in a new session whose controlling terminal is a pseudo-terminal (with ``stty tostop`` if
    *tostop*), as a shell runs a command in the foreground: its exit code (None if it did not end within
    *limit* seconds; it and its children are then killed) and what it wrote to the terminal."""
    import fcntl
    import select
    import signal
    import subprocess
    import sys
    import termios

    main, terminal = os.openpty()
    modes = termios.tcgetattr(terminal)
    modes[3] = modes[3] | termios.TOSTOP if tostop else modes[3] & ~termios.TOSTOP
    termios.tcsetattr(terminal, termios.TCSANOW, modes)

    def controlled() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen([sys.executable, "-c", code], stdin=terminal, stdout=terminal, stderr=terminal,
                               preexec_fn=controlled)  # fmt: skip
    os.close(terminal)
    written = b""
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the terminal's last holder closed it
                    break
                if not chunk:
                    break
                written += chunk
            elif process.poll() is not None:
                break
        try:  # the terminal closes as the process exits, a moment before it can be reaped
            ended: int | None = process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            ended = None
        if ended is None:  # it and its children (each in a group of its own, all in its session)
            for pid in _in_session(process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        process.wait()
        return ended, written.decode("utf-8", "replace")
    finally:
        os.close(main)


def _in_session(session: int) -> list[int]:
    """The processes of a session (Linux's /proc: the sixth field of a process's stat)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if int(_stat(int(entry.name))[3]) == session:
                    found.append(int(entry.name))
    return found


@pytest.mark.parametrize("tostop", [False, True], ids=["plain", "tostop"])
def test_a_child_writing_to_the_terminal_is_not_stopped(tostop: bool) -> None:
    """A lane's child is in its own process group, not the terminal's foreground one: under ``stty tostop`` its
    first write to the terminal (a warning: a damaged cache entry) stopped it with SIGTTOU, and the parent
    waited for it for ever. Now it writes and goes on."""
    code, written = _under_a_terminal(_SPEAKING, tostop)
    assert code == 0, written
    assert "done [(0, 0), (1, 2), (2, 4), (3, 6)]" in written
    assert all(f"piece {piece} says so" in written for piece in range(4))
