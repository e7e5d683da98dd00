"""The evaluator on real releases: inputs the release's code works out for a run, caps it decides.

The model's configs are the public config.json files' fields these releases read (tests/fixtures/models).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sgtrace.analyses.release_args import mentioning, read_args
from sgtrace.cli import cli
from sgtrace.discover import discover
from tests import releases
from tests.conftest import FIXTURES

pytestmark = pytest.mark.release

KIMI_JOURNAL = FIXTURES / "logs" / "kimi_three_startups.journal"
JOURNAL = FIXTURES / "logs" / "h20_three_startups.journal"
DEEPSEEK_V3 = FIXTURES / "models" / "deepseek_v3.json"
KIMI_K25 = FIXTURES / "models" / "kimi_k25.json"


def _explain(version: str, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        cli, ["explain", str(releases.release(version)), "--format", "json", *args], catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_the_newest_release_binds_free_memory_by_the_call_that_measures_it() -> None:
    """0.5.23 names the measurement free_gb (kv_pool_runtime) and available_gpu_memory (the configurator): both
    are the free memory the weights' end line shows, whatever the name. (free_gb is read by the resize after
    capture, which runs only with SGLANG_ENABLE_POST_CAPTURE_KV_SIZING set and, for a dense model, on a
    platform the log does not show: then its statements stay in the formula.)"""
    env = ("--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1")
    code, data, err = _explain(releases.NEWEST, "--log", str(JOURNAL), *env)
    assert "free_gb" not in data["missing"], data["missing"]
    assert data["origins"]["free_gb"].startswith("worked out: get_available_gpu_memory() at ")
    code, data, err = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL))
    # the multimodal reservation is decided by the model's config, which the log does not hold: its type is
    # assumed from the architecture's name, and said so
    assert code == 0 and data["inputs"]["mm_reservation_gb"] == 0, data["missing"]
    assert "model_type assumed 'deepseek_v3'" in data["origins"]["mm_reservation_gb"]
    # ... and the configurator's is_hybrid_swa, read from the model's config with a default
    assert data["assumed"] == [
        "model_type assumed 'deepseek_v3' from the architecture's name",
        "is_hybrid_swa assumed absent from the model's config.json",
    ]


@pytest.mark.parametrize("journal", [KIMI_JOURNAL, JOURNAL], ids=["mla", "dense"])
def test_the_newest_release_does_not_resize_the_pool_after_capture_unless_its_environment_asks(journal: Path) -> None:
    """0.5.23 can size the pool again after CUDA-graph capture (compute_post_capture_kv_resize, a formula of its
    own); the scheduler calls it when the target's pool is post_capture_active, which every pool class takes
    from what its builder passes (a keyword, a dict of keywords, a function's own parameter) down to the
    configurator's post_capture_kv_active: off unless SGLANG_ENABLE_POST_CAPTURE_KV_SIZING is set. Decided
    with that default as its reason, for an MLA model and a dense one: the resize's cap is not reached, its
    statements are not applied, and they ask for no input."""
    code, data, _ = _explain(releases.NEWEST, "--log", str(journal))
    assert code == 0 and data["missing"] == {}, data["missing"]
    resize = [c for c in data["caps"] if c["path"].endswith("kv_pool_runtime.py")]
    assert resize and all(c["status"] == "not reached" for c in resize), resize
    assert all("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING unset: the release's default" in c["why"] for c in resize)
    steps = [s for s in data["steps"] if s["path"].endswith("kv_pool_runtime.py")]
    assert steps and all(s["skipped"].startswith("not reached: ") and s["value"] is None for s in steps), steps
    # the pool is sized by the configurator's formula, before capture
    assert any(s["path"].endswith("kv_cache_configurator.py") and s["value"] is not None for s in data["steps"])


def test_the_model_config_decides_the_multimodal_reservation() -> None:
    code, data, _ = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL), "--model-config", str(DEEPSEEK_V3))
    # 10.43 GB less the draft's 1.62 GB of weights, which 0.5.23 loads before it sizes the pool
    assert code == 0 and round(data["kv_budget_gb"], 2) == 8.81, data["missing"]
    assert data["inputs"]["mm_reservation_gb"] == 0
    assert "model_type (config.json" in data["origins"]["mm_reservation_gb"]


def test_a_multimodal_architecture_reserves_the_registry_default_and_env_changes_it() -> None:
    """Kimi-K2.5's architecture is on 0.5.23's multimodal list: SGLANG_VLM_CACHE_SIZE_MB's default (100 MB)
    comes out of the pool; --env gives the server's own value."""
    code, data, _ = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL), "--model-config", str(KIMI_K25))
    assert code == 0 and data["inputs"]["mm_reservation_gb"] == pytest.approx(100 / 1024)
    assert round(data["kv_budget_gb"], 2) == round(8.81 - 100 / 1024, 2)
    assert "SGLANG_VLM_CACHE_SIZE_MB unset: the release's default" in data["origins"]["mm_reservation_gb"]
    code, data, _ = _explain(
        releases.NEWEST, "--log", str(KIMI_JOURNAL), "--model-config", str(KIMI_K25),
        "--env", "SGLANG_VLM_CACHE_SIZE_MB=0",
    )  # fmt: skip
    assert code == 0 and data["inputs"]["mm_reservation_gb"] == 0 and round(data["kv_budget_gb"], 2) == 8.81
    assert "SGLANG_VLM_CACHE_SIZE_MB=0 (--env)" in data["origins"]["mm_reservation_gb"]


