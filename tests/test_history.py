"""history: ranges from the registry's list, the binary search, the timeline on small trees and on a git
checkout built here (the real releases are in test_history_releases.py)."""

from __future__ import annotations

import gc
import json
import math
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace import api
from sgtrace.analyses.history import first_change
from sgtrace.cli import cli
from sgtrace.registry import between, is_pre
from sgtrace.sources import points
from tests.test_diff import SCHEDULER

RUNNER = """\
class Runner:
    def __init__(self, server_args, mem_fraction_static):
        self.server_args = server_args
        self.mem_fraction_static = mem_fraction_static

    def profile(self, total, avail):
        rest_memory = avail - total * (1 - self.mem_fraction_static){reserve}
        return int(rest_memory * (1 << 30)) // 1024

    def init_memory_pool(self, total, avail):
        self.max_total_num_tokens = self.profile(total, avail)
        if self.server_args.max_total_tokens is not None:
            self.max_total_num_tokens = min(self.max_total_num_tokens, self.server_args.max_total_tokens)
{rounding}"""
ROUNDING = "        self.max_total_num_tokens = self.max_total_num_tokens // 64 * 64\n"
#: The figures the small trees' formula is evaluated with: 20 - 80 x (1 - 0.9) = 12 GB.
FIGURES = ("--set", "total=80", "--set", "avail=20", "--set", "mem_fraction_static=0.9")


def _tree(root: Path, reserve: str = "", rounding: str = "") -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "runner.py").write_text(RUNNER.format(reserve=reserve, rounding=rounding))
    (root / "pkg" / "scheduler.py").write_text(SCHEDULER)
    (root / "pkg" / "other.py").write_text("x = 1\n")
    return root


def _history(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["history", *args])
    return result.exit_code, result.stdout, result.stderr


def _rows(text: str) -> dict[str, str]:
    """The timeline's rows by release (the first word, or the second after a mark)."""
    found = {}
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("--")) + 1
    for line in lines[start : lines.index("", start)]:
        words = line.split()
        name = words[1] if words[:1] == ["*"] and len(words) > 1 else words[0] if words else ""
        if name.startswith("v") and name[1:].isdigit():
            found[name] = line
    return found


# --- the registry's versions, the stops named ---------------------------------------------------------------

LISTED = ["0.5.8", "0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.5.11", "0.5.23", "0.5.24.dev1", "0.5.9.0"]


def test_a_range_takes_post_releases_and_leaves_pre_releases_out_unless_asked() -> None:
    assert between(LISTED, "0.5.9", "0.5.11") == ["0.5.9", "0.5.10", "0.5.10.post1", "0.5.11"]
    assert between(LISTED, "0.5.9", "0.5.11", pre=True) == ["0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.5.11"]
    assert between(LISTED, "0.5.11", "0.5.9") == between(LISTED, "0.5.9", "0.5.11")  # the ends in either order
    assert between(LISTED, "0.5.10rc0", "0.5.10") == ["0.5.10rc0", "0.5.10"]  # an end that is a pre-release
    assert between(LISTED, "0.6", "0.7") == []
    assert is_pre("0.5.10rc0") and is_pre("1.0.dev3") and not is_pre("0.5.10.post1")


def test_the_stops_are_a_list_of_versions_or_trees(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "sglang-0.5.9")
    found = points([f"{tree}/", "sglang==0.5.9,0.5.23"], tmp_path / "cache")
    assert [(p.text, p.label) for p in found] == [
        (f"{tree}/", "sglang-0.5.9"), ("sglang==0.5.9", "0.5.9"), ("sglang==0.5.23", "0.5.23"),
    ]  # fmt: skip


# --- the binary search ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 3, 5, 19, 64])
def test_the_first_change_is_found_reading_about_log2_stops(count: int) -> None:
    for changed in [*range(1, count), None]:
        probed: list[int] = []

        def differs(index: int, changed: int | None = changed, probed: list[int] = probed) -> bool:
            probed.append(index)
            return changed is not None and index >= changed

        found, before = first_change(count, differs)
        assert found == changed
        assert before == (changed - 1 if changed is not None else count - 1)
        assert len(probed) == len(set(probed)) <= math.ceil(math.log2(count))


