"""explain on real releases with the three-start-up journal: the issue's "done when", on 0.4.6, 0.5.9, 0.5.23."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sgtrace import api
from sgtrace.analyses.release_args import Reserve, default_reserve, mentioning, read_args
from sgtrace.cli import cli
from sgtrace.discover import discover
from sgtrace.index.findpass import RunOptions
from sgtrace.model import TraceQuery
from sgtrace.sources import Target
from tests import releases
from tests.conftest import FIXTURES
from tests.journals import SHAPES as JOURNAL_SHAPES
from tests.journals import journal

pytestmark = pytest.mark.release
JOURNAL = FIXTURES / "logs" / "h20_three_startups.journal"
#: The release whose draft loads before the pools and whose formula holds a multimodal reservation.
NEWEST_BUT_ONE = "0.5.19"
#: Functions only reached on paths this run does not take (hybrid SWA, mamba, pipeline, draft, disaggregation).
_OTHER_PATHS = ("hybrid_swa", "mamba", "disaggregation/")


def _explain(version: str, cache: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    root = releases.release(version)
    base = ["explain", str(root), "--log", str(JOURNAL), "--cache-dir", str(cache), *args]
    data = CliRunner().invoke(cli, [*base, "--format", "json"])
    text = CliRunner().invoke(cli, base)
    return data.exit_code, json.loads(data.stdout), text.stdout


def test_done_when_on_0_5_9(tmp_path: Path) -> None:
    code, data, text = _explain(releases.MIDDLE, tmp_path, "--want-kv-gb", "19.1")
    assert code == 0
    assert round(data["kv_budget_gb"], 2) == 10.43 and data["observed_kv_gb"] == pytest.approx(10.42)
    assert len(data["runs"]) == 3 and data["run"] == 3
    assert [r["complete"] for r in data["runs"]] == [True, False, True]
    assert "total_gpu_memory" in data["answer"]
    # the formula's arithmetic beside the reading operators start from (the issue's 10.43, not 19.10)
    assert (
        "0.88 x 94.04 = 82.76 GB for weights and KV together; minus 72.33 GB of weights = 10.43 GB" in (data["answer"])
    )
    assert "Not 0.88 x 21.71 = 19.10 GB" in data["answer"]
    assert text.index("Start-up 3 of 3") < text.index("start-ups in the log") < text.index("formula:")
    for cap in data["caps"]:
        if cap["status"] == "applies":
            assert not any(part in cap["path"] + cap["why"] for part in _OTHER_PATHS), cap
            assert "pp_size" not in cap["why"] and "is_draft_worker" not in cap["why"], cap
    assert {c["status"] for c in data["caps"]} <= {"applies", "did not bind", "not reached", "unknown"}
    what_if = data["what_if"]
    assert what_if["mem_fraction_static"] == pytest.approx(0.972, abs=5e-4)
    assert what_if["left_gb"] == pytest.approx(7.21 - (19.1 - 10.42) * (1 + 0.14 / 10.42), abs=0.01)
    assert what_if["warning"] and "server_args.py" in what_if["reserve_where"]
    items = [row["item"] for row in data["ledger"]]
    assert items[:3] == ["free before the weights", "weights", "KV pool"] and items[-1] == "left at the end"


def test_run_1_explains_the_older_start_up(tmp_path: Path) -> None:
    code, data, _ = _explain(releases.MIDDLE, tmp_path, "--run", "1")
    assert code == 0 and data["run"] == 1
    assert data["inputs"]["mem_fraction_static"] == 0.85
    assert round(data["kv_budget_gb"], 2) == 6.56 and data["observed_kv_gb"] == pytest.approx(6.56)


def _reserve(root: Path, facts: dict[str, Any], declared_in: str = "sglang/srt/server_args.py") -> Reserve:
    """The release's default reserve, from the class that declares the knob (found, not named)."""
    texts = mentioning(discover(str(root)).files, "mem_fraction_static")
    args = read_args(texts, "mem_fraction_static")
    assert args.path == declared_in and "mem_fraction_static" in args.fields
    return default_reserve(texts, args, "mem_fraction_static", {**args.defaults, **facts})


