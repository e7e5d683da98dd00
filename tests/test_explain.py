"""explain: the budget formula evaluated with a log's figures; logs read in both formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.analyses.explain import bound_by, explain
from sgtrace.cli import cli
from sgtrace.model import BudgetSite, Cap
from sgtrace.run.startups import read_log
from sgtrace.sources import sample_tree
from tests.conftest import FIXTURES

LOG = FIXTURES / "logs" / "h20_8gpu.log"
FORMULA = BudgetSite(
    "r.py", 10, "rest_memory = available_gpu_memory - total_gpu_memory * (1 - self.mem_fraction_static)", ()
)


def test_log_figures_are_read_plain_and_journalctl() -> None:
    plain = read_log(LOG.read_text())
    journal = read_log("\n".join(line.split("] ", 1)[1] for line in LOG.read_text().splitlines()))
    assert plain == journal
    assert plain["avail_before_weights_gb"] == 94.04 and plain["avail_after_weights_gb"] == 21.71
    assert plain["weights_gb"] == 72.33 and plain["kv_gb"] == pytest.approx(10.42)
    assert plain["kv_tokens"] == 273152 and plain["mem_fraction_static"] == 0.88
    assert plain["max_total_tokens"] is None and plain["model_path"] == "some/model-72b"


def test_the_operators_10_43_gb() -> None:
    facts = read_log(LOG.read_text())
    result = explain([FORMULA], [], "mem_fraction_static", facts)
    assert result.kv_budget_gb == pytest.approx(10.4252, abs=1e-4)
    assert round(result.kv_budget_gb or 0, 2) == 10.43
    assert result.observed_kv_gb == pytest.approx(10.42)
    assert result.bytes_per_token == pytest.approx(10.42 * (1 << 30) / 273152)


def test_missing_input_is_named_never_guessed() -> None:
    facts = {"mem_fraction_static": 0.88, "avail_after_weights_gb": 21.71}
    result = explain([FORMULA], [], "mem_fraction_static", facts)
    assert result.kv_budget_gb is None
    assert list(result.missing) == ["total_gpu_memory"]
    assert "Load weight begin" in result.missing["total_gpu_memory"]


def test_caps_that_did_not_bind() -> None:
    cap = Cap("r.py", 20, "r.R", "R.f", "max_total_num_tokens", "min", ("max_total_tokens is not None",),
              ("server_args.max_total_tokens",), "x = min(x, max_total_tokens)")  # fmt: skip
    reduce = Cap("r.py", 22, "r.R", "R.f", "max_total_num_tokens", "reduce", ("self.pp_size > 1",), (), "x = t.item()")
    result = explain([FORMULA], [cap, reduce], "mem_fraction_static", read_log(LOG.read_text()))
    statuses = {c.category: (status, why) for c, status, why in result.caps}
    assert statuses["min"] == ("did not bind", "max_total_tokens unset")
    assert statuses["reduce"] == ("not reached", "self.pp_size > 1 is false")


def test_a_min_whose_other_operand_is_the_pools_tokens_bound_it() -> None:
    """``min(x, max_total_tokens)`` with --max-total-tokens 20480 and a pool of 20480 tokens (or a page below it)
    bound the pool; the same cap with another value, an unknown one, or a cap not applying did not."""
    cap = Cap("r.py", 780, "r.R", "R.f", "max_total_num_tokens", "min", ("max_total_tokens is not None",), (),
              "self.max_total_num_tokens = min(self.max_total_num_tokens, max_total_tokens)")  # fmt: skip
    found = [(cap, "applies", "max_total_tokens is not None")]
    assert bound_by(found, {"max_total_tokens": 20480.0}, 20480.0) == (
        ("r.py", 780, "max_total_tokens = 20480, the pool's 20480 tokens"),
    )
    assert bound_by(found, {"max_total_tokens": 20480.0}, 20416.0)  # rounded down to whole pages of 64
    assert bound_by(found, {"max_total_tokens": 40960.0}, 20480.0) == ()
    assert bound_by(found, {}, 20480.0) == ()
    assert bound_by([(cap, "unknown", "")], {"max_total_tokens": 20480.0}, 20480.0) == ()
    assert bound_by(found, {"max_total_tokens": 20480.0}, None) == ()


def test_explain_cli_on_the_sample_tree(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["explain", str(sample_tree()), "--log", str(LOG), "--format", "json", "--no-cache"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert round(payload["kv_budget_gb"], 2) == 10.43 and payload["observed_kv_gb"] == pytest.approx(10.42)
    text = runner.invoke(cli, ["explain", str(sample_tree()), "--set", "mem_fraction_static=0.88", "--no-cache"])
    assert text.exit_code == 2 and "missing input" in text.stderr
    usage = runner.invoke(cli, ["explain", str(sample_tree())])
    assert usage.exit_code == 2


def test_the_first_whole_chain_gives_the_prediction() -> None:
    resize = BudgetSite("z.py", 5, "headroom = pre_model_load_memory * (1 - mem_fraction_static)", ())
    later = BudgetSite("z.py", 9, "budget = free_gb - headroom", ())
    facts = read_log(LOG.read_text())
    result = explain([FORMULA, resize, later], [], "mem_fraction_static", facts)
    assert round(result.kv_budget_gb or 0, 2) == 10.43
    assert result.missing == {"free_gb": "--set free_gb=VALUE"}
    assert [s.value is None for s in result.steps] == [False, False, True]
