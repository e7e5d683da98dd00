"""The data-flow graph of ``trace``: one test per snippet tree, and the renderers on hand-built graphs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import pytest

from sgtrace.api import RunOptions, TraceQuery, trace
from sgtrace.graph.points import Point
from sgtrace.graph.store import from_data, to_data
from sgtrace.model import TraceResult
from sgtrace.report import dot, tree
from sgtrace.sources import Target
from tests.conftest import FIXTURES

SNIPPETS = FIXTURES / "sglang_snippets"
MTNT = "max_total_num_tokens"


def graph_of(root: Path, attribute: str = MTNT) -> nx.DiGraph:
    result = trace(TraceQuery(attribute), Target(str(root), "t"), RunOptions(jobs=1, cache_dir=None))
    assert result.errors == ()
    return result.graph


def node(g: nx.DiGraph, kind: str, label: str, where: str | None = None) -> Point:
    """The one node of *kind* and *label* (at ``path:line`` when given)."""
    found: list[Point] = [
        p for p in g if p.kind == kind and p.label == label and (where is None or f"{p.path}:{p.line}" == where)
    ]
    assert len(found) == 1, (kind, label, where, sorted(g))
    return found[0]


def op(g: nx.DiGraph, source: Point, target: Point) -> str:
    """The edge's op, prefixed with ``~`` when approximate."""
    data = g.edges[source, target]
    return ("~" if data["approximate"] else "") + str(data["op"])


def feeders(g: nx.DiGraph, point: Point) -> set[tuple[str, str, str, str]]:
    """(kind, label, path:line, op) of every edge into *point*."""
    return {(p.kind, p.label, f"{p.path}:{p.line}", op(g, p, point)) for p in g.predecessors(point)}


def chain(g: nx.DiGraph, source: Point, target: Point) -> list[tuple[str, str, str, str]]:
    """The one shortest path as (kind, label, path:line) steps, each with the op of the edge into it."""
    paths = list(nx.all_shortest_paths(g, source, target))
    assert len(paths) == 1, paths
    points = paths[0]
    ops = ["", *(op(g, a, b) for a, b in zip(points, points[1:], strict=False))]
    return [(p.kind, p.label, f"{p.path}:{p.line}", o) for p, o in zip(points, ops, strict=True)]


def test_mixin_self() -> None:
    g = graph_of(SNIPPETS / "mixin_self")
    start = node(g, "param", "Runner.__init__(mem_fraction_static)")
    capacity = node(g, "read", f"self.{MTNT}", "runner.py:11")
    assert chain(g, start, capacity) == [
        ("param", "Runner.__init__(mem_fraction_static)", "runner.py:6", ""),
        ("write", "Runner.mem_fraction_static", "runner.py:7", "copy"),
        ("read", "self.mem_fraction_static", "kv_mixin.py:6", "copy"),
        ("write", f"KVCacheMixin.{MTNT}", "kv_mixin.py:6", "floordiv"),
        ("read", f"self.{MTNT}", "runner.py:11", "copy"),
    ]
    init = node(g, "write", f"KVCacheMixin.{MTNT}", "kv_mixin.py:6")
    shrink = node(g, "write", f"KVCacheMixin.{MTNT}", "kv_mixin.py:9")
    assert g.nodes[init]["seed"] == g.nodes[shrink]["seed"] == "write"
    assert set(g.predecessors(capacity)) == {init, shrink}
    assert feeders(g, shrink) == {
        ("read", f"self.{MTNT}", "kv_mixin.py:9", "floordiv"),
        ("param", "KVCacheMixin.shrink_pool(factor)", "kv_mixin.py:8", "floordiv"),
    }
    memory = node(g, "param", "KVCacheMixin.init_memory_pool(total_gpu_memory)")
    assert {(p.kind, p.path, p.line, op(g, p, memory)) for p in g.predecessors(memory)} == {
        ("const", "runner.py", 8, "param")
    }


