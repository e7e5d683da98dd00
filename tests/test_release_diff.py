"""diff on real releases: what an upgrade changes, and nothing for a release against itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sgtrace.analyses.diff import CapDiff
from sgtrace.api import diff
from sgtrace.engine import RunOptions
from sgtrace.model import TraceQuery
from sgtrace.sources import Target
from tests import releases

pytestmark = pytest.mark.release
QUERY = TraceQuery("max_total_num_tokens")


def _diff(old: Path, new: Path, cache: Path) -> CapDiff:
    return diff(
        QUERY, "mem_fraction_static", Target(str(old), "old"), Target(str(new), "new"), RunOptions(cache_dir=cache)
    )[2]


def test_0_4_6_to_0_5_2_adds_the_pipeline_reduce_and_the_hybrid_split(tmp_path: Path) -> None:
    result = _diff(releases.release(releases.OLDEST), releases.release(releases.EARLY_05), tmp_path)
    added = {(c.category, c.path) for c in result.added}
    runner = "sglang/srt/model_executor/model_runner.py"
    assert ("reduce", runner) in added and ("split", runner) in added
    assert any("tensor.item()" in c.code for c in result.added if c.category == "reduce")


def test_0_5_9_to_newest_reports_the_budget_change(tmp_path: Path) -> None:
    result = _diff(releases.release(releases.MIDDLE), releases.release(releases.NEWEST), tmp_path)
    assert result.budget_changed is not None
    old, new = result.budget_changed
    assert any("total_gpu_memory * ( 1 - self.mem_fraction_static )" in code for code in old)
    assert any("pre_model_load_memory" in code and "mem_fraction_static" in code for code in new)
    assert any("mm_reservation_gb" in code for code in new)


def test_a_release_against_itself_and_a_line_shifted_copy(tmp_path: Path) -> None:
    root = releases.release(releases.MIDDLE)
    same = _diff(root, root, tmp_path / "cache")
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    for path in (copy / "sglang/srt/model_executor").glob("*.py"):
        path.write_text("# inserted\n# lines\n\n" + path.read_text())
    shifted = _diff(root, copy, tmp_path / "cache")
    for result in (same, shifted):
        assert not (result.added or result.removed or result.changed or result.moved)
        assert result.budget_changed is None
