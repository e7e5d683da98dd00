"""Conditions travel with calls: the guards of call sites, the callers the graph stage records, and the
three-valued "was this function reached" that explain evaluates with a run's facts."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from sgtrace.analyses.explain import explain, truth
from sgtrace.analyses.reached import Call, Paths, Reach, Verdict, read_paths
from sgtrace.api import RunOptions, TraceQuery, trace
from sgtrace.discover import discover
from sgtrace.graph.calls import CallIndex
from sgtrace.graph.points import Point
from sgtrace.graph.reach import MAX_CALLING_MODULES, REACH, candidates, search
from sgtrace.graph.store import from_data, to_data
from sgtrace.graph.types import Types
from sgtrace.index.body import read_body
from sgtrace.index.project import Project
from sgtrace.model import Cap
from sgtrace.parse import parse_tree
from sgtrace.sources import Target

# -- the guard of a call site -------------------------------------------------


def _call_guards(source: str) -> dict[str, tuple[str, ...]]:
    tree = parse_tree(textwrap.dedent(source).encode())
    body = read_body(tree.root_node.named_children[0])
    return {site.call.text: site.guard for site in body.calls}


@pytest.mark.parametrize(
    ("source", "call", "guard"),
    [
        ("def f(self):\n    if self.flag:\n        self.g()\n", "self.g()", ("self.flag",)),
        ("def f(a):\n    if a:\n        pass\n    else:\n        g()\n", "g()", ("not (a)",)),
        ("def f(a, b):\n    if a:\n        pass\n    elif b:\n        g()\n", "g()", ("not (a)", "b")),
        ("def f(a):\n    if a:\n        return 1\n    g()\n", "g()", ("not (a)",)),
        ("def f(a):\n    if a:\n        raise E()\n    return g()\n", "g()", ("not (a)",)),
        (
            "def f(a, b):\n    if a:\n        return 1\n    elif b:\n        return 2\n    g()\n",
            "g()",
            ("not (a)", "not (b)"),
        ),
        (
            "def f(a, b):\n    if a:\n        h()\n    elif b:\n        return 2\n    g()\n",
            "g()",
            (),
        ),  # a may fall through
        (
            "def f(a):\n    if a:\n        if b:\n            return 1\n        else:\n            return 2\n    g()\n",
            "g()",
            ("not (a)",),
        ),  # fmt: skip
        (
            "def f(xs):\n    for x in xs:\n        if x:\n            continue\n        g(x)\n    h()\n",
            "g(x)",
            ("not (x)",),
        ),
        ("def f(xs):\n    for x in xs:\n        if x:\n            continue\n        g(x)\n    h()\n", "h()", ()),
        ("def f(a):\n    x = g() if a else 0\n", "g()", ()),  # a conditional expression is not a statement guard
    ],
)
def test_call_guard(source: str, call: str, guard: tuple[str, ...]) -> None:
    assert _call_guards(source)[call] == guard


def test_early_returns_do_not_change_assignment_guards() -> None:
    tree = parse_tree(b"def f(a):\n    if a:\n        return 1\n    x = g()\n")
    body = read_body(tree.root_node.named_children[0])
    assert [a.guard for a in body.assignments] == [()]
    assert [a.exits for a in body.assignments] == [("not (a)",)]  # kept apart: the write is not in a branch
    assert [c.guard for c in body.calls] == [("not (a)",)]


def test_a_cap_after_an_early_return_carries_its_exit(tmp_path: Path) -> None:
    from sgtrace.api import caps
    from sgtrace.report import caps_text

    (tmp_path / "runner.py").write_text(
        "class Runner:\n"
        "    def init_pool(self, total):\n"
        "        self.max_total_num_tokens = int(total * self.mem_fraction_static) // 4096\n"
        "        if self.all_swa:\n"
        "            return\n"
        "        self.max_total_num_tokens = min(self.max_total_num_tokens, self.server_args.max_total_tokens)\n"
    )
    found = caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", Target(str(tmp_path), "t"),
                 RunOptions(jobs=1, cache_dir=None))  # fmt: skip
    by_line = {c.line: c for c in found.caps}
    assert by_line[6].exits == ("not (self.all_swa)",) and by_line[6].guard == ()
    assert by_line[6].category == "min"
    assert "when: not (self.all_swa)" in caps_text.render(found)


# -- the callers the graph stage records, on a small tree ---------------------------------------

TREE = {
    "pkg/__init__.py": "",
    "pkg/server_args.py": """
        from dataclasses import dataclass

        @dataclass
        class ServerArgs:
            mem_fraction_static: float = 0.88
            disaggregation_mode: str = "null"
            enable_shrink: bool = False
        """,
    "pkg/modes.py": """
        from enum import Enum

        class Mode(Enum):
            NULL = "null"
            DECODE = "decode"
        """,
    "pkg/runner.py": """
        class Runner:
            def __init__(self, server_args, total_gpu_memory):
                self.server_args = server_args
                self.shrinking = server_args.enable_shrink
                self.init_pool(total_gpu_memory)

            def init_pool(self, total_gpu_memory):
                rest = total_gpu_memory * self.server_args.mem_fraction_static
                self.max_total_num_tokens = int(rest) // 4096
                if self.shrinking:
                    self.shrink()

            def shrink(self):
                self.max_total_num_tokens = self.max_total_num_tokens // 2
        """,
    "pkg/queue.py": """
        class DecodeQueue:
            def __init__(self, max_total_num_tokens, limit):
                self.max_total_num_tokens = max_total_num_tokens
                if limit is not None:
                    self.max_total_num_tokens = min(self.max_total_num_tokens, limit)
        """,
    "pkg/scheduler.py": """
        from pkg.modes import Mode
        from pkg.queue import DecodeQueue
        from pkg.runner import Runner

        class Scheduler:
            def __init__(self, server_args):
                self.server_args = server_args
                self.disaggregation_mode = Mode(server_args.disaggregation_mode)
                self.runner = Runner(server_args, 80)
                self.max_total_num_tokens = self.runner.max_total_num_tokens
                self.init_disaggregation()

            def init_disaggregation(self):
                if self.disaggregation_mode == Mode.DECODE:
                    self.queue = DecodeQueue(self.max_total_num_tokens, 1024)

        def run_scheduler(server_args):
            return Scheduler(server_args)
        """,
    "pkg/loop.py": """
        def start(flag):
            if flag:
                ping(3)

        def ping(n):
            if n > 0:
                pong(n - 1)

        def pong(n):
            ping(n)

        def ring_a():
            ring_b()

        def ring_b():
            ring_a()
        """,
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reach")
    for name, source in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(source))
    return root


@pytest.fixture(scope="module")
def recorded(tree: Path) -> dict[str, Any]:
    graph = trace(
        TraceQuery("max_total_num_tokens"), Target(str(tree), "t"), RunOptions(jobs=1, cache_dir=None), reach=True
    ).graph
    data: dict[str, Any] = graph.graph[REACH]
    return data


def _callers(data: dict[str, Any], function: str) -> list[tuple[str, int, tuple[str, ...]]]:
    (entry,) = [f for f in data["functions"] if f["function"] == function]
    assert entry["searched"]
    return [(row[2], row[3], tuple(row[4])) for row in entry["callers"]]


def _verdict(paths: Paths, key: tuple[str, str], facts: dict[str, Any], base: frozenset[Any] = frozenset()) -> Verdict:
    return Reach(paths, lambda text, *_: truth(text, facts, paths.constants), base).function(key)


def test_a_method_called_only_under_a_flag(recorded: dict[str, Any]) -> None:
    assert _callers(recorded, "Runner.shrink") == [("Runner.init_pool", 12, ("self.shrinking",))]
    assert _callers(recorded, "Runner.init_pool") == [("Runner.__init__", 6, ())]


def test_a_class_built_only_in_one_mode(recorded: dict[str, Any]) -> None:
    rows = _callers(recorded, "DecodeQueue.__init__")
    assert rows == [("Scheduler.init_disaggregation", 16, ("self.disaggregation_mode == Mode.DECODE",))]
    assert recorded["constants"] == {"Mode.DECODE": '"decode"'}  # read from the enum, in the caller's module


def test_up_to_an_entry_point(recorded: dict[str, Any]) -> None:
    assert _callers(recorded, "Runner.__init__") == [("Scheduler.__init__", 10, ())]
    assert _callers(recorded, "Scheduler.__init__") == [("run_scheduler", 19, ())]
    assert _callers(recorded, "run_scheduler") == []  # nothing in the tree calls it


def test_the_reach_data_survives_the_graph_store(tree: Path) -> None:
    graph = trace(
        TraceQuery("max_total_num_tokens"), Target(str(tree), "t"), RunOptions(jobs=1, cache_dir=None), reach=True
    ).graph
    again = from_data(to_data(graph))
    assert again.graph[REACH] == graph.graph[REACH] and read_paths(again.graph[REACH]) is not None


def test_a_cycle_ends(tree: Path) -> None:
    project = Project(discover(str(tree)))
    data = search(CallIndex(project, Types(project)), [("pkg/loop.py", "ping"), ("pkg/loop.py", "ring_a")])
    assert _callers(data, "ping") == [("pong", 11, ()), ("start", 4, ("flag",))]
    assert _callers(data, "pong") == [("ping", 8, ("n > 0",))]
    assert _callers(data, "ring_a") == [("ring_b", 17, ())] and _callers(data, "ring_b") == [("ring_a", 14, ())]
    paths = read_paths(data)
    assert paths is not None
    ping, ring = ("pkg/loop.py", "ping"), ("pkg/loop.py", "ring_a")
    assert _verdict(paths, ping, {"flag": True}).value is True
    off = _verdict(paths, ping, {"flag": False})
    assert off.value is False and off.false == (("flag", "start, pkg/loop.py:4"),)
    assert _verdict(paths, ping, {}).needs == (("flag", "flag", "start, pkg/loop.py:4"),)
    ring_verdict = _verdict(paths, ring, {})
    assert ring_verdict.value is None and "only called from functions it calls" in ring_verdict.notes[0]


# -- statuses, with the recorded paths and a run's facts ----------------------------------------


def _status(data: dict[str, Any], cap: Cap, facts: dict[str, Any]) -> tuple[str, str]:
    result = explain([], [cap], "mem_fraction_static", facts, read_paths(data))
    ((_, status, why),) = result.caps
    return status, why


SHRINK = Cap("pkg/runner.py", 15, "pkg.runner.Runner", "Runner.shrink", "max_total_num_tokens", "split", (), (), "")
QUEUE = Cap("pkg/queue.py", 6, "pkg.queue.DecodeQueue", "DecodeQueue.__init__", "max_total_num_tokens", "min",
            ("limit is not None",), (), "")  # fmt: skip


@pytest.mark.parametrize(
    ("cap", "facts", "status", "words"),
    [
        (SHRINK, {"shrinking": False}, "not reached", "self.shrinking is false (the call in Runner.init_pool"),
        (SHRINK, {"shrinking": True}, "applies", "no condition on this write"),
        (SHRINK, {}, "unknown", "needs shrinking (--set shrinking=VALUE) for self.shrinking"),
        (
            QUEUE,
            {"disaggregation_mode": "null", "limit": 8},
            "not reached",
            "self.disaggregation_mode == Mode.DECODE is false",
        ),
        (QUEUE, {"disaggregation_mode": "decode", "limit": 8}, "applies", "limit is not None"),
        (QUEUE, {"disaggregation_mode": "decode"}, "unknown", "needs limit (--set limit=VALUE)"),
        (QUEUE, {"limit": 8}, "unknown", "needs disaggregation_mode (--set disaggregation_mode=VALUE)"),
        (QUEUE, {"disaggregation_mode": "null"}, "not reached", "is false"),  # a false way in decides it
    ],
)
def test_status_with_the_way_in(
    recorded: dict[str, Any], cap: Cap, facts: dict[str, Any], status: str, words: str
) -> None:
    found, why = _status(recorded, cap, facts)
    assert found == status and words in why, why


def test_a_write_after_an_early_return_runs_only_past_it(recorded: dict[str, Any]) -> None:
    import dataclasses

    past = dataclasses.replace(SHRINK, exits=("not (self.frozen)",))
    assert _status(recorded, past, {"shrinking": True, "frozen": True})[0] == "not reached"
    assert _status(recorded, past, {"shrinking": True, "frozen": False}) == ("applies", "not (self.frozen)")
    assert _status(recorded, past, {"shrinking": True}) == ("unknown", _status(recorded, past, {"shrinking": True})[1])
    assert "frozen" in _status(recorded, past, {"shrinking": True})[1]


def test_base_function_is_reached_whatever_its_callers(recorded: dict[str, Any]) -> None:
    base = Cap("pkg/runner.py", 10, "pkg.runner.Runner", "Runner.init_pool", "max_total_num_tokens", "base", (), (), "")
    only_if = Paths({("pkg/runner.py", "Runner.init_pool"): (Call("x.py", "f", 1, ("never",)),)})
    result = explain([], [base, SHRINK], "mem_fraction_static", {"shrinking": True, "never": False}, only_if)
    assert [s for _, s, _ in result.caps] == ["applies", "unknown"]  # shrink's callers were not searched here


# -- the evaluation on paths built by hand -------------------------------------------------------


F, G, H = ("f.py", "f"), ("g.py", "g"), ("h.py", "h")


def test_one_true_way_in_is_enough() -> None:
    paths = Paths({F: (Call("g.py", "g", 3, ("a",)), Call("h.py", "h", 4, ("b",))), G: (), H: ()})
    assert _verdict(paths, F, {"a": False, "b": True}).value is True
    assert _verdict(paths, F, {"a": True}).value is True  # b unknown, a decides
    both_false = _verdict(paths, F, {"a": False, "b": False})
    assert both_false.value is False and [t for t, _ in both_false.false] == ["a", "b"]
    assert _verdict(paths, F, {"a": False}).needs == (("b", "b", "h, h.py:4"),)


def test_a_false_condition_decides_even_beside_an_unknown_one() -> None:
    paths = Paths({F: (Call("g.py", "g", 3, ("a", "b")),), G: ()})
    assert _verdict(paths, F, {"b": False}).value is False
    assert _verdict(paths, F, {"b": True}).value is None
    assert _verdict(paths, F, {"a": True, "b": True}).value is True
    assert _verdict(Paths({F: (Call("g.py", "g", 3, ("a and b",)),), G: ()}), F, {"b": False}).value is False


def test_callers_not_searched_are_unknown_never_an_entry() -> None:
    verdict = _verdict(Paths({F: (Call("g.py", "g", 3, ()),)}), F, {})
    assert verdict.value is None and verdict.notes == ("the callers of g were not followed",)
    assert _verdict(Paths(), F, {}, base=frozenset({F})).value is True


def test_an_override_runs_only_where_its_class_is_built() -> None:
    call = Call("g.py", "g", 3, (), instances=("m.Hybrid",))
    built = {"m.Hybrid": (Call("h.py", "h", 9, ("kvc.is_hybrid_swa",)),)}
    paths = Paths({F: (call,), G: (), H: ()}, built)
    assert _verdict(paths, F, {"is_hybrid_swa": True}).value is True
    assert _verdict(paths, F, {"is_hybrid_swa": False}).false == (("kvc.is_hybrid_swa", "h, h.py:9"),)
    assert _verdict(paths, F, {}).needs[0][0] == "is_hybrid_swa"
    nowhere = _verdict(Paths({F: (call,), G: ()}, {"m.Hybrid": ()}), F, {})
    assert nowhere.value is None and nowhere.notes == ("no call of the tree builds Hybrid",)


def test_constants_are_compared_by_value() -> None:
    paths = Paths({F: (Call("g.py", "g", 3, ("( self.mode == Mode.DECODE )",)),), G: ()}, {}, {"Mode.DECODE": "decode"})
    verdict = _verdict(paths, F, {"mode": "null"})
    assert verdict.value is False and verdict.false[0][0] == "self.mode == Mode.DECODE"  # parentheses dropped
    assert _verdict(paths, F, {"mode": "decode"}).value is True


def test_foreign_reach_data_is_ignored() -> None:
    assert read_paths(None) is None and read_paths({"functions": [{"path": 1}]}) is None
    assert read_paths({"functions": [], "classes": [], "constants": {"X.Y": "not a literal("}}) is None


def test_candidates_on_a_graph_built_by_hand() -> None:
    """Functions with a step between a knob combined with something and the pool, or a guarded pool write."""
    g = nx.DiGraph()
    knob = Point("knob", "server_args.mem_fraction_static", "", 0)
    rest = Point("local", "f.rest", "a.py", 3)
    pool = Point("write", "R.max_total_num_tokens", "a.py", 4)
    size = Point("local", "h.size", "b.py", 7)  # a constant copied in: not combined with a knob
    other = Point("write", "R.max_total_num_tokens", "c.py", 9)  # replaces the pool under a condition
    stats = Point("write", "Stats.max_total_num_tokens", "d.py", 2)  # a write of the pool: a step as any
    for point, function in ((rest, "f"), (pool, "f"), (size, "h"), (other, "k"), (stats, "m")):
        g.add_node(point, function=function)
    g.add_node(Point("const", "4096", "b.py", 6))
    g.nodes[pool]["seed"] = g.nodes[other]["seed"] = g.nodes[stats]["seed"] = "write"
    g.nodes[other]["guard"] = ["self.small"]
    g.add_edge(knob, rest, op="mul")
    g.add_edge(rest, pool, op="floordiv")
    g.add_edge(Point("const", "4096", "b.py", 6), size, op="copy")
    g.add_edge(size, pool, op="floordiv")
    g.add_edge(other, pool, op="copy")
    g.add_edge(pool, stats, op="copy")
    assert candidates(g, "max_total_num_tokens") == [("a.py", "f"), ("c.py", "k"), ("d.py", "m")]


# -- an override whose name the whole tree calls ---------------------------------------------------

#: ``initialize`` is called in more modules than the search follows a name into (MAX_CALLING_MODULES), so
#: its callers are only searched within the classes of its family: there ``Runner.__init__`` runs it, on a
#: ``StubRunner`` only, which is built under ``use_stub``.
BUSY = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        class Runner:
            def __init__(self, total):
                self.total = total
                self.initialize()

            def initialize(self):
                self.max_total_num_tokens = int(self.total * 0.9) // 64
        """,
    "pkg/stub.py": """
        from pkg.runner import Runner

        class StubRunner(Runner):
            def __init__(self, total, size):
                self._size = size
                super().__init__(total)

            def initialize(self):
                if self._size is not None:
                    self.max_total_num_tokens = self._size
        """,
    "pkg/main.py": """
        from pkg.runner import Runner
        from pkg.stub import StubRunner

        def start(total, use_stub):
            if use_stub:
                return StubRunner(total, None)
            return Runner(total)
        """,
    **{
        f"pkg/other{n}.py": f"""
        def setup{n}(thing):
            thing.initialize()
        """
        for n in range(MAX_CALLING_MODULES + 2)
    },
}


def test_an_override_called_all_over_the_tree_is_searched_in_its_class_family(tmp_path: Path) -> None:
    for name, source in BUSY.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(source))
    graph = trace(
        TraceQuery("max_total_num_tokens"), Target(str(tmp_path), "t"), RunOptions(jobs=1, cache_dir=None), reach=True
    ).graph
    data = graph.graph[REACH]
    (entry,) = [f for f in data["functions"] if f["function"] == "StubRunner.initialize"]
    assert entry["searched"] and [row[2:6] for row in entry["callers"]] == [
        ["Runner.__init__", 5, [], ["pkg.stub.StubRunner"]]
    ]  # the setupN calls, on receivers of no known class, are not followed into
    paths = read_paths(data)
    assert paths is not None
    key = ("pkg/stub.py", "StubRunner.initialize")
    off = _verdict(paths, key, {"use_stub": False})
    assert off.value is False and off.false == (("use_stub", "start, pkg/main.py:7"),)
    assert _verdict(paths, key, {"use_stub": True}).value is True
    assert _verdict(paths, key, {}).needs[0][0] == "use_stub"