def test_type_checking_import() -> None:
    g = graph_of(SNIPPETS / "type_checking_import")
    written = node(g, "write", f"Runner.{MTNT}", "runner.py:6")
    for where in ("tuning.py:11", "tuning.py:15"):  # `runner: Runner` and `runner: "Runner"`
        read = node(g, "read", f"runner.{MTNT}", where)
        # Runner.__init__'s write, and clamp_pool's write through `runner: Runner` (slots are flow-insensitive)
        assert feeders(g, read) == {
            ("write", f"Runner.{MTNT}", "runner.py:6", "copy"),
            ("write", f"runner.{MTNT}", "tuning.py:11", "copy"),
        }
    assert chain(g, node(g, "param", "Runner.__init__(tokens)"), node(g, "read", f"runner.{MTNT}", "tuning.py:15")) == [
        ("param", "Runner.__init__(tokens)", "runner.py:5", ""),
        ("write", f"Runner.{MTNT}", "runner.py:6", "copy"),
        ("read", f"runner.{MTNT}", "tuning.py:15", "copy"),
    ]
    assert feeders(g, node(g, "write", f"runner.{MTNT}", "tuning.py:11")) == {
        ("read", f"runner.{MTNT}", "tuning.py:11", "min"),
        ("param", "clamp_pool(limit)", "tuning.py:10", "min"),
    }
    assert g.nodes[written]["seed"] == "write"
    assert not [p for p in g if p.kind == "unknown"]


def test_property_chain() -> None:
    g = graph_of(SNIPPETS / "property_chain")
    assert chain(g, node(g, "const", "4096"), node(g, "read", f"self.runner.{MTNT}", "worker.py:14")) == [
        ("const", "4096", "worker.py:7", ""),
        ("param", "Runner.__init__(tokens)", "runner.py:5", "param"),
        ("write", f"Runner.{MTNT}", "runner.py:6", "copy"),
        ("read", f"self.runner.{MTNT}", "worker.py:14", "copy"),
    ]
    cap = node(g, "write", f"self.runner.{MTNT}", "worker.py:17")
    assert feeders(g, cap) == {("param", "Worker.cap(limit)", "worker.py:16", "copy")}
    assert not [p for p in g if p.kind == "unknown"]


def test_tuple_return() -> None:
    g = graph_of(SNIPPETS / "tuple_return")
    scheduler = node(g, "write", f"Scheduler.{MTNT}", "scheduler.py:10")
    steps = chain(g, node(g, "const", "4096"), scheduler)
    assert [(kind, label, o) for kind, label, _, o in steps] == [
        ("const", "4096", ""),
        ("write", f"Worker.{MTNT}", "copy"),
        ("read", f"self.{MTNT}", "copy"),
        ("return", "Worker.get_worker_info()[1]", "unpack[1]"),
        ("write", f"Scheduler.{MTNT}", "unpack[1]"),
    ]
    assert g.nodes[scheduler]["seed"] == "write"
    assert [p.label for p in g if p.kind == "return"] == ["Worker.get_worker_info()[1]"]
    assert not [p for p in g if "device" in p.label or "prefill" in p.label]  # elements 0 and 2 stay out
    assert not list(g.successors(scheduler))


def test_tuple_return_element_read_is_the_seed_read() -> None:
    g = graph_of(SNIPPETS / "tuple_return")
    assert [f"{p.path}:{p.line}" for p in g if p.kind == "read"] == ["worker.py:13"]
    element = node(g, "read", f"self.{MTNT}", "worker.py:13")
    returned = node(g, "return", "Worker.get_worker_info()[1]")
    assert g.has_edge(element, returned) and op(g, element, returned) == "unpack[1]"