def test_a_model_folder_as_huggingface_caches_it(tmp_path: Path) -> None:
    snapshot = tmp_path / "models--moonshotai--Kimi-K2.5" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_bytes(KIMI_K25.read_bytes())
    code, data, _ = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL), "--model-config", str(tmp_path))
    assert code == 0 and data["inputs"]["mm_reservation_gb"] == pytest.approx(100 / 1024)
    bad = CliRunner().invoke(cli, ["explain", str(releases.release(releases.NEWEST)), "--model-config",
                                   str(tmp_path / "nothing")])  # fmt: skip
    assert bad.exit_code == 2 and "no config.json there" in bad.stderr
    (tmp_path / "broken.json").write_text("[1, 2]")
    bad = CliRunner().invoke(cli, ["explain", str(releases.release(releases.NEWEST)), "--model-config",
                                   str(tmp_path / "broken.json")])  # fmt: skip
    assert bad.exit_code == 2 and "a config.json holds a JSON object" in bad.stderr
    bad = CliRunner().invoke(cli, ["explain", str(releases.release(releases.NEWEST)), "--env", "NOVALUE"])
    assert bad.exit_code == 2 and "--env expects NAME=VALUE" in bad.stderr


def test_the_model_config_decides_caps_on_0_5_9() -> None:
    """0.5.9 calls its sliding-window split only if is_hybrid_swa: a DeepSeek-V3 config.json decides it (the
    release looks the architecture up in its own list), and the reason says where."""
    code, data, _ = _explain(releases.MIDDLE, "--log", str(JOURNAL), "--model-config", str(DEEPSEEK_V3))
    assert code == 0
    split = [(cap["status"], cap["why"]) for cap in data["caps"] if "self.is_hybrid_swa" in cap["why"]]
    assert len(split) >= 5 and all(status == "not reached" for status, _ in split), split
    assert all("is_hybrid_swa_model() at sglang/srt/configs/model_config.py" in why for _, why in split), split
    # 0.5.9 decides it from the architecture alone: the log's weights line is enough
    code, data, _ = _explain(releases.MIDDLE, "--log", str(JOURNAL))
    split = [(cap["status"], cap["why"]) for cap in data["caps"] if "self.is_hybrid_swa" in cap["why"]]
    assert split and all(status == "not reached" for status, _ in split), split
    assert all("architectures (the log's weights line)" in why for _, why in split), split


