"""explain's inputs: the operator's figures without a log, numbers in range, names that exist, the fraction
a log implies, the server's configuration (launch command, /get_server_info), which release is analysed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from sgtrace.analyses.figures import BadFigure, complete, contradictions
from sgtrace.analyses.launch import read_command, read_server_info
from sgtrace.analyses.ledger import ledger
from sgtrace.analyses.release_args import ReleaseArgs
from sgtrace.cli import cli
from sgtrace.fetch import installed_package
from sgtrace.run.startups import Figure, StartUp
from sgtrace.sources import sample_tree
from tests.conftest import FIXTURES

KIMI = FIXTURES / "logs" / "kimi_three_startups.journal"
_PREFIX = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.-]+\[\d+\]: ")
FIGURES = ["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]


def _explain(*args: str, tree: Path | None = None) -> Result:
    return CliRunner().invoke(cli, ["explain", str(tree or sample_tree()), "--no-cache", *args])


def _json(*args: str, tree: Path | None = None) -> tuple[int, dict[str, Any]]:
    out = _explain(*args, "--format", "json", tree=tree)
    return out.exit_code, json.loads(out.stdout)


def _grep(tmp_path: Path, pattern: str) -> str:
    """The kimi journal as ``journalctl -o cat | grep -E pattern`` leaves it, in a file."""
    lines = [_PREFIX.sub("", line) for line in KIMI.read_text().splitlines()]
    path = tmp_path / "grep.log"
    path.write_text("\n".join(line for line in lines if re.search(pattern, line)) + "\n")
    return str(path)


def test_no_log_the_operators_figures_are_enough_and_the_answer_says_why_not_19() -> None:
    code, data = _json(*FIGURES)
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    assert data["inputs"]["avail_before_weights_gb"] == 94.04  # 21.71 + 72.33: weights_gb is used, not ignored
    assert data["origins"]["avail_before_weights_gb"].startswith("worked out: 21.71 free after the weights + 72.33")
    assert data["origins"]["weights_gb"] == "--set" and data["runs"] == [] and data["run"] is None
    assert "0.88 x 94.04 = 82.76 GB for weights and KV together; minus 72.33 GB of weights = 10.43 GB" in data["answer"]
    assert "Not 0.88 x 21.71 = 19.10 GB" in data["answer"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"avail_before_weights_gb": 94.04, "weights_gb": 72.33}, ("avail_after_weights_gb", 21.71)),
        ({"avail_before_weights_gb": 94.04, "avail_after_weights_gb": 21.71}, ("weights_gb", 72.33)),
        ({"avail_after_weights_gb": 21.71, "weights_gb": 72.33}, ("avail_before_weights_gb", 94.04)),
    ],
)
def test_two_memory_figures_give_the_third(given: dict[str, float], expected: tuple[str, float]) -> None:
    facts, derived = complete(given)
    assert facts[expected[0]] == pytest.approx(expected[1]) and list(derived) == [expected[0]]


def test_the_cards_size_is_not_the_free_memory() -> None:
    out = _explain("--set", "gpu_gb=96", "--set", "mem_fraction_static=0.88", "--set", "avail_after_weights_gb=21.71")
    assert out.exit_code == 2
    assert len(out.stderr.splitlines()) == 1  # why there is no answer, its note at the end of the line
    assert "; note: gpu_gb is the card's size, not the memory free before the weights" in out.stderr
    assert "give avail_before_weights_gb, or avail_after_weights_gb and weights_gb" in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "mem_fraction_static=nan"], "--set mem_fraction_static=nan: not a finite number"),
        (["--set", "mem_fraction_static=inf"], "--set mem_fraction_static=inf: not a finite number"),
        (["--set", "mem_fraction_static=-inf"], "--set mem_fraction_static=-inf: not a finite number"),
        (["--set", "mem_fraction_static=1e999"], "--set mem_fraction_static=inf: not a finite number"),
        (
            ["--set", "mem_fraction_static=1.5"],
            "--set mem_fraction_static=1.5: a fraction of the GPU's memory, in (0, 1]",
        ),
        (["--set", "mem_fraction_static=0"], "in (0, 1]"),
        (["--set", "mem_fraction_static=-5"], "in (0, 1]"),
        (["--set", "weights_gb=-1"], "--set weights_gb=-1: memory the weights took cannot be negative"),
        (["--set", "avail_before_weights_gb=nan"], "not a finite number"),
        (["--set", "kv_tokens=1.5"], "--set kv_tokens=1.5: a whole number of tokens"),
        (["--set", "tp_size=inf"], "--set tp_size=inf: not a finite number"),  # any numeric ServerArgs field
        (["--set", "page_size=abc"], "--set page_size=abc: not a number"),
        (
            ["--set", "avail_after_weights_gb=95", "--set", "avail_before_weights_gb=94"],
            "avail_after_weights_gb=95 is more than avail_before_weights_gb=94",
        ),
        (["--set", "weights_gb=100", "--set", "avail_before_weights_gb=94"], "weights_gb=100 is more than"),
        (["--set", "kv_gb=30", *FIGURES], "kv_gb=30 is more than avail_after_weights_gb=21.71"),
        (
            ["--set", "avail_before_weights_gb=97", "--set", "gpu_gb=96"],
            "avail_before_weights_gb=97 is more than gpu_gb",
        ),
        (["--set", "mem_fracton_static=0.88"], "(did you mean mem_fraction_static?)"),
        (["--set", "weight_gb=72"], "(did you mean weights_gb?)"),
    ],
)
def test_numbers_out_of_range_and_unknown_names_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = _explain(*args)
    assert out.exit_code == 2, out.output
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr, out.stderr
    assert "internal error" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--want-kv-gb", "nan", "nan is not a finite number"),
        ("--want-kv-gb", "inf", "is not in the range"),
        ("--want-kv-gb", "-inf", "is not in the range"),
        ("--want-kv-gb", "0", "is not in the range"),
        ("--want-tokens", "0", "is not in the range"),
        ("--want-tokens", "nan", "is not a valid integer"),
        ("--run", "0", "is not in the range"),
        ("--max-log-mb", "0", "is not in the range"),
    ],
)
def test_numeric_options_out_of_range_are_one_line_and_exit_2(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sgtrace.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["explain", str(sample_tree()), "--no-cache", *FIGURES, option, value])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"sgtrace: error: Invalid value for '{option}'") and message in err, err


def test_a_log_figure_contradicted_by_a_set_is_refused(tmp_path: Path) -> None:
    out = _explain("--log", str(KIMI), "--set", "avail_after_weights_gb=99")
    assert out.exit_code == 2 and "avail_after_weights_gb=99 is more than avail_before_weights_gb=94.04" in out.stderr


def test_the_log_implies_the_fraction_when_no_server_args_line_gives_it(tmp_path: Path) -> None:
    code, data = _json("--log", _grep(tmp_path, r"^(?!.*server_args)"))
    assert code == 0 and data["implied"] == {"mem_fraction_static": 0.88}
    assert data["inputs"]["mem_fraction_static"] == 0.88 and data["missing"] == {}
    assert data["origins"]["mem_fraction_static"] == "implied by the log's pool (no cap bound it)"
    assert "mem_fraction_static = 0.88 is implied by the log's own pool" in data["answer"]
    assert "Which cap binds is not known: mem_fraction_static was worked out from the pool itself." in data["answer"]
    whole, given = _json("--log", str(KIMI))
    assert whole == 0 and given["implied"] == {} and given["inputs"]["mem_fraction_static"] == 0.88


def test_without_the_pool_line_the_missing_fraction_is_named(tmp_path: Path) -> None:
    log = _grep(tmp_path, r"max_total_num_tokens|Load weight end")
    code, data = _json("--log", log)
    assert code == 2 and data["implied"] == {} and list(data["missing"]) == ["mem_fraction_static"]
    assert data["missing"]["mem_fraction_static"].startswith("--set mem_fraction_static=VALUE, or a log with its")
    assert "Its lines show 72.33 GB of weights, 94.04 GB free before them, 159277 tokens." in data["answer"]
    code, data = _json("--log", log, "--set", "mem_fraction_static=0.88")
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43 and data["run"] == 3


def test_the_server_info_and_the_launch_command_give_server_arguments(tmp_path: Path) -> None:
    log = _grep(tmp_path, r"max_total_num_tokens|Load weight end")
    info = tmp_path / "info.json"
    info.write_text(json.dumps({"mem_fraction_static": 0.88, "tp_size": 8, "max_total_num_tokens": 159277,
                                "cuda_graph_bs": [1, 2], "version": "0.5.9"}))  # fmt: skip
    code, data = _json("--log", log, "--server-info", str(info))
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    assert data["origins"]["mem_fraction_static"] == "--server-info"
    unit = tmp_path / "sglang.service"
    unit.write_text(
        "[Service]\nExecStart=/opt/venv/bin/python3 -m sglang.launch_server \\\n"
        "    --model-path /models/Kimi --tp-size 8 --mem-fraction-static 0.88 --no-such-option 1\n"
    )
    out = _explain("--log", log, "--command", str(unit), "--format", "json")
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    assert data["origins"]["mem_fraction_static"] == "--command"
    assert "--command's launch command: --no-such-option name no option of this release (not used)" in out.stderr
    code, data = _json("--log", log, "--command", str(unit), "--set", "mem_fraction_static=0.85")
    assert data["inputs"]["mem_fraction_static"] == 0.85  # --set wins


def test_a_command_is_read_with_the_releases_own_options() -> None:
    args = ReleaseArgs(
        "server_args.py", fields=frozenset({"tp_size", "mem_fraction_static", "enable_dp_attention", "model_path"}),
        options={"--tensor-parallel-size": "tp_size", "--tp-size": "tp_size", "--enable-dp-attention":
                 "enable_dp_attention", "--mem-fraction-static": "mem_fraction_static"},
        flags={"--enable-dp-attention": True},
    )  # fmt: skip
    found = read_command("ps: 4242 python3 -m sglang.launch_server --model-path 'a b' --tp 8 --enable-dp-attention "
                         "--mem-fraction-static=0.9", args)  # fmt: skip
    assert found.values == {
        "model_path": "a b",
        "tp_size": 8.0,
        "enable_dp_attention": True,
        "mem_fraction_static": 0.9,
    }
    assert read_server_info(b'{"tp_size": 8, "version": "0.5.9", "x": 1}', args).values == {"tp_size": 8.0}


def test_a_version_the_log_names_is_checked_against_the_release(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(sample_tree(), tree)
    (tree / "sglang" / "version.py").write_text('__version__ = "0.5.9"\n')
    log = tmp_path / "log"
    log.write_text("Feb 28 10:00:01 node dockerd[1]: pulled lmsysorg/sglang:v0.5.8-cu129\n" + KIMI.read_text())
    out = _explain("--log", str(log), tree=tree)
    assert out.exit_code == 0
    assert "sgtrace: note: the log names (line 1) sglang 0.5.8, but the release analysed is 0.5.9" in out.stderr
    same = tmp_path / "same"
    same.write_text(log.read_text().replace("v0.5.8", "v0.5.9"))
    assert "note" not in _explain("--log", str(same), tree=tree).stderr


@pytest.mark.skipif(installed_package("sglang") is not None, reason="sglang is installed here: it is the default")
def test_with_no_release_named_and_none_installed_explain_asks_for_one() -> None:
    out = CliRunner().invoke(cli, ["explain", "--no-cache", *FIGURES])
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "sglang is not installed: name the release that served the log (sglang==X.Y.Z" in out.stderr
    assert "sample" not in out.stderr


def test_ledger_rows_are_never_negative() -> None:
    run = StartUp(
        index=1, started="", first_line=1, ended="ready", complete=True, server_args={},
        target={"avail_before_weights_gb": Figure(94.04, 1, ""), "weights_gb": Figure(72.33, 2, ""),
                "avail_after_weights_gb": Figure(21.71, 2, ""), "kv_gb": Figure(10.42, 3, ""),
                "avail_after_pool_gb": Figure(11.292, 4, "")},
        draft={}, model_types=(), ranks=("",), disagreements=(), left=Figure(11.35, 5, ""), max_total_num_tokens=None,
    )  # fmt: skip
    rows = ledger(run)
    other = next(row for row in rows if row.item == "other pool memory")
    assert other.gb == 0.0 and str(other.gb) == "0.0"  # a residue of -0.002, not -0.00
    assert all(row.gb >= 0 for row in rows) and "not shown in the log" not in [row.item for row in rows]


def test_contradictions_are_only_checked_where_the_operator_gave_a_figure() -> None:
    contradictions({"avail_after_weights_gb": 95, "avail_before_weights_gb": 94}, set())  # the log's own business
    with pytest.raises(BadFigure):
        contradictions({"avail_after_weights_gb": 95, "avail_before_weights_gb": 94}, {"avail_after_weights_gb"})


@pytest.mark.parametrize(
    "index",
    ["[1, 2]", '{"metadata": "x"}', '{"metadata": {"total_size": "9"}}', '{"metadata": {"total_size": true}}', "{"],
)
def test_a_malformed_weights_index_is_passed_over_for_the_weight_files(tmp_path: Path, index: str) -> None:
    """An index that is not ``{"metadata": {"total_size": <bytes>}}`` gives no size (never a crash): the weight
    files' own sizes are taken instead, and with none there is no estimate."""
    from sgtrace.analyses.inputs import weight_files

    (tmp_path / "model.safetensors.index.json").write_text(index)
    assert weight_files(tmp_path) is None
    with open(tmp_path / "model-00001-of-00001.safetensors", "wb") as handle:
        handle.truncate(1 << 30)
    assert weight_files(tmp_path) == (1 << 30, f"1 weight files in {tmp_path}")