def test_dataclass_kwargs() -> None:
    g = graph_of(SNIPPETS / "dataclass_kwargs")
    field = node(g, "field", f"PoolConfig.{MTNT}", "config.py:8")
    assert g.nodes[field]["seed"] == "write"
    assert feeders(g, field) == {  # max_total_num_tokens=profiled // page_size * page_size
        ("param", "build_pool_config(profiled)", "build.py:5", "field"),
        ("param", "build_pool_config(page_size)", "build.py:5", "field"),
    }
    assert [p for p in g if p.kind == "field"] == [field]


def test_msgspec_struct() -> None:
    g = graph_of(SNIPPETS / "msgspec_struct")
    plain = node(g, "field", f"Cfg.{MTNT}", "config.py:6")
    frozen = node(g, "field", f"FrozenCfg.{MTNT}", "config.py:11")
    assert chain(g, node(g, "param", "build(tokens)"), frozen) == [
        ("param", "build(tokens)", "build.py:5", ""),
        ("field", f"Cfg.{MTNT}", "config.py:6", "field"),
        ("read", f"cfg.{MTNT}", "build.py:7", "field"),
        ("field", f"FrozenCfg.{MTNT}", "config.py:11", "field"),
    ]
    assert not nx.has_path(g, frozen, plain)


def test_replace_call() -> None:
    g = graph_of(SNIPPETS / "replace_call")
    config = node(g, "field", f"PoolConfig.{MTNT}", "config.py:9")
    spec = node(g, "field", f"PoolSpec.{MTNT}", "config.py:14")
    assert feeders(g, config) == {  # dataclasses.replace(cfg, max_total_num_tokens=min(cfg.X, limit))
        ("read", f"cfg.{MTNT}", "resize.py:10", "field"),
        ("param", "shrink_config(limit)", "resize.py:9", "field"),
    }
    assert feeders(g, spec) == {  # msgspec.structs.replace(spec, ...)
        ("read", f"spec.{MTNT}", "resize.py:14", "field"),
        ("param", "shrink_spec(limit)", "resize.py:13", "field"),
    }
    assert feeders(g, node(g, "read", f"cfg.{MTNT}")) == {("field", f"PoolConfig.{MTNT}", "config.py:9", "field")}
    assert not nx.has_path(g, spec, config) and not nx.has_path(g, config, spec)


def test_accessor_function() -> None:
    g = graph_of(SNIPPETS / "accessor_function", "mem_fraction_static")
    field = node(g, "field", "ScheduleArgs.mem_fraction_static", "args.py:8")
    assert g.nodes[field]["seed"] == "write"
    assert feeders(g, field) == {("const", "0.85", "args.py:8", "default")}
    for where in ("use.py:6", "use.py:10"):  # get_schedule() -> ScheduleArgs by its return annotation
        read = node(g, "read", "get_schedule().mem_fraction_static", where)
        assert feeders(g, read) == {
            ("field", "ScheduleArgs.mem_fraction_static", "args.py:8", "field"),
            ("write", "get_schedule().mem_fraction_static", "use.py:10", "copy"),  # a write through the accessor
        }
    lowered = node(g, "write", "get_schedule().mem_fraction_static", "use.py:10")
    # the accessor's class declares the field, so the read is the field's, not a knob
    assert feeders(g, lowered) >= {
        ("read", "get_schedule().mem_fraction_static", "use.py:10", "sub"),
        ("param", "lower_fraction(step)", "use.py:9", "sub"),
    }
    assert not [p for p in g.nodes if p.kind == "knob"]


def test_accessor_function_write_reads_the_field() -> None:
    g = graph_of(SNIPPETS / "accessor_function", "mem_fraction_static")
    field = node(g, "field", "ScheduleArgs.mem_fraction_static", "args.py:8")
    assert nx.has_path(g, field, node(g, "write", "get_schedule().mem_fraction_static", "use.py:10"))


# (tree, attribute, receiver, write, read): a write through a receiver typed as the class, and a read of that class.
TYPED_RECEIVER_WRITES = [
    ("type_checking_import", MTNT, "runner", "tuning.py:11", "tuning.py:15"),  # `runner: Runner` under TYPE_CHECKING
    ("property_chain", MTNT, "self.runner", "worker.py:17", "worker.py:14"),  # Worker.runner is a @property
    ("accessor_function", "mem_fraction_static", "get_schedule()", "use.py:10", "use.py:6"),  # -> ScheduleArgs
]


