"""Start-up logs people pasted in public, read as an expert reads them.

``tests/fixtures/logs/real/`` holds the machine-printed lines of each paste (no prose of the threads) and
``manifest.json`` where each came from, the release that printed it when the thread says, and the
facts read off its lines by hand: the start-ups, how each ended, the fraction where the log gives it,
the free memory before and after the weights, the weights, every pool, the tokens, the draft's
weights, and the budget formula's value where every input of it is in the lines. The run side is
checked on every log; the explanation against the release each came from where the thread names it. An entry
whose shape sgtrace does not read right yet says so in ``pending`` (the issue, and what is read wrong); its run-side
test is a strict xfail, and the facts stay as read by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.run.stages import Ended
from sgtrace.run.startups import StartUp, facts, split
from tests import releases
from tests.conftest import FIXTURES

REAL = FIXTURES / "logs" / "real"
MANIFEST: list[dict[str, Any]] = json.loads((REAL / "manifest.json").read_text())
#: The hand figures and sgtrace's agree within the log's own rounding (two decimals, a sum of two).
CLOSE_GB = 0.02


def test_the_corpus_is_large_and_sourced() -> None:
    assert len(MANIFEST) >= 30
    assert {entry["file"] for entry in MANIFEST} == {p.name for p in REAL.glob("*.log")}
    for entry in MANIFEST:
        assert entry["source"].startswith("https://"), entry["file"]
        assert entry["startups"], entry["file"]
        assert entry.get("pending", "issue 54: ").startswith("issue "), entry["file"]


def _read(entry: dict[str, Any]) -> list[StartUp]:
    return split((REAL / entry["file"]).read_text(encoding="utf-8", errors="replace"))


def _close(found: Any, want: float | None, what: str) -> None:
    if want is None:
        return
    assert found is not None, f"{what}: none read, {want} by hand"
    assert abs(found.value - want) <= CLOSE_GB, f"{what}: {found.value}, {want} by hand"


def _case(entry: dict[str, Any]) -> Any:
    """The entry as a test case; one whose shape sgtrace does not read right yet (``pending``) is a strict xfail,
    so the test fails the day the reading is fixed and the mark must go."""
    marks = [pytest.mark.xfail(strict=True, reason=entry["pending"])] if entry.get("pending") else []
    return pytest.param(entry, id=entry["file"][:3], marks=marks)


@pytest.mark.parametrize("entry", [_case(e) for e in MANIFEST])
def test_a_real_log_is_read_as_an_expert_reads_it(entry: dict[str, Any]) -> None:
    runs = _read(entry)
    assert len(runs) == len(entry["startups"]), [r.begun_by for r in runs]
    for run, want in zip(runs, entry["startups"], strict=True):
        ended = want["ended"]
        assert run.end.died == (ended == "died"), (run.ended, ended)
        assert (run.end is Ended.READY) == (ended == "ready"), (run.ended, ended)
        target = run.target
        _close(target.get("weights_gb"), want.get("weights_gb"), "weights")
        _close(target.get("avail_after_weights_gb"), want.get("free_after_weights_gb"), "free after the weights")
        if want.get("free_before_weights_gb") is not None:
            _close(target.get("avail_before_weights_gb"), want["free_before_weights_gb"], "free before the weights")
        _close(target.get("avail_after_pool_gb"), want.get("free_after_pool_gb"), "free after the pools")
        pools = want.get("kv_pools") or []
        swa = [p["gb"] for p in pools if p["kind"] == "swa_total"]
        kv = swa[0] if swa else sum(p["gb"] for p in pools if p["kind"] == "kv") if pools else None
        mamba = sum(p["gb"] for p in pools if p["kind"] == "mamba") or None
        _close(target.get("kv_gb"), kv if pools and any(p["kind"] != "mamba" for p in pools) else None, "KV pools")
        _close(target.get("mamba_gb"), mamba, "Mamba state")
        tokens = next((p.get("tokens") for p in pools if p["kind"] == "kv" and p.get("tokens")), None)
        if tokens is not None:
            assert target["kv_tokens"].value == tokens
        _close(run.draft.get("weights_gb"), want.get("draft_weights_gb"), "draft weights")
        if want.get("fraction_in_log"):
            assert facts(run)["mem_fraction_static"] == pytest.approx(want["fraction"], abs=1e-4)
        if want.get("max_total_num_tokens") is not None:
            assert run.max_total_num_tokens is not None
            assert run.max_total_num_tokens.value == want["max_total_num_tokens"]


#: The releases the logs' threads name.
KNOWN = sorted({entry["release"] for entry in MANIFEST if entry["release"]})
#: Every release a log is explained by: the one its thread names, else the suite's release current when its
#: lines were stamped (``run_against``, the manifest says why).
EXPLAINED_BY = sorted({entry["release"] or entry["run_against"] for entry in MANIFEST})


@pytest.mark.release
@pytest.mark.parametrize("version", EXPLAINED_BY)
def test_each_log_is_explained_by_its_release(version: str, tmp_path: Path) -> None:
    """The prediction where the lines hold every input (the hand figure, within the log's rounding), and
    none where they do not: exit 2 with the missing inputs named, never a pool made up; no crash."""
    root = releases.release(version)
    for entry in (e for e in MANIFEST if (e["release"] or e["run_against"]) == version):
        want = entry["startups"][-1]
        log = str(REAL / entry["file"])
        result = CliRunner().invoke(
            cli, ["explain", str(root), "--log", log, "--format", "json", "--cache-dir", str(tmp_path)]
        )
        assert result.exit_code in (0, 2), (entry["file"], result.output[-2000:])
        if result.exit_code == 2:
            assert want.get("formula_gb") is None, (entry["file"], result.stderr)
            said = [line for line in result.stderr.splitlines() if not line.startswith("sgtrace: note:")]
            assert said and said[0].startswith(("sgtrace: missing input", "sgtrace: error: no SGLang start-up")), (
                entry["file"], result.stderr,
            )  # fmt: skip
            continue
        data = json.loads(result.stdout)
        if want.get("formula_gb") is not None:
            assert abs(data["kv_budget_gb"] - want["formula_gb"]) <= CLOSE_GB, (entry["file"], data["kv_budget_gb"])