def test_a_config_that_may_opt_in_is_assumed_not_to_without_the_config() -> None:
    """0.5.23 also counts a model hybrid when its config says is_hybrid_swa: from the log alone the key is assumed
    absent, and the reason says so; with the whole config.json it is decided."""
    at = "sglang/srt/mem_cache/kv_cache_configurator.py"
    files = discover(str(releases.release(releases.NEWEST))).files
    from sgtrace.analyses.evaluate import (
        ASSUMED,
        CONFIG_KEY,
        Code,
        Evaluator,
        Facts,
        Known,
        ModelConfig,
        Profile,
        Unknown,
        Words,
    )

    profile = Profile(Words(frozenset({"hf_config", "hf_text_config"})))
    args = read_args(mentioning(files, "mem_fraction_static"), "mem_fraction_static", files)
    code = Code(files)
    line = next(i for i, text in enumerate((releases.release(releases.NEWEST) / at).read_text().splitlines(), 1)
                if "mm_reservation_gb = mm_runtime_reservation_gb(" in text)  # fmt: skip
    logged = ModelConfig({"architectures": ["DeepseekV3ForCausalLM"]}, False, "the log")
    found = Evaluator(code, Facts(defaults=args.defaults, model=logged), profile).at(
        "self.model_config.is_hybrid_swa", at, line
    )
    assert isinstance(found, Known) and found.value is False, found
    assert f"is_hybrid_swa assumed absent from the model's config.json ({ASSUMED})" in found.why
    # a whole config without the architecture: the key is not assumed, it is named
    nameless = ModelConfig({}, False, "the log")
    unknown = Evaluator(code, Facts(defaults=args.defaults, model=nameless), profile).at(
        "self.model_config.is_hybrid_swa", at, line
    )
    assert isinstance(unknown, Unknown) and any(n.startswith(CONFIG_KEY) for n in unknown.needs), unknown
    whole = ModelConfig(json.loads(DEEPSEEK_V3.read_text()), True, "config.json")
    decided = Evaluator(code, Facts(defaults=args.defaults, model=whole), profile).at(
        "self.model_config.is_hybrid_swa", at, line
    )
    assert getattr(decided, "value", None) is False, decided


def test_argument_groups_are_all_read_on_the_newest_release() -> None:
    """0.5.23 declares its server arguments in one class per group (arg_groups/fields): every group's defaults."""
    files = discover(str(releases.release(releases.NEWEST))).files
    args = read_args(mentioning(files, "mem_fraction_static"), "mem_fraction_static", files)
    assert "enable_multimodal" in args.fields and args.defaults["enable_multimodal"] is None
    assert "mem_fraction_static" in args.fields and "tp_size" in args.fields
    # an older release's one ServerArgs class is read as before
    old = discover(str(releases.release(releases.MIDDLE))).files
    assert read_args(mentioning(old, "mem_fraction_static"), "mem_fraction_static", old).path.endswith("server_args.py")


def _journal(tmp_path: Path, shape: str) -> Path:
    from tests.journals import SHAPES, journal

    log = tmp_path / "journal"
    log.write_text("\n".join(journal(SHAPES[shape])) + "\n")
    return log


def test_the_order_of_start_up_is_read_from_each_release(tmp_path: Path) -> None:
    """0.4.6 to 0.5.9 size the target's pool right after its weights; 0.5.19 on load the draft first (the
    scheduler's draft worker, built through the algorithm's factory), and the draft's weights come out of
    the target's pool: the issue's EAGLE3 journal gives 10.43 GB on 0.5.9 and 10.43 - 0.95 on 0.5.23."""
    log = _journal(tmp_path, "eagle3 journal (a draft after the target's graphs)")
    for version in (releases.OLDEST, releases.MIDDLE):
        code, data, _ = _explain(version, "--log", str(log))
        assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43, (version, data["missing"])
        assert "avail_at_sizing_gb" not in data["inputs"]
    code, data, _ = _explain(releases.NEWEST, "--log", str(log), "--set", "mm_reservation_gb=0")
    assert code == 0 and round(data["kv_budget_gb"], 2) == 9.48, data["missing"]
    assert data["inputs"]["avail_at_sizing_gb"] == pytest.approx(21.71 - 0.95)
    origin = data["origins"]["avail_at_sizing_gb"]
    assert "this release loads the draft before it sizes the pool (sglang/srt/managers/scheduler.py:" in origin
    assert "the same start-up gets 9.48 GB on it" in " ".join(data["answer"].split())
    # a start-up without a draft: nothing is taken
    plain = tmp_path / "plain"
    plain.mkdir()
    code, data, _ = _explain(releases.NEWEST, "--log", str(_journal(plain, "capped single GPU")), "--set",
                             "mm_reservation_gb=0")  # fmt: skip
    assert "avail_at_sizing_gb" not in data["inputs"]


