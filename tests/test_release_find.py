"""``find`` on real SGLang releases agrees with the standard-library ``ast`` reference."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sgtrace.api import find
from sgtrace.index.findpass import RunOptions
from sgtrace.model import FindQuery
from sgtrace.sources import Target
from tests import releases
from tests.ast_reference import reference_writes

pytestmark = pytest.mark.release

ATTRIBUTES = ["max_total_num_tokens", "page_size", "max_running_requests"]


@pytest.mark.parametrize("version", [releases.MIDDLE, releases.NEWEST])
@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_find_matches_ast_reference(version: str, attribute: str) -> None:
    root = releases.release(version)
    result = find(FindQuery(attribute), [Target(str(root), str(root))], RunOptions(jobs=2, cache_dir=None))
    expected, broken = reference_writes(root, attribute)
    errored = {e.path for e in result.errors}
    assert errored == broken
    got = {(w.path, w.line) for w in result.writes if w.path not in broken}
    assert got == expected
    assert len(expected) > 0


@pytest.mark.parametrize("version", [releases.OLDEST, releases.MIDDLE, releases.NEWEST])
def test_the_scheduler_unpacking_write_that_grep_misses(version: str) -> None:
    """The scheduler takes the pool size by tuple unpacking in every release."""
    root = releases.release(version)
    runner = CliRunner()
    outcome = runner.invoke(
        __import__("sgtrace.cli", fromlist=["cli"]).cli,
        ["find", "max_total_num_tokens", str(root), "--format", "json", "--no-cache"],
    )
    assert outcome.exit_code == 0, outcome.output
    payload = json.loads(outcome.stdout)
    unpacks = [w for w in payload["writes"] if w["kind"] == "unpack"]
    scheduler = [w for w in unpacks if w["owner"] == "sglang.srt.managers.scheduler.Scheduler"]
    assert scheduler, unpacks
    [write] = scheduler
    assert write["path"] == "sglang/srt/managers/scheduler.py"
    assert write["function"] == "Scheduler.init_model_worker" or write["function"].startswith("Scheduler.")
    assert "get_worker_info()" in write["code"]
    source_line = (root / write["path"]).read_text().splitlines()[write["line"] - 1]
    assert "self.max_total_num_tokens" in source_line