def test_the_reserve_is_read_from_each_release() -> None:
    facts = {"avail_before_weights_gb": 94.04, "tp_size": 8.0, "pp_size": 1.0, "chunked_prefill_size": 8192.0,
             "cuda_graph_max_bs": 512.0, "speculative_algorithm": "EAGLE3", "enable_dp_attention": False}  # fmt: skip
    reserve = _reserve(releases.release(releases.MIDDLE), facts)
    # 512 + 8192 * 1.5 + 512 * 2 + 8 / 8 * 1024, + 2048 for an EAGLE draft (MB), through a rounded fraction
    assert reserve.gb == pytest.approx((512 + 8192 * 1.5 + 1024 + 1024 + 2048) / 1024, abs=0.1)
    assert _reserve(releases.release(releases.OLDEST), facts).gb == pytest.approx(13.0)
    # the newest declares its knobs in msgspec namespaces; its heuristic needs a post-capture plan
    unknown = _reserve(releases.release(releases.NEWEST), facts, "sglang/srt/arg_groups/fields/schedule.py")
    assert unknown.gb is None and unknown.missing


@pytest.mark.parametrize("version", [releases.OLDEST, releases.NEWEST])
def test_other_releases_explain_the_same_start_up(tmp_path: Path, version: str) -> None:
    code, data, _ = _explain(version, tmp_path)
    assert data["run"] == 3 and len(data["runs"]) == 3 and data["answer"].startswith("Start-up 3 of 3")
    if version == releases.OLDEST:
        assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    else:
        # the newest has a multimodal reservation its model config decides: from the log's architecture alone,
        # with the model type its name gives, said as assumed; less the draft's 0.93 GB, loaded before sizing
        assert code == 0 and round(data["kv_budget_gb"], 2) == 9.50, data["missing"]
        assert data["assumed"] == [  # Qwen2ForCausalLM
            "model_type assumed 'qwen2' from the architecture's name",
            "is_hybrid_swa assumed absent from the model's config.json",
        ]
        assert "2 assumptions about the model that the log does not show" in data["answer"]
        # a whole config.json that lacks what decides it: named, not guessed
        bare = tmp_path / "config.json"
        bare.write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
        code, data, _ = _explain(version, tmp_path, "--model-config", str(bare))
        assert code == 2 and "mm_reservation_gb" in data["missing"] and not data["assumed"]
        assert "--model-config" in data["missing"]["mm_reservation_gb"]
        # ... with where its function sets it, read here from the release's own file
        step = next(s for s in data["steps"] if "mm_reservation_gb" in s["missing"])
        lines = (releases.release(version) / step["path"]).read_text().splitlines()[: step["line"] - 1]
        assigned = max(i for i, line in enumerate(lines, 1) if line.strip().startswith("mm_reservation_gb ="))
        assert f"(set at {step['path']}:{assigned}: mm_reservation_gb = " in data["missing"]["mm_reservation_gb"]
        again, fixed, _ = _explain(version, tmp_path, "--set", "mm_reservation_gb=0")
        # the same start-up, once it is supplied: less the draft's 0.93 GB, loaded before the pool is sized
        assert again == 0 and round(fixed["kv_budget_gb"], 2) == 9.50


def _statuses(version: str, cache: Path, log: bytes | None, settings: dict[str, object]) -> dict[tuple[str, str], Any]:
    """(function, category) -> the (status, why) of each cap, through the API (the JSON does not name functions)."""
    target = Target(str(releases.release(version)), version)
    options = RunOptions(jobs=1, cache_dir=cache)
    _, result, _ = api.explain(
        TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options, log, settings
    )
    found: dict[tuple[str, str], Any] = {}
    for cap, status, why in result.caps:
        found.setdefault((cap.function or "", cap.category), []).append((status, why))
    return found