def test_the_order_of_start_up_does_not_rest_on_the_search_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the searches' bounds raised, 0.5.23's diffusion pipeline (sglang/multimodal_gen, whose path
    sorts first) is found to reach the sizing too; the order is still the server's (sglang/srt), whose draft
    loads before the pool is sized."""
    from sgtrace.graph import reach

    monkeypatch.setattr(reach, "MAX_SEARCHED", 150)
    monkeypatch.setattr(reach, "MAX_SIZING_SEARCHED", 2 * reach.MAX_SIZING_SEARCHED)
    log = _journal(tmp_path, "eagle3 journal (a draft after the target's graphs)")
    code, data, _ = _explain(releases.NEWEST, "--log", str(log), "--set", "mm_reservation_gb=0", "--cache-dir",
                             str(tmp_path / "cache"))  # fmt: skip
    assert code == 0 and round(data["kv_budget_gb"], 2) == 9.48, data["missing"]
    assert "sglang/srt/managers/scheduler.py:" in data["origins"]["avail_at_sizing_gb"]


def test_the_upgrade_verdict_names_the_change_of_order(tmp_path: Path) -> None:
    log = _journal(tmp_path, "eagle3 journal (a draft after the target's graphs)")
    root = releases.release
    result = CliRunner().invoke(cli, ["diff", str(root(releases.MIDDLE)), str(root(releases.NEWEST)), "--log",
                                      str(log), "--set", "mm_reservation_gb=0"])  # fmt: skip
    verdict = next(line for line in result.stderr.splitlines() if line.startswith("sgtrace: verdict:"))
    assert "10.43 GB on" in verdict and "9.48 GB on" in verdict and "-0.95 GB" in verdict, verdict
    assert "the draft's 0.95 GB of weights (line" in verdict and "now load before the pool is sized" in verdict


def test_a_formula_step_under_a_false_condition_is_not_applied() -> None:
    """0.5.2 subtracts a Mamba state only if self.is_hybrid_gdn: for a model that is not one (the log's
    architecture decides it) the step is not applied and the prediction is whole (it asked for
    max_mamba_cache_size before)."""
    code, data, _ = _explain(releases.EARLY_05, "--log", str(JOURNAL))
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43, data["missing"]
    assert "max_mamba_cache_size" not in data["missing"]
    skipped = [step for step in data["steps"] if step.get("skipped")]
    assert skipped and skipped[0]["skipped"].startswith("self.is_hybrid_gdn is false: decided by architectures")
    # the operator's word wins over the code's
    code, data, _ = _explain(releases.EARLY_05, "--log", str(JOURNAL), "--set", "is_hybrid_gdn=true")
    assert code == 2 and "max_mamba_cache_size" in data["missing"]


def test_before_launch_the_config_and_the_figures_predict_the_pool() -> None:
    """No log: the model's config, the fraction, the memory free before the weights and the weights (the
    draft's too, which 0.5.23 loads before it sizes the pool) give the issue's 9.48 GB; the what-if solves the
    fraction for a wanted pool on the same figures."""
    figures = ["--model-config", str(DEEPSEEK_V3), "--set", "mem_fraction_static=0.88", "--set",
               "avail_before_weights_gb=94.04", "--set", "weights_gb=72.33"]  # fmt: skip
    code, data, _ = _explain(releases.NEWEST, *figures, "--set", "draft_weights_gb=0.95")
    assert code == 0 and round(data["kv_budget_gb"], 2) == 9.48, data["missing"]
    assert (
        data["inputs"]["mm_reservation_gb"] == 0 and "--set draft_weights_gb" in data["origins"]["avail_at_sizing_gb"]
    )
    code, data, _ = _explain(releases.NEWEST, *figures)  # without a draft: nothing taken
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    code, data, _ = _explain(releases.MIDDLE, *figures, "--set", "draft_weights_gb=0.95")  # 0.5.9: the draft after
    assert code == 0 and round(data["kv_budget_gb"], 2) == 10.43
    code, data, _ = _explain(releases.NEWEST, *figures, "--set", "draft_weights_gb=0.95", "--want-kv-gb", "12")
    assert code == 0 and 0.88 < data["what_if"]["mem_fraction_static"] < 0.92


def test_before_launch_the_weights_are_estimated_from_the_models_weight_files(tmp_path: Path) -> None:
    """A model folder whose index gives its weight files' total size, and no figure for the weights: one GPU's
    are that size over tp_size x pp_size, said as an estimate; a figure the operator gives wins; without an
    index, the weight files' own sizes."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_bytes(DEEPSEEK_V3.read_bytes())
    total = round(72.33 * 8 * (1 << 30))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    figures = ["--model-config", str(folder), "--set", "mem_fraction_static=0.88", "--set",
               "avail_before_weights_gb=94.04", "--set", "tp_size=8"]  # fmt: skip
    code, data, _ = _explain(releases.MIDDLE, *figures)
    assert code == 0 and data["inputs"]["weights_gb"] == 72.33 and round(data["kv_budget_gb"], 2) == 10.43
    assert data["origins"]["weights_gb"].startswith(
        "estimated: 578.64 GB of weight files (model.safetensors.index.json's total_size) over 8 ranks"
    )
    assert "72.33 GB of weights (estimated from the model's weight files)" in " ".join(data["answer"].split())
    code, data, _ = _explain(releases.MIDDLE, *figures, "--set", "weights_gb=70")
    assert code == 0 and data["inputs"]["weights_gb"] == 70 and data["origins"]["weights_gb"] == "--set"
    (folder / "model.safetensors.index.json").unlink()
    for part in (1, 2):  # sparse files: their sizes without the disk
        with open(folder / f"model-0000{part}-of-00002.safetensors", "wb") as handle:
            handle.truncate(total // 2)
    code, data, _ = _explain(releases.MIDDLE, *figures, "--set", "pp_size=2")
    assert code == 0 and data["inputs"]["weights_gb"] == round(72.33 / 2, 2)
    assert data["origins"]["weights_gb"].startswith("estimated: 578.64 GB of weight files (2 weight files in ")
    assert "over 16 ranks" in data["origins"]["weights_gb"]


def test_the_what_if_before_launch_with_the_defaults_the_run_does_not_give() -> None:
    """No log and no config: the release's default reserve reads server arguments the run did not give (its
    heuristic compares one that is None until the server sets it): undecided and said, not a crash."""
    figures = ["--set", "mem_fraction_static=0.88", "--set", "avail_before_weights_gb=94.04", "--set",
               "weights_gb=72.33"]  # fmt: skip
    code, data, _ = _explain(releases.MIDDLE, *figures, "--want-kv-gb", "13")
    assert code == 0 and data["what_if"]["mem_fraction_static"] == pytest.approx((72.33 + 13) / 94.04, abs=0.001)
    bad = CliRunner().invoke(cli, ["explain", str(releases.release(releases.MIDDLE)), *figures, "--want-tokens", "1"])
    assert bad.exit_code == 2 and "--model-config" in bad.stderr


def test_the_predicted_pool_in_tokens_at_the_logs_own_bytes_per_token() -> None:
    code, data, _ = _explain(releases.MIDDLE, "--log", str(KIMI_JOURNAL))
    assert code == 0 and data["predicted_tokens"] == pytest.approx(159_277, rel=0.001)
    # the newest release without the model's config (its MLA dimensions): no cell, the log's own bytes per token
    code, data, _ = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL))
    assert data["cell"] is None
    assert data["predicted_tokens"] == pytest.approx(8.81 * (1 << 30) / 70_245, rel=0.002)


