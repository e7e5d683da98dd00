"""caps on real releases: the model runner's caps and their categories, located by their code.

The statements were read from each release's code; lines are looked up in the
fetched source, never written here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sgtrace.api import caps, find
from sgtrace.index.findpass import RunOptions
from sgtrace.model import Cap, CapsResult, FindQuery, TraceQuery
from sgtrace.sources import Target
from tests import releases

pytestmark = pytest.mark.release
QUERY = TraceQuery("max_total_num_tokens")


def _caps(version: str, cache: Path) -> tuple[Path, CapsResult]:
    root = releases.release(version)
    result = caps(
        TraceQuery("max_total_num_tokens"),
        "mem_fraction_static",
        Target(str(root), version),
        RunOptions(cache_dir=cache),
    )
    return root, result


def _line(root: Path, path: str, text: str, nth: int = 0) -> int:
    lines = (root / path).read_text().splitlines()
    return [i for i, line in enumerate(lines, 1) if text in line][nth]


def _at(result: CapsResult, path: str, line: int) -> Cap:
    found = [c for c in result.caps if c.path == path and c.line == line]
    assert found, f"no cap at {path}:{line}: {[(c.path, c.line, c.category) for c in result.caps]}"
    return found[0]


def test_0_4_x_caps_in_model_runner(tmp_path: Path) -> None:
    root, result = _caps(releases.OLDEST, tmp_path)
    runner = "sglang/srt/model_executor/model_runner.py"
    assert any("mem_fraction_static" in s.code and s.path == runner for s in result.budget_sites)
    expected = {
        ("self.max_total_num_tokens = self.profile_max_num_token(", 0): "base",
        ("self.max_total_num_tokens = int(SGLANG_CI_SMALL_KV_SIZE)", 0): "override",
        ("self.max_total_num_tokens = self.server_args.draft_runner_cache_size", 0): "override",
        ("self.max_total_num_tokens = min(self.max_total_num_tokens, max_total_tokens)", 0): "min",
    }
    for (text, nth), category in expected.items():
        assert _at(result, runner, _line(root, runner, text, nth)).category == category, text
    rounding = _line(root, runner, "// self.server_args.page_size", 0)  # a statement spread over lines
    assert _at(result, runner, rounding - 2).category == "round"


def test_0_5_9_caps_in_the_kv_cache_mixin(tmp_path: Path) -> None:
    root, result = _caps(releases.MIDDLE, tmp_path)
    mixin = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
    [formula] = [s for s in result.budget_sites if "mem_fraction_static" in s.code]
    assert formula.path == mixin and formula.knobs == ("server_args.mem_fraction_static",)
    base = _at(result, mixin, _line(root, mixin, "self.max_total_num_tokens = self.profile_max_num_token("))
    assert base.category == "base" and base.function == "ModelRunnerKVCacheMixin.init_memory_pool"
    lowered = _at(result, mixin, _line(root, mixin, "min(self.max_total_num_tokens, max_total_tokens)"))
    assert (lowered.category, lowered.guard, lowered.knobs) == (
        "min", ("max_total_tokens is not None",), ("server_args.max_total_tokens",)
    )  # fmt: skip
    rounded = _at(result, mixin, _line(root, mixin, "// self.server_args.page_size") - 2)
    assert (rounded.category, rounded.knobs) == ("round", ("server_args.page_size",))
    reduced = _at(result, mixin, _line(root, mixin, "self.max_total_num_tokens = tensor.item()"))
    assert (reduced.category, reduced.guard) == ("reduce", ("self.pp_size > 1",))
    drafted = _at(
        result, mixin, _line(root, mixin, "self.max_total_num_tokens = self.server_args.draft_runner_cache_size")
    )
    assert drafted.category == "override" and "self.is_draft_worker" in drafted.guard[0]
    split = _at(result, mixin, _line(root, mixin, "self.max_total_num_tokens = self.full_max_total_num_tokens"))
    assert split.category == "split"
    # in the order the code applies them: the split function runs at the end of init_memory_pool
    order = [c for c in result.caps if c.owner and c.owner.endswith("ModelRunnerKVCacheMixin")]
    steps = [base, lowered, rounded, reduced, drafted, split]
    assert [order.index(c) for c in steps] == sorted(order.index(c) for c in steps)
    assert any(c.category == "reserve" and c.path == mixin for c in result.caps)  # mamba state
    # the disaggregation queues lower their own copy, listed under their owners
    owners = {c.owner for c in result.caps if c.category == "min"}
    assert {o for o in owners if o and "disaggregation" in o} == {
        "sglang.srt.disaggregation.decode.DecodePreallocQueue",
        "sglang.srt.disaggregation.prefill.PrefillBootstrapQueue",
    }


def test_newest_caps_in_the_configurators(tmp_path: Path) -> None:
    root, result = _caps(releases.NEWEST, tmp_path)
    kvc = "sglang/srt/mem_cache/kv_cache_configurator.py"
    pools = "sglang/srt/model_executor/pool_configurator.py"
    formula = [s for s in result.budget_sites if "mem_fraction_static" in s.code and s.path == kvc]
    assert formula and "get_schedule().mem_fraction_static" in formula[0].knobs
    lowered = _at(result, kvc, _line(root, kvc, "token_capacity = min(token_capacity, user_limit)"))
    assert lowered.category == "min" and lowered.guard == ("user_limit is not None",)
    assert _at(result, kvc, _line(root, kvc, "token_capacity = tensor.item()")).category == "reduce"
    base = [c for c in result.caps if c.path == pools and c.category == "base"]
    assert any("available_bytes // self._cell_size" in c.code for c in base)
    rounding = {
        c.function.split(".")[0] for c in result.caps if c.category == "round" and c.path == pools and c.function
    }
    assert len(rounding) >= 2, rounding  # configurator subclasses picked by a factory at run time all count
    assert any(c.category == "reserve" and c.path == kvc for c in result.caps)
    # the KV-shard scratch, clamped at zero (docs/sglang-notes.md reads it as a reserve by hand)
    scratch = _at(
        result, pools, _line(root, pools, "available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)")
    )
    assert scratch.category == "reserve"
    # the DSV4 configurator's per-request state, sized for the requests the budget admits (issue 52)
    state = _at(result, pools, _line(root, pools, "available_bytes_for_tokens = max(available_bytes - fixed_bytes, 0)"))
    assert state.category == "reserve" and state.function == "DSV4PoolConfigurator.calculate_pool_sizes", state


def test_explain_reproduces_the_operators_figure_on_0_5_9(tmp_path: Path) -> None:
    from sgtrace.api import explain
    from tests.conftest import FIXTURES

    root = releases.release(releases.MIDDLE)
    log = (FIXTURES / "logs" / "h20_8gpu.log").read_text()
    query = TraceQuery("max_total_num_tokens")
    _, result, _ = explain(
        query, "mem_fraction_static", Target(str(root), "0.5.9"), RunOptions(cache_dir=tmp_path), log, {}
    )
    assert round(result.kv_budget_gb, 2) == 10.43
    assert result.observed_kv_gb == pytest.approx(10.42)
    statuses = {(c.category, status) for c, status, _ in result.caps}
    assert ("min", "did not bind") in statuses and ("reduce", "not reached") in statuses


def test_explain_names_what_the_newest_formula_needs(tmp_path: Path) -> None:
    from sgtrace.api import explain
    from tests.conftest import FIXTURES

    root = releases.release(releases.NEWEST)
    log = (FIXTURES / "logs" / "h20_8gpu.log").read_text()
    query = TraceQuery("max_total_num_tokens")
    _, result, _ = explain(
        query, "mem_fraction_static", Target(str(root), "new"), RunOptions(cache_dir=tmp_path), log, {}
    )
    # the log names the architecture only: the reservation is worked out with the model type its name gives
    assert "mm_reservation_gb" not in result.missing and result.inputs["mm_reservation_gb"] == 0
    assert result.assumptions and all(" assumed " in text for text in result.assumptions)
    assert result.kv_budget_gb is not None and round(result.kv_budget_gb, 2) == 10.43
    _, supplied, _ = explain(
        query, "mem_fraction_static", Target(str(root), "new"), RunOptions(cache_dir=tmp_path), log,
        {"mm_reservation_gb": 0.0},
    )  # fmt: skip
    steps = {s.target: s.value for s in supplied.steps}
    assert steps["rest_memory"] == pytest.approx(21.71 - 94.04 * 0.12)
    assert supplied.kv_budget_gb is not None and round(supplied.kv_budget_gb, 2) == 10.43


@pytest.mark.parametrize("version", [releases.OLDEST, releases.EARLY_05, releases.MIDDLE, releases.NEWEST])
def test_the_default_slice_is_complete_and_any_larger_bound_gives_the_same(tmp_path: Path, version: str) -> None:
    root = releases.release(version)
    default = caps(QUERY, "mem_fraction_static", Target(str(root), version), RunOptions(cache_dir=tmp_path))
    larger = caps(
        TraceQuery("max_total_num_tokens", max_nodes=100_000),
        "mem_fraction_static",
        Target(str(root), version),
        RunOptions(cache_dir=tmp_path),
    )
    assert not default.truncated and not larger.truncated
    assert default.caps == larger.caps and default.budget_sites == larger.budget_sites


def test_newest_lists_no_run_time_state_as_a_cap(tmp_path: Path) -> None:
    """Allocator counters, request-count caps and graph batch sizes are other quantities, not the pool's chain."""
    _, result = _caps(releases.NEWEST, tmp_path)
    assert not [c for c in result.caps if "/allocator/" in c.path or "cuda_graph" in c.path]
    other = re.compile(r"req|batch|(^|_)bs$|watermark|num_pages|available_size", re.IGNORECASE)
    assert not [c for c in result.caps if other.search(c.target)], [c.target for c in result.caps]