@pytest.mark.parametrize(
    ("root", "attribute", "receiver", "at", "where"), TYPED_RECEIVER_WRITES, ids=[t[0] for t in TYPED_RECEIVER_WRITES]
)
def test_write_on_typed_receiver_feeds_reads(root: str, attribute: str, receiver: str, at: str, where: str) -> None:
    g = graph_of(SNIPPETS / root, attribute)
    label = f"{receiver}.{attribute}"
    source, target = node(g, "write", label, at), node(g, "read", label, where)
    assert g.has_edge(source, target) and op(g, source, target) == "copy"


def test_super_call() -> None:
    g = graph_of(SNIPPETS / "super_call")
    draft = node(g, "write", f"DraftRunner.{MTNT}", "draft.py:8")
    assert chain(g, node(g, "const", "8192"), draft) == [
        ("const", "8192", "base.py:6", ""),
        ("write", f"BaseRunner.{MTNT}", "base.py:6", "copy"),
        ("read", f"self.{MTNT}", "draft.py:8", "copy"),
        ("write", f"DraftRunner.{MTNT}", "draft.py:8", "floordiv"),
    ]
    assert feeders(g, draft) == {
        ("read", f"self.{MTNT}", "draft.py:8", "floordiv"),
        ("const", "2", "draft.py:8", "floordiv"),
    }
    assert not nx.has_path(g, draft, node(g, "write", f"BaseRunner.{MTNT}"))


def test_metrics_gauge() -> None:
    g = graph_of(SNIPPETS / "metrics_gauge")
    gauge = node(g, "write", f"MetricsCollector.{MTNT}", "collector.py:8")
    value = node(g, "write", f"Scheduler.{MTNT}", "scheduler.py:7")
    assert feeders(g, gauge) == {("call", "Gauge(...)", "collector.py:8", "copy")}
    assert feeders(g, value) == {("param", "Scheduler.__init__(tokens)", "scheduler.py:6", "copy")}
    assert set(g.predecessors(node(g, "read", f"self.{MTNT}", "scheduler.py:11"))) == {value}
    assert set(g.predecessors(node(g, "read", f"self.{MTNT}", "collector.py:15"))) == {gauge}
    for component in nx.weakly_connected_components(g):  # the Gauge and the scheduler's value never meet
        assert len({p.path for p in component if p.path}) == 1, component


def test_unknown_receiver_is_not_linked_to_same_named_writes(tmp_path: Path) -> None:
    root = tmp_path / "metrics_gauge"
    shutil.copytree(SNIPPETS / "metrics_gauge", root)
    (root / "loose.py").write_text(
        f"def show(obj):\n    return obj.{MTNT}\n\n\ndef cap(obj, limit: int) -> None:\n    obj.{MTNT} = limit\n"
    )
    g = graph_of(root)
    shown = node(g, "read", f"obj.{MTNT}", "loose.py:2")
    assert feeders(g, shown) == {("unknown", f"?.{MTNT}", ":0", "~read")}
    capped = node(g, "write", f"obj.{MTNT}", "loose.py:6")
    known = [p for p in g if p.path in ("collector.py", "scheduler.py")]
    assert known and not [p for p in known if nx.has_path(g, p, shown) or nx.has_path(g, capped, p)]


# -- renderers and the store, on a graph built by hand --------------------------------------

