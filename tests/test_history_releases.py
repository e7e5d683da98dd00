"""history on the real releases from 0.5.9 to 0.5.23 (every one the registry has, post-releases included),
with a three-start-up journal whose draft is loaded after the target's pool is sized (as 0.5.9 does it)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.fetch import FetchError
from sgtrace.sources import points
from tests import releases
from tests.release_table import TABLE

pytestmark = pytest.mark.release

SPAN = f"sglang=={releases.MIDDLE}..{releases.NEWEST}"
#: The first release of the span whose target's pool is sized after the draft's weights load: the release
#: table's, read by hand with file:line (tests/release_table.py; 0.5.14 builds the draft's worker before
#: init_memory_pools, scheduler.py:861-868), not the evaluator's.
DRAFT_FIRST = next(r.since for r in TABLE if r.draft_first)


@pytest.fixture(scope="module")
def span(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """(a cache holding every release of SPAN, fetched beforehand; the journal; the versions in order)."""
    folder = tmp_path_factory.mktemp("history")
    try:
        versions = [point.label for point in points([SPAN], releases.cache_dir())]
    except FetchError as exc:  # as tests.releases says it: a failure in CI, else a skip
        if os.environ.get("CI"):
            pytest.fail(f"CI must reach the package registry: {exc}")
        pytest.skip(f"registry not reachable outside CI: {exc}")
    cache = releases.linked_cache(folder, *versions)
    from tests.journals import SHAPES, journal

    log = folder / "journal"
    log.write_text("\n".join(journal(SHAPES["eagle3 journal (a draft after the target's graphs)"])) + "\n")
    return cache, log, versions


def _history(cache: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        cli, ["history", SPAN, "--cache-dir", str(cache), "--format", "json", *args], catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_every_release_of_the_range_has_its_pool_and_the_draft_order_change_is_marked(
    span: tuple[Path, Path, list[str]],
) -> None:
    cache, log, versions = span
    code, data, err = _history(cache, "--log", str(log), "--set", "mm_reservation_gb=0")
    assert code == 0, err
    stops = data["stops"]
    assert [stop["label"] for stop in stops] == versions and len(versions) >= 15
    assert "0.5.10.post1" in versions  # post-releases are releases
    assert all(stop["read"] and stop["kv_budget_gb"] is not None for stop in stops), [
        (s["label"], s["error"], s.get("missing")) for s in stops
    ]
    pools = {stop["label"]: round(stop["kv_budget_gb"], 2) for stop in stops}
    assert pools[releases.MIDDLE] == 10.43 and pools[releases.NEWEST] == 9.48
    # the pool changes once: where the draft's weights start to be loaded before the target's pool is sized
    moved = [step for step in data["steps"] if step["kv_budget_gb"]["old"] != step["kv_budget_gb"]["new"]]
    assert len(moved) == 1 and moved[0]["changes"], [s["new"] for s in moved]
    drafted = moved[0]["new"]
    assert drafted == DRAFT_FIRST, [s["new"] for s in moved]
    assert pools[drafted] == 9.48 and all(pools[v] == 10.43 for v in versions[: versions.index(drafted)])
    # the formula's changes are marked too (its chain grows from one statement to the headroom's)
    formula = [step["new"] for step in data["steps"] if step["budget_changed"]]
    assert formula and all(step["changes"] for step in data["steps"] if step["budget_changed"])
    assert len(stops[0]["formula"]) == 1 and len(stops[-1]["formula"]) > 1
    # the text names the change of order and its place in the scheduler
    result = CliRunner().invoke(cli, ["history", SPAN, "--cache-dir", str(cache), "--log", str(log), "--set",
                                      "mm_reservation_gb=0"])  # fmt: skip
    row = next(line for line in result.stdout.splitlines() if line.split()[1:2] == [drafted])
    assert row.startswith("*") and "pool -0.95 GB; order of start-up changed" in row
    assert "now load before the pool is sized (sglang/srt/managers/scheduler.py:" in result.stdout


def test_first_change_finds_the_release_that_changed_the_pool_reading_log2_of_them(
    span: tuple[Path, Path, list[str]],
) -> None:
    cache, log, versions = span
    code, data, err = _history(cache, "--log", str(log), "--set", "mm_reservation_gb=0", "--first-change")
    assert code == 0, err
    first = data["first_change"]
    assert first["release"] == DRAFT_FIRST, first
    assert first["kinds"] == ["pool"] and first["read"] <= math.log2(len(versions)) + 2
    assert sum(stop["read"] for stop in data["stops"]) == first["read"]
    index = versions.index(first["release"])
    assert first["after"] == versions[index - 1]
    stops = {stop["label"]: stop for stop in data["stops"]}
    assert round(stops[first["release"]]["kv_budget_gb"], 2) == 9.48
    assert round(stops[first["after"]]["kv_budget_gb"], 2) == 10.43