def test_a_copy_of_the_pool_another_component_worked_out_is_no_cap(tmp_path: Path) -> None:
    """0.5.19's Ray controller takes the scheduler's figure from the dict it sent (``scheduler_infos[0]
    ["max_total_num_tokens"]``, under ``if scheduler_infos:``) and the prefill queue the runner's
    (``self.scheduler.tp_worker.model_runner.effective_max_total_num_tokens``): flows of the pool, found as
    writes, neither an override nor a split. The writes themselves, read here off the code, are still found."""
    root, result = _caps("0.5.19", tmp_path)
    ray = "sglang/srt/ray/data_parallel_controller.py"
    prefill = "sglang/srt/disaggregation/prefill.py"
    copied = _line(root, ray, 'self.max_total_num_tokens = scheduler_infos[0]["max_total_num_tokens"]')
    queue = _line(root, prefill, "self.max_total_num_tokens = (")
    assert "effective_max_total_num_tokens" in (root / prefill).read_text().splitlines()[queue]
    assert not [c for c in result.caps if (c.path, c.line) in ((ray, copied), (prefill, queue))]
    found = find(FindQuery("max_total_num_tokens"), [Target(str(root), "0.5.19")], RunOptions(cache_dir=tmp_path))
    writes = {(w.path, w.line) for w in found.writes}
    assert {(ray, copied), (prefill, queue)} <= writes