def test_a_log_whose_ranks_name_their_pipeline_stage_ran_with_pipeline_parallelism(tmp_path: Path) -> None:
    """SGLang names a rank's pipeline stage (``PP1``) only when pp_size > 1: a real gpustack deployment's paste
    showed only ``PP0`` lines and no server arguments, and the pipeline's all-reduce MIN of the pool was said not
    reached (the release's default, pp_size 1). The rank prefixes give at least two stages, and yield to any
    server_args, command or --set that names pp_size."""
    lines = [
        "[2025-11-11 20:29:10 {rank}] Load weight begin. avail mem=78.50 GB",
        "[2025-11-11 20:29:20 {rank}] Load weight end. type=Qwen2ForCausalLM, avail mem=70.40 GB, mem usage=8.10 GB.",
        "[2025-11-11 20:29:21 {rank}] KV Cache is allocated. #tokens: 1000000, K size: 25.00 GB, V size: 25.00 GB",
    ]
    log = tmp_path / "pp.log"

    def reduced(rank: str, *args: str) -> tuple[str, str | None]:
        log.write_text("\n".join(line.format(rank=rank) for line in lines) + "\n")
        _, data = _json("--log", str(log), *args)
        (cap,) = [c for c in data["caps"] if "self.pp_size > 1" in c["why"]]
        return cap["status"], data["origins"].get("pp_size")

    assert reduced("PP0 TP0") == ("applies", "the log's rank prefixes: a PP rank, at least 2 pipeline stages")
    assert reduced("PP3") == ("applies", "the log's rank prefixes: a PP rank, at least 4 pipeline stages")
    assert reduced("TP0")[0] == "not reached"
    assert reduced("PP0 TP0", "--set", "pp_size=1") == ("not reached", "--set")