@pytest.mark.parametrize("version", [releases.OLDEST, releases.EARLY_05, releases.MIDDLE, releases.NEWEST])
def test_the_pool_in_tokens_by_the_releases_own_cell_size(version: str) -> None:
    """With the model's config.json (61 layers, kv_lora_rank 512, qk_rope_head_dim 64, bf16) the release's own
    cell-size code gives MLA's (512 + 64) x 61 x 2 = 70,272 bytes a token, and the predicted pool's tokens are
    the log's 159,277 within 0.1 % (the log's GB figures are rounded to 0.01); before launch the same figures
    give the same tokens. The newest release divides elsewhere than it budgets (the budget is returned, handed to
    a pool configurator the model picks, whose cell its constructor computes) and loads the draft first: its
    tokens are the smaller pool's, and the cell's for the pool of the log's own order are the log's."""
    code, data, _ = _explain(version, "--log", str(KIMI_JOURNAL), "--model-config", str(DEEPSEEK_V3))
    assert code == 0 and data["cell"] is not None, data["missing"]
    assert data["cell"]["bytes_per_token"] == (512 + 64) * 61 * 2
    assert re.search(r"//\s*(?:self\._)?cell_size", data["cell"]["code"]), data["cell"]["code"]
    if version == releases.NEWEST:  # the draft's 1.62 GB come out of the pool first (8.81 GB)
        assert data["predicted_tokens"] == data["cell"]["tokens"] == int(data["kv_budget_gb"] * (1 << 30)) // 70_272
        assert data["cell"]["as_run_tokens"] == pytest.approx(159_277, rel=0.001)
        assert "for the pool of the log's own order" in data["answer"]
    else:
        assert data["predicted_tokens"] == data["cell"]["tokens"] == pytest.approx(159_277, rel=0.001)
        assert data["cell"]["as_run_tokens"] is None
    assert any("torch_dtype (config.json" in why for why in data["cell"]["why"])
    assert "the release's cell size for this model" in data["answer"]
    figures = ["--model-config", str(DEEPSEEK_V3), "--set", "mem_fraction_static=0.88", "--set",
               "avail_before_weights_gb=94.04", "--set", "weights_gb=72.33", "--set", "tp_size=8"]  # fmt: skip
    code, before, _ = _explain(version, *figures)
    # no draft before launch: the pool of the log's own order
    as_run = data["cell"]["as_run_tokens"] or data["predicted_tokens"]
    assert code == 0 and before["predicted_tokens"] == as_run, before["missing"]
    # the release's default page: one token (0.4.6), or None until the server picks one (0.5.x): whole tokens
    assert before["cell"]["rounded"] in (None, before["cell"]["tokens"])
    # pages of 64 tokens: the release's own rounding, which applies to the run, gives whole pages
    code, paged, _ = _explain(version, *figures, "--set", "page_size=64")
    assert code == 0 and paged["cell"]["page_size"] == 64
    assert paged["cell"]["rounded"] == paged["cell"]["tokens"] // 64 * 64 < paged["cell"]["tokens"]
    # the what-if in tokens before launch, at the release's own bytes per token: (72.33 + 13.09) / 94.04
    code, wanted, _ = _explain(version, *figures, "--want-tokens", "200000")
    assert code == 0 and wanted["what_if"]["mem_fraction_static"] == pytest.approx(0.9083, abs=0.0005)
    # an fp8 KV cache: which fp8 type the release picks depends on the GPU's platform (is_hip(), is_cuda()),
    # which nothing before the run says: not guessed
    code, fp8, _ = _explain(version, *figures, "--set", "kv_cache_dtype=fp8_e4m3")
    assert code == 0 and fp8["cell"] is None and fp8["predicted_tokens"] is None