KNOB = Point("knob", "server_args.mem_fraction_static", "", 0)
PARAM = Point("param", "Runner.__init__(mem_fraction_static)", "runner.py", 5)
FRACTION = Point("write", "Runner.mem_fraction_static", "runner.py", 6)
FRACTION_READ = Point("read", "self.mem_fraction_static", "runner.py", 10)
PAGE = Point("const", "4096", "runner.py", 10)
FIRST = Point("write", f"Runner.{MTNT}", "runner.py", 10)
FACTOR = Point("param", "Runner.shrink(factor)", "runner.py", 13)
AGAIN = Point("read", f"self.{MTNT}", "runner.py", 14)
SECOND = Point("write", f"Runner.{MTNT}", "runner.py", 14)
EDGES = [
    (KNOB, PARAM, "param", False),
    (PARAM, FRACTION, "copy", False),
    (FRACTION, FRACTION_READ, "copy", False),
    (FRACTION_READ, FIRST, "mul", False),
    (PAGE, FIRST, "floordiv", False),
    (FIRST, AGAIN, "copy", False),
    (SECOND, AGAIN, "copy", False),
    (AGAIN, SECOND, "floordiv", False),
    (FACTOR, SECOND, "floordiv", True),
]
EXTRA: dict[Point, dict[str, object]] = {
    FIRST: {"seed": "write", "function": "Runner.init_memory_pool", "owner": "pkg.runner.Runner"},
    SECOND: {"seed": "write", "function": "Runner.shrink", "owner": "pkg.runner.Runner"},
    AGAIN: {"seed": "read", "function": "Runner.shrink", "owner": "pkg.runner.Runner", "guard": ["x > 0"]},
}


def hand_built(reverse: bool = False) -> nx.DiGraph:
    g = nx.DiGraph(attribute=MTNT, truncated=False)
    points = sorted({p for s, t, *_ in EDGES for p in (s, t)}, reverse=reverse)
    for p in points:
        g.add_node(p, kind=p.kind, label=p.label, path=p.path, line=p.line, **EXTRA.get(p, {}))
    for source, target, name, approximate in reversed(EDGES) if reverse else EDGES:
        g.add_edge(source, target, op=name, approximate=approximate)
    return g


UPSTREAM = """\
      <-copy- param Runner.__init__(mem_fraction_static)  runner.py:5
        <-param- KNOB server_args.mem_fraction_static  (outside the code)  [source]
"""
TREE = f"""\
data flow of .max_total_num_tokens under t

runner.py:10  write Runner.max_total_num_tokens  in Runner.init_memory_pool
  <-floordiv- const 4096  runner.py:10  [source]
  <-mul- read self.mem_fraction_static  runner.py:10
    <-copy- write Runner.mem_fraction_static  runner.py:6
{UPSTREAM}
runner.py:14  write Runner.max_total_num_tokens  in Runner.shrink
  <-~floordiv- param Runner.shrink(factor)  runner.py:13
  <-floordiv- read self.max_total_num_tokens  runner.py:14
    <-copy- write Runner.max_total_num_tokens  runner.py:10  (above)
    <-copy- write Runner.max_total_num_tokens  runner.py:14  (above)

reads of .max_total_num_tokens fed by these writes: 1 of 1
  runner.py:14  self.max_total_num_tokens  in Runner.shrink

knobs and environment variables upstream: server_args.mem_fraction_static
"""


def test_tree_render_folds_and_refers_above() -> None:
    result = TraceResult(MTNT, "t", hand_built(), truncated=False)
    assert tree.render(result) == TREE
    folded = TREE.replace(UPSTREAM, "      ... 2 more upstream (see --depth)\n")
    assert tree.render(result, depth=2) == folded


def test_dot_render_is_independent_of_insertion_order() -> None:
    text = dot.render(hand_built(), "demo")
    assert text == dot.render(hand_built(reverse=True), "demo")
    assert text.startswith('digraph "demo" {')
    assert '"param:runner.py:13:Runner.shrink(factor)" -> "write:runner.py:14:Runner.max_total_num_tokens" ' in text
    assert '[label="floordiv", style=dashed];' in text
    assert text.count("penwidth=2") == 2  # the two seed writes