def test_a_log_with_a_sliding_window_pool_is_of_a_hybrid_sliding_window_model(tmp_path: Path) -> None:
    """SGLang sizes a sliding-window pool only for a hybrid sliding-window model: a real DGX Spark run's paste
    (Laguna, its pools' lines) had the window's split caps 'not reached', is_hybrid_swa taken false from a config
    assumed to hold no sliding_window. The pool's line makes it true (the weakest layer: --set wins), and the
    inputs list says so."""
    stamp = "[2026-08-01 22:15:{:02d}] "
    lines = [
        "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, speculative_algorithm=None)",
        "Load weight begin. avail mem=114.99 GB",
        "Load weight end. type=LagunaForCausalLM, avail mem=22.03 GB, mem usage=92.96 GB.",
        "Use sliding window memory pool. full_layer_tokens=34097, swa_layer_tokens=27277",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 27277, K size: 1.87 GB, V size: 1.87 GB",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 34097, K size: 0.78 GB, V size: 0.78 GB",
        "SWAKVPool mem usage: 5.31 GB, swa size: 27277, full size: 34097",
        "Memory pool end. avail mem=13.07 GB",
    ]
    log = tmp_path / "swa.log"
    log.write_text("\n".join(stamp.format(i) + line for i, line in enumerate(lines)) + "\n")

    def split_caps(*args: str) -> set[str]:  # the sample tree's two splits of the pool, both under is_hybrid_swa
        _, data = _json("--log", str(log), *args)
        return {c["status"] for c in data["caps"] if c["category"] == "split"}

    _, data = _json("--log", str(log))
    assert data["origins"]["is_hybrid_swa"] == "the log's sliding-window pool (line 4)"
    assert "  is_hybrid_swa = True  (the log's sliding-window pool (line 4))" in _explain("--log", str(log)).output
    assert split_caps() == {"applies"}
    assert split_caps("--set", "is_hybrid_swa=false") == {"not reached"}