def test_an_env_name_the_release_does_not_declare_is_refused(tmp_path: Path) -> None:
    """A misspelt --env would change nothing and be answered with confidence: exit 2, one line, did-you-mean.
    A comparison leaves a name out of the release that lacks it and refuses it when neither declares it."""
    base = ["--log", str(KIMI_JOURNAL), "--model-config", str(KIMI_K25)]
    bad = CliRunner().invoke(cli, ["explain", str(releases.release(releases.NEWEST)), *base,
                                   "--env", "SGLANG_VLM_CACHE_SIZE=0"])  # fmt: skip
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "sgtrace: error: --env SGLANG_VLM_CACHE_SIZE: no environment variable this release's registry declares"
        " or its code reads (did you mean SGLANG_VLM_CACHE_SIZE_MB?)"
    ]
    root = releases.release
    diff = ["diff", str(root(releases.MIDDLE)), str(root(releases.NEWEST)), *base, "--set", "mm_reservation_gb=0"]
    bad = CliRunner().invoke(cli, [*diff, "--env", "SGLANG_VLM_CACHE_SIZE=0"])
    assert bad.exit_code == 2 and "--env SGLANG_VLM_CACHE_SIZE: neither release declares or reads it" in bad.stderr
    good = CliRunner().invoke(cli, [*diff, "--env", "SGLANG_VLM_CACHE_SIZE_MB=0"])
    assert good.exit_code in (0, 1) and "sgtrace: verdict:" in good.stderr, good.stderr


