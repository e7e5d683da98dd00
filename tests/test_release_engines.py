"""caps and trace on two other serving engines: vLLM 0.6.6.post1 (V0) and LMDeploy 0.18.0 (PyTorch engine).

What each must report was read by hand from their code (docs/engines-notes.md);
lines are looked up in the fetched source by their text, never written here.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from sgtrace.api import caps, trace
from sgtrace.graph.points import Point
from sgtrace.index.findpass import RunOptions
from sgtrace.model import Cap, CapsResult, TraceQuery, TraceResult
from sgtrace.sources import Target
from tests import engines

pytestmark = pytest.mark.release

WORKER = "vllm/worker/worker.py"
EXECUTOR = "lmdeploy/pytorch/engine/executor/base.py"


def _line(root: Path, path: str, text: str, nth: int = 0) -> int:
    lines = (root / path).read_text().splitlines()
    return [i for i, line in enumerate(lines, 1) if text in line][nth]


def _bare_return_after(root: Path, path: str, text: str) -> int:
    lines = (root / path).read_text().splitlines()
    start = _line(root, path, text)
    return next(i for i, line in enumerate(lines, 1) if i > start and line.strip() == "return")


def _at(result: CapsResult, path: str, line: int) -> Cap:
    found = [c for c in result.caps if c.path == path and c.line == line]
    assert found, f"no cap at {path}:{line}: {[(c.path, c.line, c.category) for c in result.caps]}"
    return found[0]


def _exact(graph: nx.DiGraph) -> nx.DiGraph:
    return nx.subgraph_view(graph, filter_edge=lambda u, v: not graph.edges[u, v].get("approximate"))


def _node(graph: nx.DiGraph, kind: str, label: str, path: str) -> Point:
    found = [p for p in graph.nodes if p.kind == kind and p.label == label and p.path == path]
    assert found, f"no {kind} {label} in {path}"
    return sorted(found)[0]


@pytest.fixture(scope="module")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CapsResult, TraceResult]:
    root = engines.engine(engines.VLLM)
    target, options = Target(str(root), engines.VLLM), RunOptions(cache_dir=tmp_path_factory.mktemp("cache"))
    query = TraceQuery("num_gpu_blocks")
    return root, caps(query, "gpu_memory_utilization", target, options), trace(query, target, options)


@pytest.fixture(scope="module")
def lmdeploy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CapsResult, TraceResult]:
    root = engines.engine(engines.LMDEPLOY)
    target, options = Target(str(root), engines.LMDEPLOY), RunOptions(cache_dir=tmp_path_factory.mktemp("cache"))
    query = TraceQuery("num_gpu_blocks")
    return root, caps(query, "cache_max_entry_count", target, options), trace(query, target, options)


def test_vllm_budget_site_and_the_reserve_after_the_fraction(vllm: tuple[Path, CapsResult, TraceResult]) -> None:
    root, result, _ = vllm
    fraction = _line(root, WORKER, "memory_for_current_instance = total_gpu_memory")
    reserve = _line(root, WORKER, "available_kv_cache_memory = (memory_for_current_instance")
    assert {(WORKER, fraction), (WORKER, reserve)} <= {(s.path, s.line) for s in result.budget_sites}
    assert _at(result, WORKER, reserve).category == "reserve"


def test_vllm_caps_per_rank_base_reduce_override_split(vllm: tuple[Path, CapsResult, TraceResult]) -> None:
    root, result, _ = vllm
    base = _at(
        result, WORKER, _line(root, WORKER, "num_gpu_blocks = int(available_kv_cache_memory // cache_block_size)")
    )
    assert (base.category, base.guard, base.approximate) == ("base", ("not (cache_block_size == 0)",), False)
    attention_free = _at(result, WORKER, _line(root, WORKER, "num_gpu_blocks = 0"))
    assert (attention_free.category, attention_free.guard) == ("override", ("cache_block_size == 0",))
    distributed = "vllm/executor/distributed_gpu_executor.py"
    reduced = _at(result, distributed, _line(root, distributed, "num_gpu_blocks = min(b[0] for b in num_blocks)"))
    assert (reduced.category, reduced.function) == ("reduce", "DistributedGPUExecutor.determine_num_available_blocks")
    assert reduced.approximate  # the workers' method is run by name: _run_workers("determine_num_available_blocks")
    engine = "vllm/engine/llm_engine.py"
    user = _at(result, engine, _line(root, engine, "num_gpu_blocks = num_gpu_blocks_override"))
    assert (user.category, user.guard) == ("override", ("self.cache_config.num_gpu_blocks_override is not None",))
    assert user.knobs == ("cache_config.num_gpu_blocks_override",)  # vLLM's words: its config objects hold the knobs
    stages = "vllm/worker/cache_engine.py"
    split = _at(result, stages, _line(root, stages, "self.num_gpu_blocks //= parallel_config.pipeline_parallel_size"))
    assert (split.category, split.guard) == ("split", ("self.num_gpu_blocks",))
    # the pool's own size read through a holder of knobs is still the traced value (a copy, not a knob)
    assert split.knobs == ("parallel_config.pipeline_parallel_size",)
    spec = "vllm/spec_decode/spec_decode_worker.py"
    assert _at(result, spec, _line(root, spec, "new_num_gpu_blocks = int(")).category == "split"


def test_vllm_trace_reaches_the_profiling_worker_through_the_executor(
    vllm: tuple[Path, CapsResult, TraceResult],
) -> None:
    root, _, traced = vllm
    graph = _exact(traced.graph)
    worker = _node(traced.graph, "return", "Worker.determine_num_available_blocks()[0]", WORKER)
    executor = _node(
        traced.graph, "return", "GPUExecutor.determine_num_available_blocks()[0]", "vllm/executor/gpu_executor.py"
    )
    engine = "vllm/engine/llm_engine.py"
    [written] = [
        p
        for p in traced.graph.nodes
        if p.path == engine and p.line == _line(root, engine, "self.cache_config.num_gpu_blocks = num_gpu_blocks")
    ]
    assert nx.has_path(graph, worker, executor) and nx.has_path(graph, executor, written)


def test_lmdeploy_reserves_before_the_fraction_and_the_budget_site(
    lmdeploy: tuple[Path, CapsResult, TraceResult],
) -> None:
    root, result, _ = lmdeploy
    state = _line(root, EXECUTOR, "free_mems = [free_mem - state_cache_mem for free_mem in free_mems]")
    runtime = _line(root, EXECUTOR, "free_mems = [free_mem - runtime_mem for free_mem in free_mems]")
    fraction = _line(root, EXECUTOR, "available_mems = [int(free_mem * self.cache_config.cache_max_entry_count)")
    assert {(EXECUTOR, state), (EXECUTOR, runtime), (EXECUTOR, fraction)} <= {
        (s.path, s.line) for s in result.budget_sites
    }
    assert _at(result, EXECUTOR, state).category == "reserve"
    assert _at(result, EXECUTOR, runtime).category == "reserve"


def test_lmdeploy_caps_per_rank_base_reduce_and_the_kept_user_value(
    lmdeploy: tuple[Path, CapsResult, TraceResult],
) -> None:
    root, result, _ = lmdeploy
    base = _at(result, EXECUTOR, _line(root, EXECUTOR, "num_gpu_blocks = available_mem // total_cache_block_size"))
    assert (base.category, base.function) == ("base", "ExecutorBase._get_num_gpu_blocks")
    reduced = _at(result, EXECUTOR, _line(root, EXECUTOR, "return min(num_gpu_blocks)"))
    assert (reduced.category, reduced.function) == ("reduce", "ExecutorBase._get_min_num_gpu_blocks")
    kept = _at(result, EXECUTOR, _bare_return_after(root, EXECUTOR, "if self.cache_config.num_gpu_blocks != 0:"))
    assert (kept.category, kept.guard) == ("override", ("self.cache_config.num_gpu_blocks != 0",))
    assert kept.knobs == ("self.cache_config.num_gpu_blocks",) and not any(c.approximate for c in result.caps)


def test_lmdeploy_trace_reaches_the_model_agent_that_reads_free_memory(
    lmdeploy: tuple[Path, CapsResult, TraceResult],
) -> None:
    root, _, traced = lmdeploy
    graph = _exact(traced.graph)
    agent = _node(
        traced.graph, "return", "BaseModelAgent.get_free_mem()", "lmdeploy/pytorch/engine/model_agent/agent.py"
    )
    uni = _node(
        traced.graph, "return", "UniExecutor.gather_free_mem()", "lmdeploy/pytorch/engine/executor/uni_executor.py"
    )
    engine = "lmdeploy/pytorch/engine/engine.py"
    copied = _line(root, engine, "self.engine_config.num_gpu_blocks = self.cache_config.num_gpu_blocks")
    [written] = [p for p in traced.graph.nodes if p.path == engine and p.line == copied and p.kind == "write"]
    assert nx.has_path(graph, agent, uni) and nx.has_path(graph, uni, written)
