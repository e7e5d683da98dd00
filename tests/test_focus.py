"""The budget's view of the slice (analyses.focus): on a graph built by hand, and on the sample tree."""

from __future__ import annotations

import networkx as nx

from sgtrace import api
from sgtrace.analyses.caps import check
from sgtrace.analyses.focus import FOLDED, MEMBERS, ROLE, focus
from sgtrace.graph.points import Point
from sgtrace.index.findpass import RunOptions
from sgtrace.model import TraceQuery
from sgtrace.sources import Target, sample_tree
from tests.test_caps import _graph

BUDGET = "mem_fraction_static"


def _view(g: nx.DiGraph) -> nx.DiGraph:
    sites, caps = check(g, BUDGET)
    return focus(g, sites, caps, BUDGET)


def _roles(view: nx.DiGraph) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for node in view.nodes:
        found.setdefault(view.nodes[node][ROLE], set()).add(f"{node.label}@{node.path}:{node.line}")
    return found


def test_knobs_sites_caps_pool_and_readers_by_hand() -> None:
    g, p = _graph()
    reader = Point("read", "scheduler.max_total_num_tokens", "sched/s.py", 40)
    g.add_edge(p["copy"], reader, op="read")
    g.nodes[reader].update(seed="read", code="print(scheduler.max_total_num_tokens)")
    roles = _roles(_view(g))
    assert roles["knob"] == {
        "server_args.mem_fraction_static@:0", "server_args.max_total_tokens@:0",
        "server_args.page_size@:0", "server_args.draft_runner_cache_size@:0",
    }  # fmt: skip
    assert roles["budget"] == {"R.profile.rest_memory@r.py:3"}
    assert {n.rsplit(":", 1)[1] for n in roles["cap"]} == {"5", "10", "12", "13", "15"}
    # the scheduler's copy is a write another takes from (the stats field); the field feeds nothing: a reader
    assert roles["pool"] == {"S.max_total_num_tokens@s.py:20"}
    assert roles["reader"] == {"s.py@sched/s.py:40", "t.py@t.py:30"}  # grouped by file: the file's name
    # nodes neither shown nor grouped (the budget's copy, the call, a local) are folded into edges
    assert not any(label.startswith("self.mem_fraction_static") for r in roles.values() for label in r)


def test_edges_fold_what_is_not_shown_and_keep_the_last_op() -> None:
    g, p = _graph()
    view = _view(g)
    knob, site = p["knob"], p["rest"]
    assert view.edges[knob, site]["op"] == "sub" and view.edges[knob, site][FOLDED] == 1  # through the read
    assert view.edges[p["base"], p["min"]] == {"op": "min", "approximate": False, FOLDED: 0}
    assert view.edges[p["page"], p["round"]]["op"] == "mul"
    assert not nx.is_isolate(view, p["override"])


def test_readers_are_grouped_by_file_then_by_folder() -> None:
    g, p = _graph()
    for index in range(12):
        read = Point("read", "x.max_total_num_tokens", f"pkg/sub{index}/m.py", 10 + index)
        g.add_edge(p["copy"], read, op="read")
        g.nodes[read].update(seed="read", code=f"use(x.max_total_num_tokens, {index})")
    for index in range(2):
        read = Point("read", "y.max_total_num_tokens", "pkg/sub0/m.py", 50 + index)
        g.add_edge(p["copy"], read, op="read")
        g.nodes[read].update(seed="read", code="other()")
    view = _view(g)
    readers = [n for n in view.nodes if view.nodes[n][ROLE] == "reader"]
    assert len(readers) <= 10  # twelve files, more than ten: grouped by a shallower folder
    grouped = sum(len(view.nodes[n][MEMBERS]) for n in readers)
    assert grouped == 12 + 2 + 1  # every read, and the statistics field
    pkg = next(n for n in readers if n.label == "pkg/")
    assert (pkg.path, pkg.line) == ("pkg/sub0/m.py", 10)  # the group's first read


def test_sample_tree_focus_through_the_api() -> None:
    root = sample_tree()
    result = api.focus(TraceQuery("max_total_num_tokens"), BUDGET, Target(str(root), "<sample>"), RunOptions())
    view = result.graph
    roles = {view.nodes[n][ROLE] for n in view.nodes}
    assert roles == {"knob", "budget", "cap", "pool", "reader"}
    assert 10 <= view.number_of_nodes() <= 40 and result.stats["nodes"] == view.number_of_nodes()
    budget_knob = next(n for n in view.nodes if view.nodes[n].get("why") == "the budget knob")
    site = next(n for n in view.nodes if view.nodes[n][ROLE] == "budget")
    assert nx.has_path(view, budget_knob, site)
    mixin = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
    lines = (root / mixin).read_text().splitlines()
    base = next(
        i for i, text in enumerate(lines, 1) if "self.max_total_num_tokens = self.profile_max_num_token(" in text
    )
    [cap] = [n for n in view.nodes if (n.path, n.line) == (mixin, base)]
    assert view.nodes[cap][ROLE] == "cap" and view.nodes[cap]["category"] == "base"
    assert nx.has_path(view, site, cap)