@pytest.mark.parametrize(
    ("shape", "sliding"),
    [
        ("capped single GPU", False),  # dense GQA (Qwen2)
        ("eagle3 journal (a draft after the target's graphs)", False),  # MLA (DeepSeek-V3)
        ("Mamba hybrid", False),  # Qwen3-Next
        ("sliding-window model, no draft", True),  # MiMo-V2-Flash
    ],
)
def test_the_architecture_decides_the_sliding_window_caps_per_family(tmp_path: Path, shape: str, sliding: bool) -> None:
    """0.5.9 splits the pool between full and sliding-window layers only for the architectures its
    is_hybrid_swa_model() lists: for the other families those caps are not reached, decided by the log's
    architecture; for a sliding-window model they are not ruled out (they wait for its layer pattern)."""
    code, data, _ = _explain(releases.MIDDLE, "--log", str(_journal(tmp_path, shape)))
    assert code == 0, data["missing"]
    split = [c for c in data["caps"] if "is_hybrid_swa" in (c["why"] or "") or "full_layers_num" in (c["why"] or "")]
    assert len(split) >= 5, [c["why"] for c in data["caps"]]
    if sliding:
        assert all(c["status"] == "unknown" and "full_layers_num" in c["why"] for c in split), split
    else:
        assert all(c["status"] == "not reached" for c in split), split
        assert all("decided by architectures (the log's weights line)" in c["why"] for c in split)


