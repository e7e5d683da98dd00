"""Names the tree does not know are errors (issue 18): the attribute, the budget, --set, the configuration.

Run as a user runs them, through ``sgtrace.cli.main`` (its one-line error format), on the sample tree and
on a real release.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.cli import main
from sgtrace.sources import sample_tree
from tests import releases

SAMPLE = str(sample_tree())
FIGURES = ["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture()
def sgtrace(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``sgtrace ARGS`` in this process: (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _error(result: tuple[int, str, str], message: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr: ``sgtrace: error: `` and *message*."""
    code, out, err = result
    assert code == 2 and out == "", (code, out, err)
    [line] = err.strip().splitlines()
    assert line.startswith("sgtrace: error: ") and message in line, line


def _baseline(sgtrace: Run, tmp_path: Path, *args: str) -> Path:
    path = tmp_path / "baseline.json"
    code, _, err = sgtrace("check", SAMPLE, "--write-baseline", str(path), "--no-cache", *args)
    assert code == 0, err
    return path


# -- the cases -------------------------------------------------------------------------------------------


def test_a_budget_typo_is_refused_with_the_name_the_tree_holds(sgtrace: Run) -> None:
    """``caps --budget mem_fracton_static`` exited 0 with the sample's guarded writes called overrides."""
    _error(
        sgtrace("caps", SAMPLE, "--budget", "mem_fracton_static", "--no-cache"),
        f"--budget mem_fracton_static: not a name in {SAMPLE} (did you mean mem_fraction_static?)",
    )


def test_explain_with_a_budget_typo_says_so_on_stderr(sgtrace: Run) -> None:
    """``explain --budget <typo>`` printed "it needs ." and exited 2 with nothing on stderr."""
    _error(
        sgtrace("explain", SAMPLE, "--budget", "mem_fracton_static", "--no-cache", *FIGURES),
        "--budget mem_fracton_static: not a name in",
    )


def test_graph_of_an_attribute_never_written_exits_1_as_trace_does(sgtrace: Run, tmp_path: Path) -> None:
    """``graph <attribute>`` printed an empty digraph and exited 0."""
    (tmp_path / "m.py").write_text("size = pool.max_total_num_tokens\n")
    code, out, err = sgtrace("trace", "max_total_num_tokens", str(tmp_path), "--no-cache")
    assert code == 1 and out == f"no writes of .max_total_num_tokens under {tmp_path} (not a git checkout)\n"
    for fmt in ("--dot", "--json", "--graphml"):
        code, out, err = sgtrace("graph", "max_total_num_tokens", str(tmp_path), fmt, "--no-cache")
        assert (code, out, err) == (1, "", f"sgtrace: no writes of .max_total_num_tokens under {tmp_path}\n")
    code, _, err = sgtrace("graph", "max_total_num_tokens", str(tmp_path), "-o", str(tmp_path / "g.dot"))
    assert code == 1 and not (tmp_path / "g.dot").exists()