def test_a_stop_that_cannot_be_read_is_stepped_over() -> None:
    # stop 4 cannot be read, the change is at 4: the answer is the next stop read that differs, 5, after 3
    found, before = first_change(8, lambda index: None if index == 4 else index >= 4)
    assert (found, before) == (5, 3)
    # every stop but the first unreadable: no change found, the first is the last known the same
    assert first_change(5, lambda index: None) == (None, 0)


# --- the timeline on small trees -----------------------------------------------------------------------------


def test_the_timeline_marks_the_step_that_changes_the_formula_and_the_pool(tmp_path: Path) -> None:
    old = _tree(tmp_path / "v1")
    same = _tree(tmp_path / "v2")
    reserving = _tree(tmp_path / "v3", reserve=" - 1")
    rounding = _tree(tmp_path / "v4", reserve=" - 1", rounding=ROUNDING)
    trees = [str(old), str(same), str(reserving), str(rounding)]
    code, out, err = _history(*trees, *FIGURES, "--no-cache")
    assert code == 0, err
    rows = _rows(out)
    assert rows["v3"].startswith("*") and "pool -1.00 GB; formula changed" in rows["v3"], out
    assert not rows["v2"].startswith("*") and rows["v2"].rstrip().endswith("same as v1")
    assert not rows["v4"].startswith("*") and "caps: 1 added" in rows["v4"]  # not watched by default with a start-up
    assert "12.00 GB" in rows["v1"] and "11.00 GB" in rows["v3"]
    assert "rest_memory = avail - total * (1 - self.mem_fraction_static) - 1" in out
    assert "history: 4 in all, 4 read; 1 step(s) change budget/pool: v2 -> v3" in err

    code, out, _ = _history(*trees, "--no-cache", "--format", "json", "--watch", "added,budget")
    data = json.loads(out)
    assert [step["changes"] for step in data["steps"]] == [False, True, True]
    assert [stop["caps"] for stop in data["stops"]] == [2, 2, 2, 3]
    assert data["steps"][2]["added"][0]["category"] == "round" and data["first_change"] is None

    code, out, _ = _history(*trees, *FIGURES, "--no-cache", "--format", "markdown")
    assert code == 0 and "| `v3`" in out and "<details><summary>v2 → v3: pool -1.00 GB; formula changed" in out