def test_the_caps_of_the_newest_release_are_decided_on_the_servers_way_in() -> None:
    """0.5.23's pool configurators are also reached from its diffusion pipeline's model loading; the LLM server's
    own way in (the scheduler's workers, the sizing the formula shows the run took) decides them where the log
    does, and the other program's conditions are not what an operator is asked for."""
    code, data, _ = _explain(releases.NEWEST, "--log", str(JOURNAL))
    assert code == 0
    unknown = [c for c in data["caps"] if c["status"] == "unknown"]
    assert not [c for c in data["caps"] if "multimodal_gen" in c["why"]], unknown
    # none of 27: the re-derivation after the token constraints is not reached, the constraints handing the count
    # back unchanged whatever it is (1 before); 3 before the post-capture sizing was decided from what the pools'
    # builders pass and the cap_tokens clamp by its callers; 5 before the MLX stub's runner was followed to where
    # it is built (under use_mlx(), false by the env registry's default), 15 before the configurator's own fields
    # were read from its constructions and the linear-attention registry from its registrations, 18 before the
    # pool configurators' ways in stopped at the diffusion pipeline's
    assert unknown == [], [c["why"][:120] for c in unknown]
    rederived = [c for c in data["caps"] if c["path"].endswith("pool_configurator.py") and "max_tokens !=" in c["why"]]
    assert rederived and all(
        c["status"] == "not reached" and "unchanged, whatever its value" in c["why"] for c in rederived
    )
    mlx = [c for c in data["caps"] if "/mlx/" in c["path"]]
    assert mlx and all(c["status"] == "not reached" and "use_mlx() is false" in c["why"] for c in mlx), mlx
    # the Mamba reserves: no linear-attention spec of the registry (its module-level registrations) is the model's
    mamba = [c for c in data["caps"] if c["category"] == "reserve" and "mambaish_config" in c["why"]]
    assert mamba and all(c["status"] == "not reached" for c in mamba), mamba
    assert all("not GigaChat35Config" in c["why"] or "decided by" in c["why"] for c in mamba), mamba
    # the scheduler's draft worker: none without --speculative-algorithm (decided by the enum's own code)
    reasons = " ".join(c["why"] for c in data["caps"])
    assert "draft_worker (--set draft_worker=VALUE)" not in reasons


@pytest.mark.parametrize(("version", "draft_first"), [("0.5.13.post1", False), ("0.5.14", True)])
def test_a_benchmarks_order_of_start_up_is_not_the_servers(tmp_path: Path, version: str, draft_first: bool) -> None:
    """0.5.14's sglang/bench_one_batch.py sizes the pool right after its one runner's weights (bench_one_batch.py:
    325-326); its server builds the draft's worker first (scheduler.py:861 and 865, then init_memory_pools at
    868; the early sizing at 864 is a frozen-KV MTP draft's only): the order is read from the program's way in,
    with the run's speculative algorithm, never from a benchmark's module. 0.5.13.post1 sizes the pool inside the
    target's runner (model_runner.py:784), before the draft's worker is built."""
    from tests.journals import SHAPES, journal

    log = tmp_path / "journal"
    log.write_text("\n".join(journal(SHAPES["eagle3 journal (a draft after the target's graphs)"])) + "\n")
    code, data, _ = _explain(version, "--log", str(log))
    assert code == 0 and round(data["kv_budget_gb"], 2) == (9.48 if draft_first else 10.43)
    origin = data["origins"].get("avail_at_sizing_gb", "")
    assert ("sglang/srt/managers/scheduler.py:" in origin) is draft_first and "bench" not in origin, origin
    assert data["order"]["draft_first"] is draft_first
    assert all(load.startswith("sglang/srt/") for load in data["order"]["loads_before"]), data["order"]


def test_a_journal_filtered_of_its_pool_lines_does_not_show_the_draft_first(tmp_path: Path) -> None:
    """The Kimi journal's last start-up (0.5.9: the draft loads after the target's pool) filtered to its weights,
    arguments and scheduler lines: nothing shows the pool between the two loads, so the draft's free memory (what
    the pool left) is not the memory 0.5.23 sizes its pool from; the answer is the whole journal's."""
    kept = ("Load weight end", "max_total_num_tokens=", "server_args=")
    filtered = tmp_path / "filtered.log"
    filtered.write_text("".join(line for line in KIMI_JOURNAL.open() if any(k in line for k in kept)))
    whole = _explain(releases.NEWEST, "--log", str(KIMI_JOURNAL))
    code, data, _ = _explain(releases.NEWEST, "--log", str(filtered))
    assert code == whole[0] == 0 and data["kv_budget_gb"] == pytest.approx(whole[1]["kv_budget_gb"])
    assert "free after the draft's weights" not in data["origins"].get("avail_at_sizing_gb", "")
