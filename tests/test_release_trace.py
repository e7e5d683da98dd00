"""``trace`` on real releases: the chain from the budget formula to the scheduler's pool size.

The hops are the ones an operator would otherwise follow by hand; class and
function names below were read from each release's code.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from sgtrace.api import trace
from sgtrace.graph.points import Point
from sgtrace.index.findpass import RunOptions
from sgtrace.model import TraceQuery, TraceResult
from sgtrace.sources import Target
from tests import releases

pytestmark = pytest.mark.release


def _trace(version: str, tmp_path: Path) -> TraceResult:
    root = releases.release(version)
    return trace(
        TraceQuery("max_total_num_tokens"), Target(str(root), f"sglang=={version}"), RunOptions(cache_dir=tmp_path)
    )


def _node(graph: nx.DiGraph, kind: str, label: str, path_end: str = "") -> Point:
    found = [p for p in graph.nodes if p.kind == kind and p.label == label and p.path.endswith(path_end)]
    assert found, f"no {kind} {label} in the graph"
    return sorted(found)[0]


def _chain(graph: nx.DiGraph, hops: list[Point]) -> None:
    for upstream, downstream in zip(hops, hops[1:], strict=False):
        assert nx.has_path(graph, upstream, downstream), f"no flow {upstream.label} -> {downstream.label}"


@pytest.fixture(scope="module")
def middle(tmp_path_factory: pytest.TempPathFactory) -> TraceResult:
    return _trace(releases.MIDDLE, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def newest(tmp_path_factory: pytest.TempPathFactory) -> TraceResult:
    return _trace(releases.NEWEST, tmp_path_factory.mktemp("cache"))


def test_0_5_9_chain_from_rest_memory_to_the_scheduler(middle: TraceResult) -> None:
    g = middle.graph
    knob = _node(g, "param", "ModelRunner.__init__(mem_fraction_static)")
    budget_attr = _node(g, "write", "ModelRunner.mem_fraction_static", "model_runner.py")
    budget_read = _node(g, "read", "self.mem_fraction_static", "model_runner_kv_cache_mixin.py")
    rest = [p for p in g.nodes if p.kind == "local" and p.label.endswith("profile_max_num_token.rest_memory")]
    profiled = _node(g, "return", "ModelRunnerKVCacheMixin.profile_max_num_token()")
    mixin_write = next(
        p
        for p in g.predecessors(_node(g, "read", "self.model_runner.max_total_num_tokens", "tp_worker.py"))
        if p.label == "ModelRunnerKVCacheMixin.max_total_num_tokens" and profiled in g.predecessors(p)
    )
    worker_read = _node(g, "read", "self.model_runner.max_total_num_tokens", "tp_worker.py")
    worker_write = _node(g, "write", "TpModelWorker.max_total_num_tokens")
    info = _node(g, "return", "TpModelWorker.get_worker_info()[0]")
    scheduler = _node(g, "write", "Scheduler.max_total_num_tokens")
    _chain(
        g,
        [knob, budget_attr, budget_read, min(rest), profiled, mixin_write, worker_read, worker_write, info, scheduler],
    )
    # the exact edges of the hops that grep cannot see
    assert g.edges[info, scheduler]["op"] == "unpack[0]"
    assert g.edges[worker_read, worker_write]["op"] == "copy"
    assert g.edges[budget_attr, budget_read]["op"] == "copy"
    # the scheduler's mixins read the scheduler's value
    mixin_reads = [r for r in g.successors(scheduler) if r.path.endswith("scheduler_metrics_mixin.py")]
    assert mixin_reads


def test_0_5_9_the_metrics_gauge_does_not_feed_the_scheduler(middle: TraceResult) -> None:
    g = middle.graph
    gauge = _node(g, "write", "SchedulerMetricsCollector.max_total_num_tokens")
    scheduler = _node(g, "write", "Scheduler.max_total_num_tokens")
    assert not nx.has_path(g, gauge, scheduler)
    assert not any(r.path.endswith("collector.py") for r in g.successors(scheduler))


def test_newest_chain_through_accessor_configurators_and_config_objects(newest: TraceResult) -> None:
    g = newest.graph
    knob = _node(g, "knob", "get_schedule().mem_fraction_static")
    rest = min(p for p in g.nodes if p.kind == "local" and p.label.endswith("._profile_available_bytes.rest_memory"))
    pool_config = _node(g, "field", "MemoryPoolConfig.max_total_num_tokens")
    sizes = _node(g, "field", "_PoolSizes.max_total_num_tokens")
    result = _node(g, "field", "KVCacheConfigResult.max_total_num_tokens")
    runner = _node(g, "read", "result.max_total_num_tokens", "model_runner.py")
    scheduler = _node(g, "write", "Scheduler.max_total_num_tokens")
    _chain(g, [knob, rest, pool_config, sizes, result, runner, scheduler])
    # the configurator is picked at run time: overrides in several subclasses feed the config object
    configurators = {
        p.label.split(".")[0] for p in nx.ancestors(g, pool_config) if p.path.endswith("pool_configurator.py")
    }
    assert len(configurators) >= 3, configurators
