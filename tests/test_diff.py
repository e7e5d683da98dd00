"""diff and check: one pair of small trees per kind of change, baselines, exit codes, SARIF."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.analyses.diff import compare, fingerprint
from sgtrace.cli import cli
from sgtrace.model import BudgetSite, Cap

RUNNER = """\
class Runner:
    def __init__(self, server_args, mem_fraction_static):
        self.server_args = server_args
        self.mem_fraction_static = mem_fraction_static

    def profile(self, total, avail):
        rest_memory = avail - total * (1 - self.mem_fraction_static)
        return int(rest_memory * (1 << 30)) // 1024

    def init_memory_pool(self, total, avail):
        self.max_total_num_tokens = self.profile(total, avail)
        if self.server_args.max_total_tokens is not None:
            self.max_total_num_tokens = min(self.max_total_num_tokens, self.server_args.max_total_tokens)
        self.max_total_num_tokens = self.max_total_num_tokens // self.server_args.page_size * self.server_args.page_size
"""
SCHEDULER = """\
from .runner import Runner


class Scheduler:
    def __init__(self, server_args):
        self.runner = Runner(server_args, server_args.mem_fraction_static)
        self.max_total_num_tokens = self.runner.max_total_num_tokens
"""


def _tree(root: Path, runner: str = RUNNER, scheduler: str = SCHEDULER) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "runner.py").write_text(runner)
    (root / "pkg" / "scheduler.py").write_text(scheduler)
    return root


def _diff(tmp_path: Path, runner: str, *extra: str) -> tuple[int, dict[str, object]]:
    old = _tree(tmp_path / "old")
    new = _tree(tmp_path / "new", runner)
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "json", "--no-cache", *extra])
    return result.exit_code, json.loads(result.stdout)


def _count(payload: dict[str, object]) -> dict[str, int]:
    return {k: len(payload[k]) for k in ("added", "removed", "changed", "moved")} | {  # type: ignore[arg-type]
        "budget": int(payload["budget_changed"] is not None)
    }


NO_CHANGE = {"added": 0, "removed": 0, "changed": 0, "moved": 0, "budget": 0}
SHIFTED = "# a comment\n# another\n\n" + RUNNER.replace(
    "self.server_args.page_size * self.server_args.page_size",
    "(\n            self.server_args.page_size\n        ) * self.server_args.page_size",
)
ADDED = RUNNER + textwrap.indent(
    "if self.server_args.pp_size > 1:\n"
    "    tensor = torch.tensor(self.max_total_num_tokens)\n"
    "    torch.distributed.all_reduce(tensor)\n"
    "    self.max_total_num_tokens = tensor.item()\n",
    " " * 8,
)
ROUNDING = RUNNER.splitlines(keepends=True)[-1]
REMOVED = RUNNER.replace(ROUNDING, "")
CHANGED = RUNNER.replace("if self.server_args.max_total_tokens is not None:", "if self.server_args.max_total_tokens:")
BUDGET = RUNNER.replace("avail - total * (1 - self.mem_fraction_static)", "avail * self.mem_fraction_static")
MOVED = RUNNER.replace("    def init_memory_pool(self, total, avail):", "    def allocate(self, total, avail):")


@pytest.mark.parametrize(
    ("runner", "expected", "code"),
    [
        (SHIFTED, NO_CHANGE, 0),
        (ADDED, {**NO_CHANGE, "added": 1}, 1),
        (REMOVED, {**NO_CHANGE, "removed": 1}, 0),
        (CHANGED, {**NO_CHANGE, "changed": 1}, 1),
        (BUDGET, {**NO_CHANGE, "budget": 1}, 1),
        (MOVED, {**NO_CHANGE, "moved": 3}, 0),
    ],
    ids=["line-shifted", "added", "removed", "changed", "budget", "moved"],
)
def test_each_kind_of_change(tmp_path: Path, runner: str, expected: dict[str, int], code: int) -> None:
    exit_code, payload = _diff(tmp_path, runner)
    assert _count(payload) == expected
    assert exit_code == code


def test_fail_on_and_exit_zero(tmp_path: Path) -> None:
    assert _diff(tmp_path / "a", REMOVED, "--fail-on", "removed")[0] == 1
    assert _diff(tmp_path / "b", ADDED, "--exit-zero")[0] == 0
    bad = CliRunner().invoke(cli, ["diff", "x", "y", "--fail-on", "everything"])
    assert bad.exit_code == 2


def test_markdown_for_a_reviewer(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new", BUDGET + ADDED.split(RUNNER)[1])
    out = CliRunner().invoke(cli, ["diff", str(old), str(new), "--no-cache"]).stdout
    assert "### Budget formula changed" in out and "### Added caps (1)" in out
    assert "| reduce |" in out


def test_fingerprint_ignores_lines_and_formatting() -> None:
    cap = Cap("a.py", 10, "m.R", "R.f", "x", "min", (), (), "self.x = min(self.x, y)")
    moved_down = Cap("a.py", 40, "m.R", "R.f", "x", "min", (), (), "self.x = min(\n    self.x, y\n)")
    assert fingerprint(cap) == fingerprint(moved_down)
    site = BudgetSite("a.py", 3, "rest = a - b * (1 - f)", ())
    assert compare([cap], [moved_down], [site], [site]) == compare([], [], [site], [site])


def test_check_against_a_baseline(tmp_path: Path) -> None:
    old = _tree(tmp_path / "old")
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    wrote = runner.invoke(cli, ["check", str(old), "--write-baseline", str(baseline), "--no-cache"])
    assert wrote.exit_code == 0
    data = json.loads(baseline.read_text())
    assert [c["fingerprint"] for c in data["caps"]] == sorted(c["fingerprint"] for c in data["caps"])
    assert {c["category"] for c in data["caps"]} == {"base", "min", "round"}
    data["caps"][0]["comment"] = "reviewed: expected"
    baseline.write_text(json.dumps(data))
    same = runner.invoke(cli, ["check", str(old), "--baseline", str(baseline), "--no-cache"])
    assert same.exit_code == 0 and "No change" in same.stdout
    rewritten = runner.invoke(cli, ["check", str(old), "--write-baseline", str(baseline), "--no-cache"])
    assert rewritten.exit_code == 0 and "reviewed: expected" in baseline.read_text()
    new = _tree(tmp_path / "new", ADDED)
    gated = runner.invoke(cli, ["check", str(new), "--baseline", str(baseline), "--no-cache"])
    assert gated.exit_code == 1 and "Added caps (1)" in gated.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    assert runner.invoke(cli, ["check", str(new), "--baseline", str(broken), "--no-cache"]).exit_code == 2


def test_diff_sarif_locates_results_in_new(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new", ADDED)
    log = json.loads(CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "sarif", "--no-cache"]).stdout)
    assert log["version"] == "2.1.0"
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "sgtrace/reduce" and result["partialFingerprints"]["sgtrace/v1"]
    location = result["locations"][0]["physicalLocation"]
    lines = (new / location["artifactLocation"]["uri"]).read_text().splitlines()
    assert ".item()" in lines[location["region"]["startLine"] - 1]


def test_git_revisions_of_a_checkout(tmp_path: Path) -> None:
    import subprocess

    repo = _tree(tmp_path / "repo")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "one")
    (repo / "pkg" / "runner.py").write_text(ADDED)
    git("commit", "-qam", "two")
    runner = CliRunner()
    out = runner.invoke(
        cli, ["diff", "HEAD~1", "HEAD", "--git", str(repo), "--format", "json", "--cache-dir", str(tmp_path / "c")]
    )
    assert out.exit_code == 1, out.output
    assert [c["category"] for c in json.loads(out.stdout)["added"]] == ["reduce"]
    missing = runner.invoke(
        cli, ["diff", "no-such-rev", "HEAD", "--git", str(repo), "--cache-dir", str(tmp_path / "c")]
    )
    assert missing.exit_code == 2 and "git rev-parse failed" in missing.stderr


def test_diff_and_caps_sarif_validate_against_the_sarif_2_1_0_schema(tmp_path: Path) -> None:
    from tests.sarif_schema import assert_valid_sarif

    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new", ADDED)
    runner = CliRunner()
    diff_log = json.loads(runner.invoke(cli, ["diff", str(old), str(new), "--format", "sarif", "--no-cache"]).stdout)
    caps_log = json.loads(runner.invoke(cli, ["caps", str(new), "--format", "sarif", "--no-cache"]).stdout)
    assert diff_log["runs"][0]["results"] and caps_log["runs"][0]["results"]
    assert_valid_sarif(diff_log)
    assert_valid_sarif(caps_log)
    broken = json.loads(json.dumps(diff_log))
    broken["runs"][0]["results"][0]["level"] = "fatal"  # not a SARIF level: the check can fail
    with pytest.raises(AssertionError):
        assert_valid_sarif(broken)