_SMALL_KV = 'os.getenv("SGLANG_CI_SMALL_KV_SIZE")'
_HELPER = """

def get_int_env_var(name: str, default: int = 0) -> int:
    return int(os.getenv(name, default))
"""


@pytest.mark.parametrize(
    "read",
    [
        _SMALL_KV,
        'os.environ.get("SGLANG_CI_SMALL_KV_SIZE")',
        'os.environ.get("SGLANG_CI_SMALL_KV_SIZE", "")',
        'os.getenv("SGLANG_CI_SMALL_KV_SIZE", default=None)',
        'get_int_env_var("SGLANG_CI_SMALL_KV_SIZE", 0)',
    ],
)
def test_an_environment_variable_read_by_its_name_is_given_by_env(tmp_path: Path, read: str) -> None:
    """The sample's CI override (``if small_kv_size := os.getenv(...)``), in each idiom the slicer knows: caps
    lists it; explain decides it from --env, else from the read's default (unset), and takes --env's name."""
    tree = tmp_path / "tree"
    shutil.copytree(sample_tree(), tree)
    mixin = tree / "sglang" / "srt" / "model_executor" / "model_runner_kv_cache_mixin.py"
    text = mixin.read_text()
    assert _SMALL_KV in text
    text = text.replace(_SMALL_KV, read).replace("import get_available", "import get_int_env_var, get_available")
    mixin.write_text(text)
    utils = tree / "sglang" / "srt" / "utils.py"
    utils.write_text(utils.read_text().replace("import torch\n", "import os\n\nimport torch\n", 1) + _HELPER)
    figures = ["--set", "avail_before_weights_gb=80", "--set", "weights_gb=20", "--set", "mem_fraction_static=0.8"]

    def override(*env: str) -> dict[str, Any]:
        code, data = _json(*figures, *env, tree=tree)
        assert code == 0, data
        [cap] = [c for c in data["caps"] if c["category"] == "override" and "SGLANG_CI_SMALL_KV_SIZE" in c["why"]]
        return cap

    unset = override()
    assert unset["status"] == "not reached" and "SGLANG_CI_SMALL_KV_SIZE unset (no --env)" in unset["why"], unset
    assert override("--env", "SGLANG_CI_SMALL_KV_SIZE=1000")["status"] == "applies"
    typo = _explain(*figures, "--env", "SGLANG_CI_SMALL_KV_SIZ=1000", tree=tree)
    assert typo.exit_code == 2 and "--env SGLANG_CI_SMALL_KV_SIZ: no environment variable" in typo.stderr
    assert "did you mean" not in typo.stderr or "SGLANG_CI_SMALL_KV_SIZE" in typo.stderr