def test_first_change_reads_only_what_the_search_needs(tmp_path: Path) -> None:
    trees = [str(_tree(tmp_path / f"v{n}", reserve=" - 1" if n >= 6 else "")) for n in range(1, 10)]
    code, out, err = _history(*trees, *FIGURES, "--no-cache", "--first-change", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["first_change"]["release"] == "v6" and data["first_change"]["after"] == "v5"
    assert data["first_change"]["kinds"] == ["pool"]  # a start-up given: its pool is what is looked for
    assert data["first_change"]["read"] <= math.ceil(math.log2(9)) + 1
    assert sum(stop["read"] for stop in data["stops"]) == data["first_change"]["read"]
    code, out, _ = _history(*trees, "--no-cache", "--first-change")  # no start-up: the formula
    assert "first change (budget): v6, the step from v5 (read " in out


def test_a_stop_that_cannot_be_read_is_a_row_that_says_so(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "v1"), _tree(tmp_path / "v3", reserve=" - 1")
    code, out, err = _history(str(old), str(tmp_path / "v2"), str(new), "--no-cache")
    assert code == 0, err
    assert "not read: no such file or directory" in out and "formula changed" in out
    assert "3 in all, 2 read, 1 could not be" in err


def test_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    tree = str(_tree(tmp_path / "v1"))
    code, _, err = _history(tree, "--no-cache")
    assert code == 2 and "a history needs two releases or more; 1 given" in err
    code, _, err = _history(tree, tree, "--no-cache", "--watch", "pools")
    assert code == 2 and "unknown pools; choose from added, removed, changed, moved, budget, pool" in err
    code, _, err = _history(tree, tree, "--no-cache", "--set", "nosuch=1")
    assert code == 2 and "--set nosuch" in err
    code, _, err = _history(str(tmp_path / "a"), str(tmp_path / "b"), "--no-cache")
    assert code == 2 and "no such file or directory" in err
    code, _, err = _history("max_total_num_token", tree, tree, "--no-cache")
    assert code == 2 and "did you mean max_total_num_tokens" in err


# --- a git checkout ------------------------------------------------------------------------------------------


def _git(repository: Path, *arguments: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "tag.gpgSign=false", *arguments]
    return subprocess.run(command, cwd=repository, check=True, capture_output=True, text=True).stdout


def test_git_history_follows_the_commits_that_touch_the_slice(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "tag", "v1")
    (repo / "pkg" / "other.py").write_text("x = 2\n")
    _git(repo, "commit", "-qam", "a file the slice does not read")
    (repo / "pkg" / "runner.py").write_text(RUNNER.format(reserve=" - 1", rounding=""))
    _git(repo, "commit", "-qam", "reserve a GB")
    _git(repo, "tag", "-a", "v2", "-m", "v2")  # an annotated tag: shown on the commit it tags
    (repo / "pkg" / "runner.py").write_text(RUNNER.format(reserve=" - 1", rounding=ROUNDING))
    _git(repo, "commit", "-qam", "page rounding")
    cache = str(tmp_path / "cache")
    code, out, err = _history("--git", str(repo), "v1..HEAD", "--cache-dir", cache, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [s["subject"] for s in data["stops"]] == ["base", "reserve a GB", "page rounding"]
    assert [s["tags"] for s in data["stops"]] == [["v1"], ["v2"], []]
    assert [step["changes"] for step in data["steps"]] == [True, True]
    code, out, err = _history("--git", str(repo), "v1..HEAD", "--cache-dir", cache, "--first-change", *FIGURES)
    assert code == 0, err
    reserve = _git(repo, "rev-parse", "v2^{commit}").strip()
    assert f"first change (pool): {reserve[:10]} (v2), the step from " in out
    code, _, err = _history("--git", str(repo), "v1..nosuch", "--cache-dir", cache)
    assert code == 2 and "nosuch" in err


def test_the_report_shows_the_history_as_a_chart_and_the_steps(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "v1"), _tree(tmp_path / "v2", reserve=" - 1")
    page = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(new), "--history", str(old), "--history", str(new), *FIGURES,
                                      "--no-cache", "-o", str(page)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    section = text[text.index('<section id="history">') : text.index("</section>", text.index('id="history"'))]
    assert section.count("<circle") == 2 and section.count('class="release marked"') == 1
    assert ">12.00 GB</text>" in section and ">11.00 GB</text>" in section  # each value where it changes
    assert "v1 → v2" in section and "pool -1.00 GB; formula changed" in section
    assert '<a href="#history">history</a>' in text


def test_children_reading_one_log_at_once_each_read_all_of_it(tmp_path: Path) -> None:
    """Two lanes read the log at the same time: a stream inherited by both would share its position (each
    child read part of the other's bytes, and found no start-up). A log of tens of MB, by path and on stdin."""
    import shutil

    from sgtrace.sources import sample_tree
    from tests.conftest import FIXTURES

    trees = []
    for name in ("a", "b", "c", "d"):
        trees.append(str(shutil.copytree(sample_tree(), tmp_path / name)))
    journal = (FIXTURES / "logs" / "h20_three_startups.journal").read_text()
    line = "Dec 02 10:00:00 h python3[1]: Decode batch. #running-req: {}, #token: 1\n"
    filler = "".join(line.format(n) for n in range(150_000))
    log = tmp_path / "big.journal"
    log.write_text(filler + journal + filler)
    for given, stdin in (([str(log)], None), (["-"], log.read_bytes())):
        result = CliRunner().invoke(cli, ["history", *trees, "--log", *given, "--no-cache", "--format", "json"],
                                    input=stdin)  # fmt: skip
        assert result.exit_code == 0, result.output
        stops = json.loads(result.stdout)["stops"]
        assert [stop["error"] for stop in stops] == [None] * 4
        assert {round(stop["kv_budget_gb"], 2) for stop in stops} == {10.43}


def test_a_budget_that_reaches_the_attribute_in_no_release_is_said(tmp_path: Path) -> None:
    trees = [str(_tree(tmp_path / "v1")), str(_tree(tmp_path / "v2", reserve=" - 1"))]
    code, out, err = _history(*trees, "--no-cache", "--budget", "x")  # a name of the trees, not of the formula
    assert code == 0 and "warning: no place where x enters the computation of .max_total_num_tokens" in err
    assert "0 steps" in out


def test_more_stops_than_max_stops_are_refused_unless_searched(tmp_path: Path) -> None:
    trees = [str(_tree(tmp_path / f"v{n}", reserve=" - 1" if n >= 3 else "")) for n in range(1, 5)]
    code, _, err = _history(*trees, "--no-cache", "--max-stops", "3")
    assert code == 2 and "4 releases to read, more than --max-stops 3" in err and "--first-change" in err
    code, out, err = _history(*trees, "--no-cache", "--max-stops", "3", "--first-change")
    assert code == 0 and "first change (budget): v3, the step from v2" in out, err


def test_two_lanes_keeping_each_releases_words_answer_as_one_process(tmp_path: Path) -> None:
    """Each lane's child reads its releases in turn, keeping the words of the contents it met: the history
    is the one a single process gives, release by release (the trees here share most files, as releases do)."""
    import shutil

    from sgtrace.sources import sample_tree

    trees = []
    for number in range(5):
        tree = shutil.copytree(sample_tree(), tmp_path / f"v{number}")
        mixin = tree / "sglang" / "srt" / "model_executor" / "model_runner_kv_cache_mixin.py"
        text = mixin.read_text()
        if number >= 2:  # a reservation from release 2 on
            text = text.replace("(1 - self.mem_fraction_static)", "(1 - self.mem_fraction_static) - 1")
        mixin.write_text(text + f"\n\ndef helper_{number}(runner):\n    return runner.max_total_num_tokens\n")
        if number == 3:
            (tree / "sglang" / "srt" / "utils.py").unlink()
        trees.append(str(tree))
    one = _history(*trees, "--no-cache", "-j", "1", "--format", "json")
    two = _history(*trees, "--no-cache", "-j", "2", "--format", "json")
    assert one[0] == two[0] == 0 and one[1] == two[1]
    stops = json.loads(two[1])["stops"]
    assert [stop["error"] for stop in stops] == [None] * 5
    assert [stop["formula"][0]["code"].endswith(") - 1") for stop in stops] == [False, False, True, True, True]


def test_stops_read_in_this_process_leave_the_collector_as_they_found_it(tmp_path: Path) -> None:
    """Each stop read here freezes what it leaves (the words and bodies kept for the next), so that collections
    pass it by; the history unfreezes it at its end: a program that calls on gets its garbage collected."""
    trees = [str(_tree(tmp_path / "v1")), str(_tree(tmp_path / "v2", reserve=" - 1"))]
    before = gc.get_freeze_count()
    frozen: list[int] = []
    real = api._Stops._analysed

    def analysed(self: api._Stops, *args: object) -> object:
        frozen.append(gc.get_freeze_count())
        return real(self, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api._Stops, "_analysed", analysed)
        code, out, err = _history(*trees, "--no-cache", "-j", "1")
    assert code == 0, err
    assert len(frozen) == 2 and all(count > before for count in frozen)
    assert gc.get_freeze_count() == before