# -- the attribute -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["find", "max_total_num_tokenz", SAMPLE],
        ["trace", "max_total_num_tokenz", SAMPLE],
        ["graph", "max_total_num_tokenz", SAMPLE],
        ["graph", "max_total_num_tokenz", SAMPLE, "--focus", "budget"],
    ],
)
def test_an_attribute_argument_no_tree_holds_is_a_typo(sgtrace: Run, args: list[str]) -> None:
    _error(
        sgtrace(*args, "--no-cache"),
        f"max_total_num_tokenz: not a name in {SAMPLE} (did you mean max_total_num_tokens?)",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["caps", SAMPLE],
        ["explain", SAMPLE, *FIGURES],
        ["diff", SAMPLE, SAMPLE],
        ["report", SAMPLE, "-o", "-"],
        ["check", SAMPLE, "--write-baseline", "{tmp}/b.json"],
    ],
)
def test_an_attr_no_tree_holds_is_a_typo(sgtrace: Run, tmp_path: Path, args: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    _error(
        sgtrace(*args, "--attr", "max_total_num_tokenz", "--no-cache"),
        "--attr max_total_num_tokenz: not a name in",
    )
    assert not (tmp_path / "b.json").exists()


def test_find_with_several_trees_refuses_a_name_none_of_them_holds(sgtrace: Run, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    _error(
        sgtrace("find", "max_total_num_tokenz", str(tmp_path), SAMPLE, "--no-cache"),
        f"max_total_num_tokenz: not a name in {tmp_path} or {SAMPLE} (did you mean max_total_num_tokens?)",
    )
    code, out, _ = sgtrace("find", "max_total_num_tokens", str(tmp_path), SAMPLE, "--no-cache")
    assert code == 0 and "max_total_num_tokens" in out


@pytest.mark.parametrize(
    "args",
    [
        ["caps", "{tree}"],
        ["caps", "{tree}", "--format", "json"],
        ["explain", "{tree}", *FIGURES],
        ["diff", "{tree}", "{tree}"],
        ["report", "{tree}", "-o", "{tmp}/r.html"],
        ["graph", "{tree}", "--focus", "budget"],
    ],
)
def test_every_command_answers_an_attribute_never_written_as_trace_does(
    sgtrace: Run, tmp_path: Path, args: list[str]
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text("def f(pool, mem_fraction_static):\n    return pool.max_total_num_tokens\n")
    args = [a.replace("{tree}", str(tree)).replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = sgtrace(*args, "--no-cache")
    assert (code, out, err) == (1, "", f"sgtrace: no writes of .max_total_num_tokens under {tree}\n")
    assert not (tmp_path / "r.html").exists()


def test_a_tree_with_a_file_it_could_not_read_is_not_sure_of_a_typo(sgtrace: Run, tmp_path: Path) -> None:
    """The file left out may hold the name: the answer is "no writes", with the file that was not read."""
    (tmp_path / "big.py").write_text("self.max_total_num_tokens = 1\n" * 100)
    code, _, err = sgtrace("caps", str(tmp_path), "--max-file-size", "100", "--no-cache")
    assert code == 1 and err.startswith("big.py:0: too large")
    assert err.endswith(f"sgtrace: no writes of .max_total_num_tokens under {tmp_path}\n")
    code, out, err = sgtrace("find", "max_total_num_tokenz", str(tmp_path), "--max-file-size", "100", "--no-cache")
    assert (
        code == 1
        and out == f"no writes of .max_total_num_tokenz under {tmp_path} (not a git checkout)\n"
        and "too large" in err
    )


# -- the budget --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["caps", SAMPLE],
        ["explain", SAMPLE, *FIGURES],
        ["diff", SAMPLE, SAMPLE],
        ["report", SAMPLE, "-o", "-"],
        ["graph", SAMPLE, "--focus", "budget"],
        ["check", SAMPLE, "--write-baseline", "{tmp}/b.json"],
    ],
)
def test_a_budget_no_tree_holds_is_a_typo_for_every_command(sgtrace: Run, tmp_path: Path, args: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    _error(
        sgtrace(*args, "--budget", "mem_fracton_static", "--no-cache"),
        "--budget mem_fracton_static: not a name in",
    )
    assert not (tmp_path / "b.json").exists()


def test_a_budget_that_does_not_reach_the_attribute_is_a_warning_and_calls_no_cap_an_override(sgtrace: Run) -> None:
    # random_seed is a field of the sample's ServerArgs: the tree holds it, and the pool's size never reads it
    code, out, err = sgtrace("caps", SAMPLE, "--budget", "random_seed", "--format", "json", "--no-cache")
    assert code == 0
    assert err == (
        f"sgtrace: warning: --budget random_seed does not reach .max_total_num_tokens in {SAMPLE}: no cap is listed\n"
    )
    assert json.loads(out)["caps"] == [] and json.loads(out)["budget_sites"] == []
    code, out, _ = sgtrace("caps", SAMPLE, "--no-cache")
    assert code == 0 and "override" in out  # with the budget that reaches, the sample's overrides are there


def test_explain_with_a_budget_that_does_not_reach_has_no_formula(sgtrace: Run) -> None:
    _error(
        sgtrace("explain", SAMPLE, "--budget", "random_seed", "--no-cache", *FIGURES),
        f"--budget random_seed does not reach .max_total_num_tokens in {SAMPLE}: there is no budget formula",
    )


def test_diff_warns_once_of_a_budget_that_reaches_neither_tree(sgtrace: Run) -> None:
    code, _, err = sgtrace("diff", SAMPLE, SAMPLE, "--budget", "random_seed", "--no-cache")
    assert code == 0
    assert err.splitlines()[0] == (
        f"sgtrace: warning: --budget random_seed does not reach .max_total_num_tokens in {SAMPLE}: no cap is listed"
    )


def test_a_baseline_written_for_another_budget_is_refused(sgtrace: Run, tmp_path: Path) -> None:
    path = _baseline(sgtrace, tmp_path)
    _error(
        sgtrace("check", SAMPLE, "--baseline", str(path), "--budget", "random_seed", "--no-cache"),
        "the baseline was written for --budget mem_fraction_static, not random_seed",
    )
    _error(
        sgtrace("check", SAMPLE, "--baseline", str(path), "--attr", "max_running_requests", "--no-cache"),
        "the baseline was written for --attr max_total_num_tokens, not max_running_requests",
    )


def test_a_configured_budget_is_held_against_the_tree_as_the_option_is(
    sgtrace: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.sgtrace]\nbudget = "mem_fracton_static"\n')
    monkeypatch.chdir(tmp_path)
    _error(sgtrace("caps", SAMPLE, "--no-cache"), "--budget mem_fracton_static: not a name in")


def test_a_config_key_that_names_no_option_gets_a_did_you_mean(
    sgtrace: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.sgtrace.caps]\nbugdet = "mem_fraction_static"\n')
    monkeypatch.chdir(tmp_path)
    _error(sgtrace("caps", SAMPLE, "--no-cache"), "unknown key 'bugdet' (did you mean 'budget'?)")


# -- --set, read by one function for every command ---------------------------------------------------------------

_COMMANDS_WITH_SET = [
    ["explain", SAMPLE],
    ["diff", SAMPLE, SAMPLE],
    ["check", SAMPLE, "--baseline", "{baseline}"],
    ["report", SAMPLE, "-o", "-"],
]


@pytest.mark.parametrize("command", _COMMANDS_WITH_SET, ids=lambda c: c[0])
@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["weights_gb"], "--set expects NAME=VALUE, got 'weights_gb'"),
        (["=3"], "--set expects NAME=VALUE, got '=3'"),
        (["mem_fraction_static=nan"], "--set mem_fraction_static=nan: not a finite number"),
        (["weights_gb=-inf"], "--set weights_gb=-inf: not a finite number"),
        (["mem_fraction_static=1.5"], "--set mem_fraction_static=1.5: a fraction of the GPU's memory, in (0, 1]"),
        (["weights_gb=-1"], "--set weights_gb=-1: memory the weights took cannot be negative"),
        (["kv_tokens=1.5"], "--set kv_tokens=1.5: a whole number of tokens"),
        (["weights_gb=abc"], "--set weights_gb=abc: not a number"),
        (["weights_gb=70", "weights_gb=71"], "--set weights_gb is given twice, as 70.0 and 71.0"),
        (["mem_fracton_static=0.88"], "(did you mean mem_fraction_static?)"),
    ],
    ids=["no-equals", "no-name", "nan", "-inf", "range", "negative", "tokens", "not-a-number", "twice", "typo"],
)
def test_every_command_reads_set_the_same_way(
    sgtrace: Run, tmp_path: Path, command: list[str], settings: list[str], message: str
) -> None:
    baseline = _baseline(sgtrace, tmp_path) if "{baseline}" in command else None
    args = [a.replace("{baseline}", str(baseline)) for a in command]
    given = [word for setting in settings for word in ("--set", setting)]
    _error(sgtrace(*args, *given, "--no-cache"), message)