def test_conditions_travel_with_calls_on_0_5_9(tmp_path: Path) -> None:
    caps = _statuses(releases.MIDDLE, tmp_path, JOURNAL.read_bytes(), {})
    for queue in ("DecodePreallocQueue.__init__", "PrefillBootstrapQueue.__init__"):  # built only in their mode
        ((status, why),) = caps[(queue, "min")]
        assert status == "not reached" and "self.disaggregation_mode == DisaggregationMode." in why, why
        assert "Scheduler.init_disaggregation" in why
    ((status, why),) = caps[("ModelRunnerKVCacheMixin.init_memory_pool", "reduce")]
    assert status == "not reached" and "self.pp_size > 1 is false" in why
    hybrid = caps[("ModelRunnerKVCacheMixin.set_num_tokens_hybrid_swa", "split")]
    mamba = caps[("ModelRunnerKVCacheMixin.handle_max_mamba_cache", "reserve")]
    # called only if self.is_hybrid_swa: 0.5.9 decides it from the log's architecture
    assert hybrid and all(status == "not reached" for status, _ in hybrid), hybrid
    assert all("decided by architectures (the log's weights line)" in why for _, why in hybrid), hybrid
    for status, why in mamba:  # only if self.mambaish_config is not None: the model's type decides it, assumed
        assert status == "not reached" and "model_type assumed 'qwen2' from the architecture's name" in why, why
    assert caps[("ModelRunnerKVCacheMixin.init_memory_pool", "base")] == [("applies", "no condition on this write")]
    rounds = caps[("ModelRunnerKVCacheMixin.init_memory_pool", "round")]
    assert rounds == [("applies", "no condition on this write")]  # the page-size round
    # the operator supplies what the code cannot tell: a model without sliding windows or mamba layers
    told = _statuses(releases.MIDDLE, tmp_path, JOURNAL.read_bytes(), {"is_hybrid_swa": False, "mambaish_config": None})
    for function in (
        "ModelRunnerKVCacheMixin.set_num_tokens_hybrid_swa",
        "ModelRunnerKVCacheMixin.handle_max_mamba_cache",
    ):
        assert {s for (f, _), found in told.items() if f == function for s, _ in found} == {"not reached"}


def test_the_disaggregation_default_is_read_from_the_release(tmp_path: Path) -> None:
    """Without a log, disaggregation_mode is the release's own ServerArgs default ("null" in 0.5.9), read statically."""
    root = releases.release(releases.MIDDLE)
    assert (
        read_args(mentioning(discover(str(root)).files, "mem_fraction_static"), "mem_fraction_static").defaults[
            "disaggregation_mode"
        ]
        == "null"
    )
    caps = _statuses(releases.MIDDLE, tmp_path, None, {"mem_fraction_static": 0.88})
    assert [s for s, _ in caps[("DecodePreallocQueue.__init__", "min")]] == ["not reached"]
    decode = _statuses(releases.MIDDLE, tmp_path, None, {"disaggregation_mode": "decode"})
    ((status, why),) = decode[("DecodePreallocQueue.__init__", "min")]  # built now; its own guard is the model's
    assert status == "unknown" and why.startswith("needs is_hybrid_swa (--set is_hybrid_swa=VALUE)"), why


KIMI = FIXTURES / "logs" / "kimi_three_startups.journal"
_PREFIX = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.-]+\[\d+\]: ")


def _grepped(tmp_path: Path, pattern: str) -> Path:
    """The kimi journal as ``journalctl -o cat | grep`` leaves it."""
    lines = [_PREFIX.sub("", line) for line in KIMI.read_text().splitlines()]
    path = tmp_path / "grepped.log"
    path.write_text("\n".join(line for line in lines if re.search(pattern, line)) + "\n")
    return path


