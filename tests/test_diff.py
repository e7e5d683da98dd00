"""diff and check: one pair of small trees per kind of change, baselines, exit codes, SARIF."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.analyses.diff import compare, fingerprint
from sgtrace.cli import cli
from sgtrace.model import BudgetSite, Cap
from sgtrace.sources import sample_tree

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
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--no-cache", "--format", "markdown"])
    out = result.stdout
    assert out.startswith("## sgtrace:") and out.splitlines()[2:5] == [
        f"- old: `{old}` (not a git checkout)",
        f"- new: `{new}` (not a git checkout)",
        "",
    ]
    assert "gate failed (added, budget)" in out.splitlines()[5]
    assert "<summary>Added caps (1)</summary>" in out and "| reduce |" in out
    assert "<summary>Budget formula, old and new (the steps explain evaluates)</summary>" in out
    assert "1. `pkg/runner.py:7` `rest_memory = avail * self.mem_fraction_static`" in out


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif"])
def test_one_verdict_line_on_stderr_in_every_format(tmp_path: Path, fmt: str) -> None:
    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new", ADDED)
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--no-cache", "--format", fmt])
    [line] = [line for line in result.stderr.splitlines() if line.startswith("sgtrace: verdict:")]
    assert line.endswith("caps: 1 added, 3 unchanged; budget formula unchanged; gate failed (added)")
    assert result.exit_code == 1


def test_the_text_shows_only_what_changed_in_a_changed_cap(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new", CHANGED)
    out = CliRunner().invoke(cli, ["diff", str(old), str(new), "--no-cache"]).stdout
    section = out[out.index("changed caps (1):") :]
    assert (
        "    when: self.server_args.max_total_tokens is not None\n      ->  self.server_args.max_total_tokens\n"
        in section
    )
    assert "code:" in section and "---" not in section  # the same code: one line, no diff


def test_a_start_up_under_both_trees(tmp_path: Path) -> None:
    inputs = ["--set", "avail=20", "--set", "total=80", "--set", "mem_fraction_static=0.9"]
    code, payload = _diff(tmp_path, BUDGET, *inputs, "--fail-on", "pool")
    assert payload["kv_budget_gb"] == {"old": pytest.approx(12.0), "new": pytest.approx(18.0)}
    assert payload["run"]["left_out"] == {"old": [], "new": ["total"]}  # the new formula has no `total`
    assert code == 1  # the pool changed and --fail-on names it
    same, payload = _diff(tmp_path / "same", RUNNER, *inputs, "--fail-on", "pool")
    assert payload["kv_budget_gb"] == {"old": pytest.approx(12.0), "new": pytest.approx(12.0)} and same == 0
    typo = CliRunner().invoke(cli, ["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--no-cache",
                                    "--set", "avial=20"])  # fmt: skip
    assert typo.exit_code == 2
    assert (
        typo.stderr.strip()
        == "sgtrace: error: --set avial: not an input of either release's formula, caps or ServerArgs"
        " (did you mean avail?)"
    )


def test_fingerprint_ignores_lines_and_formatting() -> None:
    cap = Cap("a.py", 10, "m.R", "R.f", "x", "min", (), (), "self.x = min(self.x, y)")
    moved_down = Cap("a.py", 40, "m.R", "R.f", "x", "min", (), (), "self.x = min(\n    self.x, y\n)")
    assert fingerprint(cap) == fingerprint(moved_down)
    site = BudgetSite("a.py", 3, "rest = a - b * (1 - f)", ())
    result = compare([cap], [moved_down], [site], [site])
    assert (result.added, result.removed, result.changed, result.moved, result.unchanged) == ((), (), (), (), 1)
    assert result.budget_changed is None


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
    assert same.exit_code == 0 and "caps: 3 unchanged; budget formula unchanged; gate passed" in same.stdout
    rewritten = runner.invoke(cli, ["check", str(old), "--write-baseline", str(baseline), "--no-cache"])
    assert rewritten.exit_code == 0 and "reviewed: expected" in baseline.read_text()
    new = _tree(tmp_path / "new", ADDED)
    gated = runner.invoke(cli, ["check", str(new), "--baseline", str(baseline), "--no-cache"])
    assert gated.exit_code == 1 and "added caps (1):" in gated.stdout
    moved = runner.invoke(cli, ["check", str(_tree(tmp_path / "moved", MOVED)), "--baseline", str(baseline),
                                "--no-cache", "--format", "json"])  # fmt: skip
    assert (moved.exit_code, len(json.loads(moved.stdout)["moved"])) == (0, 3)
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    assert runner.invoke(cli, ["check", str(new), "--baseline", str(broken), "--no-cache"]).exit_code == 2


def test_check_fails_closed_when_a_file_that_held_a_cap_cannot_be_decoded(tmp_path: Path) -> None:
    from tests.sarif_schema import assert_valid_sarif

    tree = _tree(tmp_path / "tree")
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    assert runner.invoke(cli, ["check", str(tree), "--write-baseline", str(baseline), "--no-cache"]).exit_code == 0
    runner_py = tree / "pkg" / "runner.py"
    runner_py.write_bytes(b'NOTE = "\xff\xfe"\n' + runner_py.read_bytes())  # not UTF-8, no coding line
    args = ["check", str(tree), "--baseline", str(baseline), "--no-cache", "--fail-on", "added"]
    gated = runner.invoke(cli, args)
    assert gated.exit_code == 1  # not "removed" and exit 0: --fail-on does not include removed
    assert "pkg/runner.py:1: cannot decode" in gated.stderr  # the per-file error, as the other commands print it
    assert "gate failed (unreadable files held caps)" in gated.stderr
    assert "caps in files the new tree could not analyse (not counted as removed) (3):" in gated.stdout
    payload = json.loads(runner.invoke(cli, [*args, "--format", "json"]).stdout)
    assert payload["removed"] == [] and len(payload["unreadable"]) == 3 and payload["verdict"]["failed"]
    log = json.loads(runner.invoke(cli, [*args, "--format", "sarif"]).stdout)
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert {n["level"] for n in notes} == {"error"} and len(notes) == 3
    assert {n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes} == {"pkg/runner.py"}
    assert_valid_sarif(log)
    report_only = runner.invoke(cli, [*args, "--exit-zero"])
    assert report_only.exit_code == 0 and "gate passed (--exit-zero; it would fail on" in report_only.stderr


def test_a_baseline_written_before_exits_were_recorded_still_matches(tmp_path: Path) -> None:
    early_exit = RUNNER.replace(
        "        self.max_total_num_tokens = self.profile(total, avail)\n",
        "        self.max_total_num_tokens = self.profile(total, avail)\n        if self.server_args.skip:\n"
        "            return\n",
    )
    tree = _tree(tmp_path / "tree", early_exit)
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    runner.invoke(cli, ["check", str(tree), "--write-baseline", str(baseline), "--no-cache"])
    data = json.loads(baseline.read_text())
    assert any(c["exits"] for c in data["caps"])
    for cap in data["caps"]:
        del cap["exits"]
    baseline.write_text(json.dumps(data))
    same = runner.invoke(cli, ["check", str(tree), "--baseline", str(baseline), "--no-cache"])
    assert same.exit_code == 0 and "caps: 3 unchanged" in same.stdout


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


def test_a_log_on_standard_input_is_read_for_both_trees(tmp_path: Path) -> None:
    """diff reads the start-up twice (once per tree): a pipe, which cannot be read twice, is spooled first."""
    journal = Path(__file__).parent / "fixtures" / "logs" / "h20_three_startups.journal"
    sample = str(sample_tree())
    common = ["diff", sample, sample, "--format", "json", "--cache-dir", str(tmp_path / "cache")]
    by_file = subprocess.run(
        [sys.executable, "-m", "sgtrace", *common, "--log", str(journal)], capture_output=True, check=False
    )
    with open(journal, "rb") as piped:  # a real pipe, not a seekable file: cat feeds it
        cat = subprocess.Popen(["cat"], stdin=piped, stdout=subprocess.PIPE)
        by_pipe = subprocess.run(
            [sys.executable, "-m", "sgtrace", *common, "--log", "-"], stdin=cat.stdout, capture_output=True, check=False
        )
        cat.wait()
    assert by_file.returncode == by_pipe.returncode == 0, by_pipe.stderr
    pool = json.loads(by_pipe.stdout)["kv_budget_gb"]
    assert pool["old"] is not None and pool == json.loads(by_file.stdout)["kv_budget_gb"]