def test_the_same_value_given_twice_is_not_a_conflict(sgtrace: Run) -> None:
    code, _, err = sgtrace("explain", SAMPLE, *FIGURES, "--set", "weights_gb=72.33", "--no-cache")
    assert code == 0, err


# -- a real release ----------------------------------------------------------------------------------------------


@pytest.fixture()
def middle(tmp_path: Path) -> list[str]:
    """``sglang==0.5.9`` and the cache that holds it, as command-line words."""
    return [f"sglang=={releases.MIDDLE}", "--cache-dir", str(releases.linked_cache(tmp_path, releases.MIDDLE))]


@pytest.mark.release
def test_on_a_release_typos_of_the_budget_and_the_attribute_are_refused(sgtrace: Run, middle: list[str]) -> None:
    spec = middle[0]
    _error(
        sgtrace("caps", *middle, "--budget", "mem_fracton_static"),
        f"--budget mem_fracton_static: not a name in {spec} (did you mean mem_fraction_static?)",
    )
    _error(
        sgtrace("explain", *middle, "--budget", "mem_fracton_static", *FIGURES),
        f"--budget mem_fracton_static: not a name in {spec} (did you mean mem_fraction_static?)",
    )
    _error(
        sgtrace("caps", *middle, "--attr", "max_total_num_tokenz"),
        f"--attr max_total_num_tokenz: not a name in {spec} (did you mean max_total_num_tokens?)",
    )
    _error(
        sgtrace("graph", "max_total_num_tokenz", *middle),
        f"max_total_num_tokenz: not a name in {spec} (did you mean max_total_num_tokens?)",
    )
    _error(sgtrace("explain", *middle, "--set", "mem_fracton_static=0.88"), "(did you mean mem_fraction_static?)")


@pytest.mark.release
def test_on_a_release_a_budget_that_does_not_reach_lists_no_override(sgtrace: Run, middle: list[str]) -> None:
    # chunked_prefill_size is a ServerArgs field of every release: it bounds a prefill, not the pool
    code, out, err = sgtrace("caps", *middle, "--budget", "chunked_prefill_size", "--format", "json")
    assert code == 0
    assert err == (
        f"sgtrace: warning: --budget chunked_prefill_size does not reach .max_total_num_tokens in {middle[0]}: "
        "no cap is listed\n"
    )
    assert json.loads(out)["caps"] == []
    code, out, _ = sgtrace("caps", *middle, "--format", "json")
    assert code == 0 and json.loads(out)["caps"]  # the budget that reaches finds the release's caps
