"""The order of start-up: which weight loads run before the release measures the memory its pool is sized from,
read on the way in of the sizing's own program (recorded calls built by hand)."""

from __future__ import annotations

from sgtrace.analyses.evaluate import Code
from sgtrace.analyses.order import loads_before_sizing
from sgtrace.analyses.reached import Call, Paths
from sgtrace.model import SourceFile

SIZING = ("pkg/srt/mem/config.py", "Config.size")
#: The server's entry loads the target (line 12) and a draft (line 15), then sizes the pool (line 20); another
#: program of the package (a pipeline, whose path sorts first) loads one model and sizes a pool of its own.
REACH = Paths({
    SIZING: (Call("pkg/srt/server.py", "Server.start", 20, ()), Call("pkg/gen/pipeline.py", "Pipeline.build", 10, ())),
    ("pkg/srt/server.py", "Server.start"): (),
    ("pkg/gen/pipeline.py", "Pipeline.build"): (),
})  # fmt: skip
LOADS = Paths({
    ("pkg/srt/runner.py", "Runner.load"): (
        Call("pkg/srt/server.py", "Server.start", 12, ()), Call("pkg/srt/server.py", "Server.start", 15, ())
    ),
    ("pkg/gen/encoder.py", "Encoder.__init__"): (Call("pkg/gen/pipeline.py", "Pipeline.build", 5, ()),),
})  # fmt: skip


def test_the_order_is_read_on_the_way_in_of_the_sizings_own_program() -> None:
    order = loads_before_sizing(Code([]), [SIZING], REACH, LOADS)
    assert order is not None and order.draft_first, order
    assert [load.where for load in order.before] == ["pkg/srt/server.py:12", "pkg/srt/server.py:15"]


def test_another_programs_way_in_is_taken_when_it_is_the_only_one() -> None:
    alone = Paths({SIZING: (REACH.callers[SIZING][1],), ("pkg/gen/pipeline.py", "Pipeline.build"): ()})
    order = loads_before_sizing(Code([]), [SIZING], alone, LOADS)
    assert order is not None and not order.draft_first
    assert [load.where for load in order.before] == ["pkg/gen/pipeline.py:5"]


def test_a_way_in_under_a_condition_false_for_the_run_is_not_taken() -> None:
    """The server sizes the pool early (line 13, between the two loads) only for another speculative algorithm:
    for a run whose condition is false that way is not taken, and the draft (line 15) loads before the sizing
    at line 20; unknown, the early way stands (the least loads)."""
    early = Call("pkg/srt/server.py", "Server.start", 13, ("self.spec.is_frozen()",))
    reach = Paths({**REACH.callers, SIZING: (REACH.callers[SIZING][0], early)})

    def holds(value: bool | None):  # type: ignore[no-untyped-def]
        return lambda text, path, line: (value if text == "self.spec.is_frozen()" else None, "spec")

    for value, draft_first in ((False, True), (None, False), (True, False)):
        order = loads_before_sizing(Code([]), [SIZING], reach, LOADS, holds(value))
        assert order is not None and order.draft_first is draft_first, (value, order)
    # a load under a condition false for the run is no load
    unloaded = Paths({**LOADS.callers, ("pkg/srt/runner.py", "Runner.load"): (
        Call("pkg/srt/server.py", "Server.start", 12, ()), Call("pkg/srt/server.py", "Server.start", 15, ("draft",)),
    )})  # fmt: skip
    order = loads_before_sizing(Code([]), [SIZING], REACH, unloaded, lambda text, path, line: (False, ""))
    assert order is not None and [load.where for load in order.before] == ["pkg/srt/server.py:12"]


def test_a_checkouts_paths_name_the_program_by_its_packages() -> None:
    """In a checkout the package is under python/ (``python/pkg/srt/...``): the way in of the sizing's own
    program is still the one from its part of the package (``pkg.srt``), not another program's whose path sorts
    first (``pkg.gen``), as in the wheel."""

    def moved(key: tuple[str, str]) -> tuple[str, str]:
        return (f"python/{key[0]}", key[1])

    def call(c: Call) -> Call:
        return Call(f"python/{c.path}", c.function, c.line, c.guard)

    reach = Paths({moved(k): tuple(map(call, v)) for k, v in REACH.callers.items()})
    loads = Paths({moved(k): tuple(map(call, v)) for k, v in LOADS.callers.items()})
    paths = {p for k, v in reach.callers.items() for p in (k[0], *(c.path for c in v))} | {k[0] for k in loads.callers}
    files = [SourceFile(f"/x/{p}", p, p.removeprefix("python/").removesuffix(".py").replace("/", ".")) for p in paths]
    order = loads_before_sizing(Code(files), [moved(SIZING)], reach, loads)
    assert order is not None and order.draft_first, order
    assert [load.where for load in order.before] == ["python/pkg/srt/server.py:12", "python/pkg/srt/server.py:15"]
    # by the paths alone (no module names), python/ is the program's first folder and the other program wins
    assert not loads_before_sizing(Code([]), [moved(SIZING)], reach, loads).draft_first  # type: ignore[union-attr]