def _run(version: str, cache: Path, *args: str) -> tuple[int, dict[str, Any], str, str]:
    base = ["explain", str(releases.release(version)), "--cache-dir", str(cache), *args]
    data = CliRunner().invoke(cli, [*base, "--format", "json"])
    text = CliRunner().invoke(cli, base)
    return data.exit_code, json.loads(data.stdout), text.stdout, text.stderr


def test_issue_17_done_when_the_operators_grep_on_0_5_9(tmp_path: Path) -> None:
    """Only the Load weight end and max_total_num_tokens= lines of three start-ups: the latest alone."""
    log = _grepped(tmp_path, r"(?i)max_total_num_tokens|Load weight end")
    code, data, text, err = _run(releases.MIDDLE, tmp_path, "--log", str(log))
    assert code == 2 and data["run"] == 3 and len(data["runs"]) == 3
    run = data["runs"][2]
    assert run["target"]["weights_gb"]["value"] == 72.33 and run["target"]["avail_before_weights_gb"]["value"] == 94.04
    assert run["max_total_num_tokens"]["value"] == 159277 and run["left"]["value"] == 7.43 and run["doubts"] == []
    assert run["model_types"] == ["DeepseekV3ForCausalLM", "DeepseekV3ForCausalLMNextN"]
    assert list(data["missing"]) == ["mem_fraction_static"] and "--set mem_fraction_static=VALUE" in err
    assert "Its lines show 72.33 GB of weights, 94.04 GB free before them, 159277 tokens." in data["answer"]
    assert "7.43 GB is left unused at the end" in data["answer"]
    code, data, text, _ = _run(releases.MIDDLE, tmp_path, "--log", str(log), "--set", "mem_fraction_static=0.88")
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43 and data["run"] == 3
    assert "minus 72.33 GB of weights = 10.43 GB. Not 0.88 x 21.71 = 19.10 GB" in " ".join(text.split())


@pytest.mark.parametrize("version", [releases.OLDEST, releases.MIDDLE, releases.NEWEST])
def test_issue_17_done_when_the_memory_lines_imply_the_fraction(tmp_path: Path, version: str) -> None:
    log = _grepped(tmp_path, r"^(?!.*server_args)")
    extra = ("--set", "mm_reservation_gb=0") if version == releases.NEWEST else ()  # its reservation is not logged
    code, data, _, _ = _run(version, tmp_path, "--log", str(log), *extra)
    assert code == 0 and data["implied"] == {"mem_fraction_static": 0.88}, (data["missing"], data["implied"])
    # implied as the log's run sized its pool; predicted as this release sizes it (the newest: the draft's 1.62 GB
    # of weights first)
    assert round(data["kv_budget_gb"], 2) == (8.81 if version == releases.NEWEST else 10.43)
    assert data["observed_kv_gb"] == 10.42


def test_issue_17_done_when_no_log_on_0_5_9(tmp_path: Path) -> None:
    figures = [
        "--set",
        "mem_fraction_static=0.88",
        "--set",
        "weights_gb=72.33",
        "--set",
        "avail_after_weights_gb=21.71",
    ]
    code, data, text, _ = _run(releases.MIDDLE, tmp_path, *figures)
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43 and data["runs"] == []
    assert "0.88 x 94.04 = 82.76 GB for weights and KV together; minus 72.33 GB of weights = 10.43 GB" in data["answer"]
    assert "Not 0.88 x 21.71 = 19.10 GB" in data["answer"]


def test_a_launch_command_is_read_with_0_5_9s_own_options(tmp_path: Path) -> None:
    log = _grepped(tmp_path, r"(?i)max_total_num_tokens|Load weight end")
    ps = tmp_path / "ps.txt"
    ps.write_text("root 33907 ... /opt/venv/bin/python3 -m sglang.launch_server --model-path /models/Kimi-K2 "
                  "--tp 8 --trust-remote-code --mem-fraction-static 0.88 --speculative-algorithm EAGLE\n")  # fmt: skip
    code, data, _, err = _run(releases.MIDDLE, tmp_path, "--log", str(log), "--command", str(ps))
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43, err
    assert data["origins"]["mem_fraction_static"] == "--command" and "note" not in err