def test_store_round_trip() -> None:
    g = hand_built()
    data = to_data(g)
    assert data == to_data(hand_built(reverse=True))
    back = from_data(json.loads(json.dumps(data)))
    assert back.graph == g.graph
    assert sorted(back.nodes(data=True)) == sorted(g.nodes(data=True))
    assert sorted(back.edges(data=True)) == sorted(g.edges(data=True))


def test_the_modules_matching_a_pattern_are_those_a_full_search_finds(tmp_path: Path) -> None:
    """The identifier index narrows the search, and a pattern that starts with its word is tried only where the
    word stands: neither may change which modules match."""
    import re

    from sgtrace.discover import discover
    from sgtrace.index.project import Project, call_pattern, write_pattern

    sources = {
        "a.py": "foo(1)\nx = get_ready()\n",
        "b.py": "xfoo(1)\nfoo_bar(2)\nclass K(Base, Mixin):\n    pass\n",
        "c.py": "y.foo  (3)\ndef get (self):\n    return 1\n",
        "d.py": "s = 'foo('\nclass Other(Base):\n    def get_x(self):\n        self.size = 2\n",
        "e.py": "o.size, p = 1, 2\nfoo\n(4)\nq.size == 3\n",
    }
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    project = Project(discover(str(tmp_path)))
    patterns = [call_pattern("foo"), r"def\s+get\s*\(", r"class\s+\w+\s*\([^)]*\bMixin\b", write_pattern("size"),
                r"\bget_ready\s*\(", r"\bnothing\s*\("]  # fmt: skip
    for pattern in patterns:
        every = {m for m in project.files if re.search(pattern.encode(), project.raw(m) or b"")}
        assert set(project.matching(pattern)) == every, pattern
    assert project.matching(call_pattern("foo")) == ("a", "c", "d", "e")  # a string too; `foo\n(4)`: \s spans lines
    assert project.matching("foo") == ("a", "c", "d", "e")  # a word of the pattern is a whole identifier


ENGINE_TREE = """
class Runner:
    def size(self):
        budget = self.options.pool_share * self.memory
        self.max_total_num_tokens = int(budget * fetch_limits().scale) // 4
"""


def test_the_engine_profile_says_which_reads_are_knobs(tmp_path: Path) -> None:
    """The slicer takes an engine's words from its profile: another engine's holder of arguments (``options``)
    and accessor prefix (``fetch_``) make those reads knobs, which SGLang's words (``server_args``, ``get_``) do
    not."""
    from dataclasses import replace

    from sgtrace.api import find
    from sgtrace.discover import discover
    from sgtrace.engine import SGLANG
    from sgtrace.graph.build import build
    from sgtrace.index.project import Project
    from sgtrace.model import FindQuery

    (tmp_path / "runner.py").write_text(ENGINE_TREE)
    found = find(FindQuery(MTNT), [Target(str(tmp_path), "t")], RunOptions(jobs=1, cache_dir=None))
    other = replace(SGLANG, name="other", arguments=("options",), accessor_prefix="fetch_")
    knobs = {}
    for engine in (SGLANG, other):
        graph = build(Project(discover(str(tmp_path))), MTNT, found.writes, found.reads or (), engine=engine).graph
        knobs[engine.name] = sorted(p.label for p in graph.nodes if p.kind == "knob")
    assert knobs == {"sglang": [], "other": ["fetch_limits().scale", "options.pool_share"]}


def test_the_engine_is_the_one_whose_package_the_tree_holds() -> None:
    from sgtrace.engine import LMDEPLOY, SGLANG, VLLM, engine_of

    assert engine_of(["vllm.worker.worker", "vllm.config"]) is VLLM
    assert engine_of(["lmdeploy.pytorch.engine.engine"]) is LMDEPLOY
    assert engine_of(["sglang.srt.server_args", "vllm.config"]) is SGLANG  # SGLang's tree vendoring another
    assert engine_of(["mypkg.worker", "vllmx.config"]) is SGLANG  # any other tree: SGLang's words
    assert engine_of([]) is SGLANG
