"""diff and check on real releases: moves found, true additions and removals kept, the start-up under both.

What a reviewer reads in each upgrade's code is in tests/upgrade_pairs.py, with reasons.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.analyses.diff import CapDiff, CapPair
from sgtrace.api import check, diff, explain
from sgtrace.cli import cli
from sgtrace.index.findpass import RunOptions
from sgtrace.model import Cap, TraceQuery
from sgtrace.sources import Target
from tests import releases
from tests.upgrade_pairs import ADDED, PAIRS, REMOVED, UPGRADES

pytestmark = pytest.mark.release
QUERY = TraceQuery("max_total_num_tokens")
BUDGET = "mem_fraction_static"
JOURNAL = Path(__file__).parent / "fixtures" / "logs" / "h20_three_startups.journal"
#: What the newest formula needs that the journal does not show (the operator's run is not multimodal).
SETTINGS: dict[str, dict[str, object]] = {"0.5.23": {"mm_reservation_gb": 0}}


def _target(version: str) -> Target:
    return Target(str(releases.release(version)), f"sglang=={version}")


def _diff(old: str, new: str, cache: Path, **deployment: object) -> CapDiff:
    return diff(QUERY, BUDGET, _target(old), _target(new), RunOptions(cache_dir=cache), **deployment)[2]  # type: ignore[arg-type]


def _at(cap: Cap) -> tuple[str, int]:
    return (cap.path, cap.line)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.mark.parametrize("upgrade", UPGRADES, ids=[f"{a}-{b}" for a, b in UPGRADES])
def test_pairs_additions_and_removals_are_what_the_code_shows(upgrade: tuple[str, str], cache: Path) -> None:
    result = _diff(*upgrade, cache)
    pairs = {_at(p.old): _at(p.new) for p in (*result.changed, *result.moved)}
    expected = PAIRS[upgrade]
    assert set(pairs) == set(expected)
    assert all(pairs[old] in expected[old] for old in expected), pairs
    repeats = {new for old, choices in expected.items() for new in choices - {pairs[old]}}
    assert {_at(c) for c in result.added} == set(ADDED[upgrade]) | repeats
    assert {_at(c) for c in result.removed} == set(REMOVED[upgrade])
    assert result.unreadable == ()


def test_0_4_6_to_0_5_2_keeps_every_old_cap(cache: Path) -> None:
    assert _diff(releases.OLDEST, releases.EARLY_05, cache).unchanged == 6


def test_0_5_9_to_newest_moves_the_rounding_the_reduce_and_the_mamba_reservation(cache: Path) -> None:
    result = _diff(releases.MIDDLE, releases.NEWEST, cache)
    moved = {(p.old.category, p.old.path.rsplit("/", 1)[-1], p.new.path.rsplit("/", 1)[-1]) for p in result.moved}
    assert ("round", "model_runner_kv_cache_mixin.py", "pool_configurator.py") in moved  # page rounding
    assert ("reduce", "model_runner_kv_cache_mixin.py", "kv_cache_configurator.py") in moved  # all_reduce(MIN)
    assert ("reserve", "model_runner_kv_cache_mixin.py", "kv_cache_configurator.py") in moved  # mamba state
    [reduce] = [p for p in result.moved if p.old.category == "reduce"]
    assert reduce.new.code == "token_capacity = tensor.item()" and reduce.renamed == (
        ("max_total_num_tokens", "token_capacity"),
    )
    [decode] = [p for p in result.changed if p.old.path.endswith("disaggregation/decode.py")]
    assert decode.differences == ("guard",)
    assert "_uses_swa_tail_prealloc" in " ".join(decode.new.guard)
    old, new = releases.release(releases.MIDDLE), releases.release(releases.NEWEST)
    text = CliRunner().invoke(cli, ["diff", str(old), str(new), "--cache-dir", str(cache)]).stdout
    shown = text[text.index("  min  sglang/srt/disaggregation/decode.py:261") :].splitlines()[:4]
    assert shown[2] == "    when: self.scheduler.tp_worker.is_hybrid_swa"
    assert shown[3].startswith(
        "      ->  ( self.scheduler.tp_worker.is_hybrid_swa and not self._uses_swa_tail_prealloc() )"
    )


def test_0_5_9_to_newest_reports_the_budget_formula_as_chains(cache: Path) -> None:
    result = _diff(releases.MIDDLE, releases.NEWEST, cache)
    assert result.budget_changed is not None
    old, new = result.budget_changed.old, result.budget_changed.new
    assert [s.target for s in old] == ["rest_memory"]
    assert "total_gpu_memory * ( 1 - self.mem_fraction_static )" in old[0].code
    assert [s.target for s in new][:2] == ["slack_gb", "rest_memory"]
    assert "pre_model_load_memory" in new[0].code and "mm_reservation_gb" in new[1].code


def test_the_newest_chain_marks_the_resize_after_capture_not_applied_for_the_start_up(cache: Path) -> None:
    """0.5.23's chain lists the post-capture resize's statements; for a start-up (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING
    unset) they are not applied, in text, Markdown and JSON, and ask for no input."""
    old, new = releases.release(releases.MIDDLE), releases.release(releases.NEWEST)
    base = ["diff", str(old), str(new), "--log", str(JOURNAL), "--cache-dir", str(cache)]
    text = CliRunner().invoke(cli, base).stdout
    resize = [line for line in text.splitlines() if "kv_pool_runtime.py:75" in line]
    assert resize and resize[0].endswith("(not applied: not reached: model_runner.token_to_kv_pool.post_capture_active"
                                         " is false)"), resize  # fmt: skip
    assert "post_capture_backed_bytes" not in text.split("budget formula changed")[0]
    markdown = CliRunner().invoke(cli, [*base, "--format", "markdown"]).stdout
    assert "(not applied: not reached: model_runner.token_to_kv_pool.post_capture_active is false)" in markdown
    data = json.loads(CliRunner().invoke(cli, [*base, "--format", "json"]).stdout)
    steps = json.dumps(data)
    assert '"skipped": "not reached: model_runner.token_to_kv_pool.post_capture_active is false' in steps


@pytest.mark.parametrize("upgrade", UPGRADES, ids=[f"{a}-{b}" for a, b in UPGRADES])
def test_the_start_up_under_both_releases_is_what_explain_says_of_each(upgrade: tuple[str, str], cache: Path) -> None:
    settings = {name: value for version in upgrade for name, value in SETTINGS.get(version, {}).items()}
    result = _diff(*upgrade, cache, log=JOURNAL.read_bytes(), settings=settings)
    assert result.pool is not None and (result.pool.run, result.pool.runs) == (3, 3)
    for version, side in zip(upgrade, (result.pool.old, result.pool.new), strict=True):
        _, alone, _ = explain(QUERY, BUDGET, _target(version), RunOptions(cache_dir=cache), JOURNAL.read_bytes(),
                              dict(SETTINGS.get(version, {})))  # fmt: skip
        assert side.explanation.kv_budget_gb == alone.kv_budget_gb
        assert side.explanation.caps == alone.caps and side.explanation.missing == alone.missing


def test_done_when_the_markdown_of_the_upgrade(cache: Path) -> None:
    old, new = releases.release(releases.MIDDLE), releases.release(releases.NEWEST)
    args = ["diff", str(old), str(new), "--log", str(JOURNAL), "--set", "mm_reservation_gb=0", "--format",
            "markdown", "--cache-dir", str(cache)]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    out = result.stdout
    pool = next(line for line in out.splitlines() if line.startswith("**KV pool for start-up 3 of 3: "))
    assert pool.startswith("**KV pool for start-up 3 of 3: 10.43 GB on ")
    assert ", 9.50 GB on " in pool and "mm_reservation_gb = 0 by --set" in pool
    assert "the draft's 0.93 GB of weights (line 215) now load before the pool is sized" in pool
    assert (
        "| `mm_reservation_gb` | not an input | `0` (--set); computed at `sglang/srt/mem_cache/kv_cache_config" in out
    )
    assert "- when, after: `( self.scheduler.tp_worker.is_hybrid_swa and not self._uses_swa_tail_prealloc() )" in out
    moves = out[out.index("### Moved caps") : out.index("<details>")]
    for old_place in (":387`", ":400`", ":210`"):  # rounding, reduce, mamba state: moved, not added and removed
        assert f"model_runner_kv_cache_mixin.py{old_place}" in moves
    [verdict] = [line for line in result.stderr.splitlines() if line.startswith("sgtrace: verdict:")]
    assert "10.43 GB on" in verdict and "5 moved" in verdict and result.exit_code == 1


def test_check_of_a_baseline_written_on_0_5_9_shows_the_moves(tmp_path: Path, cache: Path) -> None:
    baseline = tmp_path / "baseline.json"
    old = releases.release(releases.MIDDLE)
    written = CliRunner().invoke(cli, ["check", str(old), "--write-baseline", str(baseline), "--cache-dir", str(cache)])
    assert written.exit_code == 0
    options = RunOptions(cache_dir=cache)
    settings = SETTINGS[releases.NEWEST]
    _, _, got = check(QUERY, BUDGET, _target(releases.NEWEST), options, baseline.read_text(), JOURNAL.read_bytes(),
                      settings)  # fmt: skip
    expected = _diff(releases.MIDDLE, releases.NEWEST, cache, log=JOURNAL.read_bytes(), settings=settings)
    for kind in ("added", "removed"):
        assert sorted(map(_at, getattr(got, kind))) == sorted(map(_at, getattr(expected, kind))), kind
    for kind in ("changed", "moved"):
        assert _pairs(getattr(got, kind)) == _pairs(getattr(expected, kind)), kind
    assert got.pool is not None and expected.pool is not None
    assert got.pool.old.explanation.kv_budget_gb == expected.pool.old.explanation.kv_budget_gb
    assert got.pool.new.explanation.kv_budget_gb == expected.pool.new.explanation.kv_budget_gb
    out = CliRunner().invoke(cli, ["check", str(releases.release(releases.NEWEST)), "--baseline", str(baseline),
                                   "--cache-dir", str(cache), "--format", "json"])  # fmt: skip
    assert json.loads(out.stdout)["verdict"]["moved"] == len(expected.moved) > 0


def _pairs(pairs: tuple[CapPair, ...]) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    return sorted((_at(p.old), _at(p.new)) for p in pairs)


def test_a_release_against_itself_and_a_line_shifted_copy(tmp_path: Path) -> None:
    root = releases.release(releases.MIDDLE)
    cache = tmp_path / "cache"
    same = diff(QUERY, BUDGET, Target(str(root), "a"), Target(str(root), "b"), RunOptions(cache_dir=cache))[2]
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    for path in (copy / "sglang/srt/model_executor").glob("*.py"):
        path.write_text("# inserted\n# lines\n\n" + path.read_text())
    shifted = diff(QUERY, BUDGET, Target(str(root), "a"), Target(str(copy), "b"), RunOptions(cache_dir=cache))[2]
    for result in (same, shifted):
        assert not (result.added or result.removed or result.changed or result.moved)
        assert result.budget_changed is None and result.unchanged == 16