def test_a_default_journal_with_an_eagle3_draft_is_three_start_ups_the_latest_explained(tmp_path: Path) -> None:
    """journalctl -u's default short format (no year) before SGLang's own stamps, three start-ups with an
    EAGLE3 draft (issue 27): three start-ups, the latest explained with every figure."""
    log = tmp_path / "journal"
    log.write_text("\n".join(journal(JOURNAL_SHAPES["eagle3 journal (a draft after the target's graphs)"])) + "\n")
    root = releases.release(releases.MIDDLE)
    base = ["explain", str(root), "--log", str(log), "--cache-dir", str(tmp_path / "cache")]
    data = json.loads(CliRunner().invoke(cli, [*base, "--format", "json"]).stdout)
    assert len(data["runs"]) == 3 and data["run"] == 3
    assert round(data["kv_budget_gb"], 2) == 10.43 and data["observed_kv_gb"] == pytest.approx(10.42)
    assert "0.88 x 94.04 = 82.76 GB" in data["answer"]


def test_a_headroom_is_never_presented_as_the_pool(tmp_path: Path) -> None:
    """0.5.19 sizes the pool from the memory free after the weights less a slack and a multimodal reservation;
    a later path scales the budget alone (a headroom). With four pasted lines the prediction is the pool's
    chain (issue 27), never the headroom."""
    log = tmp_path / "four.log"
    log.write_text(
        "[2026-03-01 10:00:00 TP0] Load weight begin. avail mem=41.29 GB\n"
        "[2026-03-01 10:00:40 TP0] Load weight end. elapsed=40.00 s, type=LlamaForCausalLM, dtype=torch.bfloat16, "
        "avail mem=25.12 GB, mem usage=16.17 GB.\n"
        "[2026-03-01 10:00:41 TP0] KV Cache is allocated. #tokens: 122880, K size: 8.30 GB, V size: 8.30 GB\n"
        "[2026-03-01 10:00:41 TP0] Memory pool end. avail mem=7.60 GB\n"
    )
    root = releases.release(NEWEST_BUT_ONE)
    result = CliRunner().invoke(
        cli,
        [
            "explain",
            str(root),
            "--log",
            str(log),
            "--set",
            "mem_fraction_static=0.8",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    # the reservation is worked out from the release's code (a LlamaForCausalLM is not on its multimodal list):
    # the pool is the chain that subtracts the slack from the free memory, never the headroom (8.26)
    assert result.exit_code == 0, result.stderr
    assert "gives a KV pool of 16.86 GB per GPU" in " ".join(result.stdout.split())
    assert "8.26 GB per GPU" not in result.stdout and "GB more" not in result.stdout


def test_a_real_pipeline_stage_fragment_keeps_the_pipelines_min(tmp_path: Path) -> None:
    """A gpustack deployment's paste (Qwen3.5, PP0's lines only, no server arguments): its rank names a pipeline
    stage, which SGLang prints only with pp_size > 1, so the pipeline's all-reduce MIN of the pool applies on 0.5.9
    (it was said not reached, by the release's default pp_size)."""
    log = FIXTURES / "logs" / "real" / "084-qwen35-gpustack-pp-distributed-pp0-pool-to-capture-fragment.log"
    root = releases.release(releases.MIDDLE)
    args = ["explain", str(root), "--log", str(log), "--cache-dir", str(tmp_path), "--format", "json"]
    out = CliRunner().invoke(cli, args)
    data = json.loads(out.stdout)
    reduced = [cap for cap in data["caps"] if "pp_size > 1" in cap["why"]]
    assert reduced and {cap["status"] for cap in reduced} == {"applies"}, reduced
    assert data["origins"]["pp_size"] == "the log's rank prefixes: a PP rank, at least 2 pipeline stages"


def test_a_user_limit_held_in_a_local_is_named_as_what_bound_the_pool(tmp_path: Path) -> None:
    """0.5.10 takes --max-total-tokens into a local (``user_limit = self.server_args.max_total_tokens``) before
    ``min(profiled_tokens, user_limit)``: a real docs run (LoRA, 20480 tokens asked, a pool of 20480) was told
    'a cap bound; it can be ...' where the older releases named the min; the local is worked out by the code."""
    log = tmp_path / "lora.log"
    lines = [
        "server_args=ServerArgs(model_path='m', mem_fraction_static=0.91, max_total_tokens=20480, page_size=1)",
        "Load weight begin. avail mem=134.70 GB",
        "Load weight end. elapsed=2.60 s, type=LlamaForCausalLM, avail mem=118.91 GB, mem usage=15.79 GB.",
        "KV Cache is allocated. #tokens: 20480, K size: 1.25 GB, V size: 1.25 GB",
        "Memory pool end. avail mem=98.02 GB",
        "max_total_num_tokens=20480, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=128,"
        " context_len=131072, available_gpu_mem=96.77 GB",
        "The server is fired up and ready to roll!",
    ]
    log.write_text("\n".join(f"[2026-04-05 07:38:{i:02d}] {line}" for i, line in enumerate(lines)) + "\n")
    root = releases.release("0.5.10")
    out = CliRunner().invoke(cli, ["explain", str(root), "--log", str(log), "--cache-dir", str(tmp_path / "c")])
    said = " ".join(out.output.split())
    assert "(min) bound it (user_limit = 20480, the pool's 20480 tokens)" in said, said[:1500]


@pytest.mark.parametrize("mamba_line", [True, False])
def test_a_hybrid_models_budget_says_what_it_pays_for(tmp_path: Path, mamba_line: bool) -> None:
    """Corpus log 091 (Qwen3.6 hybrid GDN, 0.5.11): the budget pays for the Mamba state as well as the KV pool
    (0.5.11's handle_max_mamba_cache takes it out first, read from the code). With the log's Mamba line the
    answer names it beside the KV pool; without it (a log grepped for 'KV Cache'), the answer says the log has no
    line of it and weighs it first, where it called the whole budget 'a KV pool' and put the 5.84 GB down to a
    fraction that is not the run's and to the Mamba reserve as 'a cap whose value the log does not give'."""
    source = (
        (FIXTURES / "logs" / "real" / "091-qwen36-27b-awq-2x-r9700-tp2-mamba-ready-whole.log").read_text().splitlines()
    )
    log = tmp_path / "091.log"
    log.write_text("\n".join(line for line in source if mamba_line or "Mamba Cache" not in line) + "\n")
    base = ["explain", str(releases.release("0.5.11")), "--log", str(log), "--cache-dir", str(tmp_path / "c")]
    data = json.loads(CliRunner().invoke(cli, [*base, "--format", "json"]).stdout)
    said = " ".join(data["answer"].split())
    assert [(s["what"], s["function"], s["status"], s["pool"]) for s in data["shares"]] == [
        ("mamba_state_memory", "ModelRunnerKVCacheMixin.handle_max_mamba_cache", "applies", "mamba")
    ]
    assert "gives a KV pool" not in said and "gives 12.28 GB per GPU for the KV pool and for mamba_state_memory" in said
    if mamba_line:
        assert data["shares"][0]["gb"] == 5.88 and data["causes"] == []
        assert "the log's 'Mamba Cache is allocated' line shows 5.88 GB" in said
        return
    assert data["shares"][0]["shown"] is None and data["observed_kv_gb"] == 6.44
    assert (
        "(the log has no 'Mamba Cache is allocated' line)" in said
        and "422310 tokens, and no line of mamba_state_memory" in said
    )
    first = data["causes"][0]
    assert (first["why"], first["number"], first["supported"]) == ("share", 5.84, True)
    assert not any(c["why"] == "cap" for c in data["causes"]), data["causes"]
    assert data["predicted_tokens"] is None  # the log's bytes per token are the KV pool's alone
