"""caps: classification on graphs built by hand, on the sample tree, and through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from sgtrace.analyses.caps import CATEGORIES, budget_sites, check
from sgtrace.api import caps
from sgtrace.cli import cli
from sgtrace.graph.points import Point
from sgtrace.index.findpass import RunOptions
from sgtrace.model import TraceQuery
from sgtrace.sources import Target, sample_tree

SAMPLE = sample_tree()
POOL = "max_total_num_tokens"


def _graph() -> tuple[nx.DiGraph, dict[str, Point]]:
    """knob -> rest (sub) -> return -> base write -> min write -> round write -> scheduler copy."""
    p = {
        "knob": Point("knob", "server_args.mem_fraction_static", "", 0),
        "avail": Point("call", "get_available_gpu_memory(...)", "r.py", 2),
        "read": Point("read", "self.mem_fraction_static", "r.py", 3),
        "rest": Point("local", "R.profile.rest_memory", "r.py", 3),
        "mamba": Point("local", "R.profile.mamba_bytes", "r.py", 4),
        "reserved": Point("local", "R.profile.rest_memory", "r.py", 5),
        "ret": Point("return", "R.profile()", "r.py", 6),
        "base": Point("write", f"R.{POOL}", "r.py", 10),
        "limit": Point("knob", "server_args.max_total_tokens", "", 0),
        "min": Point("write", f"R.{POOL}", "r.py", 12),
        "page": Point("knob", "server_args.page_size", "", 0),
        "round": Point("write", f"R.{POOL}", "r.py", 13),
        "draft": Point("knob", "server_args.draft_runner_cache_size", "", 0),
        "override": Point("write", f"R.{POOL}", "r.py", 15),
        "copy": Point("write", f"S.{POOL}", "s.py", 20),
        "stats": Point("field", f"Stats.{POOL}", "t.py", 30),
    }
    g = nx.DiGraph(attribute=POOL)
    edges = [
        ("knob", "read", "copy"), ("read", "rest", "sub"), ("avail", "rest", "sub"),
        ("rest", "reserved", "sub"), ("mamba", "reserved", "sub"), ("reserved", "ret", "floordiv"),
        ("ret", "base", "return"), ("base", "min", "min"), ("limit", "min", "min"),
        ("min", "round", "mul"), ("page", "round", "mul"), ("round", "copy", "copy"),
        ("draft", "override", "copy"), ("override", "copy", "copy"), ("copy", "stats", "field"),
    ]  # fmt: skip
    for source, target, op in edges:
        g.add_edge(p[source], p[target], op=op, approximate=False)
    for point in g.nodes:
        g.nodes[point].update(kind=point.kind, label=point.label, path=point.path, line=point.line)
    codes = {
        "base": "self.max_total_num_tokens = self.profile(total)",
        "min": "self.max_total_num_tokens = min(self.max_total_num_tokens, limit)",
        "round": "self.max_total_num_tokens = self.max_total_num_tokens // page_size * page_size",
        "override": "self.max_total_num_tokens = self.server_args.draft_runner_cache_size",
        "reserved": "rest_memory = rest_memory - mamba_bytes",
    }
    for name, code in codes.items():
        g.nodes[p[name]].update(code=code, owner="r.R", function="R.init")
    g.nodes[p["override"]]["guard"] = ["self.is_draft_worker"]
    for name in ("base", "min", "round", "override", "copy", "stats"):
        g.nodes[p[name]]["seed"] = "write"
    return g, p


def test_budget_site_is_where_the_budget_meets_another_quantity() -> None:
    g, p = _graph()
    assert budget_sites(g, "mem_fraction_static") == [p["rest"]]


def test_categories_on_a_graph_built_by_hand() -> None:
    g, _ = _graph()
    sites, found = check(g, "mem_fraction_static")
    assert [(s.path, s.line, s.knobs) for s in sites] == [
        ("r.py", 3, ("server_args.mem_fraction_static",)),
        ("r.py", 5, ()),
    ]
    assert [(c.line, c.category) for c in found] == [
        (5, "reserve"), (10, "base"), (12, "min"), (13, "round"), (15, "override"),
    ]  # fmt: skip
    by_line = {c.line: c for c in found}
    assert by_line[12].knobs == ("server_args.max_total_tokens",)
    assert by_line[13].knobs == ("server_args.page_size",)
    assert by_line[15].guard == ("self.is_draft_worker",)


def test_statistics_fed_by_the_pool_are_not_caps() -> None:
    g, p = _graph()
    stats_local = Point("local", "Stats.compute.num_used", "t.py", 29)
    g.add_edge(p["copy"], stats_local, op="sub")
    g.add_edge(stats_local, p["stats"], op="field")
    _, found = check(g, "mem_fraction_static")
    assert all(c.path != "t.py" for c in found)


def _sample_line(relative: str, text: str) -> int:
    lines = (SAMPLE / relative).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_sample_tree_caps_and_categories() -> None:
    result = CliRunner().invoke(cli, ["caps", str(SAMPLE), "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload)[:5] == ["attribute", "budget", "root", "budget_sites", "caps"]
    mixin = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
    got = {(c["line"], c["category"]) for c in payload["caps"] if c["path"] == mixin}
    expected = {
        (_sample_line(mixin, "self.max_total_num_tokens = self.profile_max_num_token("), "base"),
        (_sample_line(mixin, "= min(self.max_total_num_tokens, max_total_tokens)"), "min"),
        (_sample_line(mixin, "self.max_total_num_tokens = tensor.item()"), "reduce"),
        (_sample_line(mixin, "self.max_total_num_tokens = self.server_args.draft_runner_cache_size"), "override"),
        (_sample_line(mixin, "self.max_total_num_tokens = int(small_kv_size)"), "override"),
    }
    assert expected <= got
    assert any(category == "round" for _, category in got)
    assert any(category == "split" for _, category in got)
    [site] = payload["budget_sites"]
    assert "mem_fraction_static" in site["code"] and site["knobs"] == ["server_args.mem_fraction_static"]


def test_caps_text_groups_by_owner_with_reasons() -> None:
    result = CliRunner().invoke(cli, ["caps", str(SAMPLE), "--no-cache"])
    assert result.exit_code == 0
    out = result.stdout
    assert (
        "budget sites" in out and "sglang.srt.model_executor.model_runner_kv_cache_mixin.ModelRunnerKVCacheMixin" in out
    )
    assert f"why: {CATEGORIES['min']}" in out and "when: max_total_tokens is not None" in out


def test_caps_sarif_has_one_rule_per_category() -> None:
    result = CliRunner().invoke(cli, ["caps", str(SAMPLE), "--format", "sarif", "--no-cache"])
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [f"sgtrace/{c}" for c in CATEGORIES]
    assert run["results"] and all(r["ruleId"].startswith("sgtrace/") for r in run["results"])
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] > 0 for r in run["results"])


_SIDE_HISTORY = """
class Limits:
    def __init__(self, server_args):
        self.max_num_reqs = server_args.max_running_requests
        if self.max_num_reqs is None:
            self.max_num_reqs = min(4096, int(self.watermark() * 2))
        self.max_num_reqs = self.max_num_reqs // self.dp_size * self.dp_size

    def watermark(self):
        free = self.allocator.available_size()
        return free - self.reserved

    def follow(self, runner: "Runner"):
        self.max_num_reqs = min(self.max_num_reqs, runner.max_total_num_tokens // 2)


class Runner:
    def __init__(self, server_args, limits: Limits):
        self.limits = limits
        self.mem_fraction_static = server_args.mem_fraction_static

    def profile(self, total, avail):
        rest = avail - total * (1 - self.mem_fraction_static)
        return int(rest * (1 << 30) // 4096)

    def init_pool(self, total, avail):
        self.max_total_num_tokens = self.profile(total, avail)
        self.limits.follow(self)
        self.max_total_num_tokens = min(self.max_total_num_tokens, self.limits.max_num_reqs * 4096)


class Scheduler:
    def __init__(self, runner: Runner):
        self.max_total_num_tokens = runner.max_total_num_tokens
"""


def test_a_min_operands_own_history_is_an_input_not_caps(tmp_path: Path) -> None:
    """The request cap is computed from the pool and caps it back; its own writes are not the pool's caps."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "runner.py").write_text(_SIDE_HISTORY)
    result = caps(TraceQuery(POOL), "mem_fraction_static", Target(str(tmp_path), "t"), RunOptions(cache_dir=None))
    assert [(c.category, c.target, c.function) for c in result.caps] == [
        ("base", POOL, "Runner.init_pool"),
        ("min", POOL, "Runner.init_pool"),
    ]
    [site] = result.budget_sites
    assert "mem_fraction_static" in site.code
    # the other operand is reported as an input, with the knob it comes from
    assert "server_args.max_running_requests" in result.caps[1].knobs


_CONFIG_OBJECT = """\
from dataclasses import dataclass


@dataclass
class PoolConfig:
    max_total_num_tokens: int
    max_running_requests: int


class Runner:
    def profile(self, total, avail):
        rest_memory = avail - total * (1 - self.server_args.mem_fraction_static)
        return int(rest_memory * (1 << 30)) // 1024

    def resolve(self, total, avail):
        profiled = self.profile(total, avail)
        capacity = min(profiled, self.server_args.max_total_tokens)
        capacity = capacity // self.server_args.page_size * self.server_args.page_size
        return PoolConfig(max_total_num_tokens=capacity, max_running_requests=capacity // 2)

    def init_memory_pool(self, total, avail):
        config = self.resolve(total, avail)
        self.max_total_num_tokens = config.max_total_num_tokens
"""


def test_a_field_declared_without_a_value_is_not_a_cap(tmp_path: Path) -> None:
    """0.5.10's shape: the pool passes through a dataclass built with keywords; the field's declaration
    (``max_total_num_tokens: int``) carries the value, computes nothing, and is no cap (it was a "base" with no
    code); the min and the page rounding before it are."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "runner.py").write_text(_CONFIG_OBJECT)
    result = caps(TraceQuery(POOL), "mem_fraction_static", Target(str(tmp_path), "t"), RunOptions(cache_dir=None))
    assert all(c.code.strip() for c in result.caps), result.caps
    assert [(c.category, c.line) for c in result.caps] == [("min", 17), ("round", 18)]


_ROUNDING = (
    "        self.max_total_num_tokens = (\n"
    "            self.max_total_num_tokens\n"
    "            // self.server_args.page_size"
)


def _sample_with(tmp_path: Path, statement: str, anchor: str = _ROUNDING, after: bool = False) -> Path:
    """A copy of the sample whose pool sizing takes *statement* just before *anchor* (after it with *after*)."""
    tree = tmp_path / "tree"
    shutil.copytree(SAMPLE, tree)
    mixin = tree / "sglang" / "srt" / "model_executor" / "model_runner_kv_cache_mixin.py"
    text = mixin.read_text()
    assert anchor in text
    inserted = f"{anchor}        {statement}\n" if after else f"        {statement}\n\n{anchor}"
    mixin.write_text(text.replace(anchor, inserted, 1))
    return tree


def _caps_json(tree: Path, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["caps", str(tree), "--no-cache", "--format", "json", *args])
    assert result.exit_code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_a_floor_on_the_pool_is_listed_and_a_clamp_at_zero_is_not(tmp_path: Path) -> None:
    """``max(pool, knob)`` raises the pool to at least the knob: listed as a floor, with the knob; ``max(pool, 0)``
    only keeps a negative budget from being used, and is no cap (vLLM's ``num_gpu_blocks = max(num_gpu_blocks, 0)``)."""
    plain = _caps_json(SAMPLE)
    floor = "self.max_total_num_tokens = max(self.max_total_num_tokens, server_args.chunked_prefill_size)"
    lifted = _caps_json(_sample_with(tmp_path / "floor", floor))
    caps = lifted["caps"]
    assert isinstance(caps, list) and isinstance(plain["caps"], list)
    [found] = [c for c in caps if c["category"] == "floor"]
    assert found["code"] == floor and found["knobs"] == ["server_args.chunked_prefill_size"], found
    assert len(caps) == len(plain["caps"]) + 1
    clamp = "self.max_total_num_tokens = max(self.max_total_num_tokens, 0)"
    clamped = _caps_json(_sample_with(tmp_path / "clamp", clamp))
    assert isinstance(clamped["caps"], list) and len(clamped["caps"]) == len(plain["caps"])
    assert "floor" in CATEGORIES


_BUDGET = "        rest_memory = available_gpu_memory - total_gpu_memory * (1 - self.mem_fraction_static)\n"


@pytest.mark.parametrize(
    ("clamp", "listed"),
    [("max(rest_memory - self.server_args.scratch_gb, 0)", True), ("max(rest_memory, 0)", False)],
)
def test_a_reservation_clamped_at_zero_is_a_reservation(tmp_path: Path, clamp: str, listed: bool) -> None:
    """``max(budget - reserved, 0)`` takes *reserved* from the budget (0.5.23's KV-shard scratch,
    ``available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)``); the clamp only keeps a negative
    budget from being used. ``max(budget, 0)`` alone moves nothing."""
    caps = _caps_json(_sample_with(tmp_path, f"rest_memory = {clamp}", _BUDGET, after=True))["caps"]
    assert isinstance(caps, list)
    reserves = [c for c in caps if c["category"] == "reserve"]
    if listed:
        [reserve] = reserves
        assert reserve["code"] == f"rest_memory = {clamp}" and reserve["knobs"] == ["server_args.scratch_gb"]
    else:
        assert reserves == [] and len(caps) == len(_caps_json(SAMPLE)["caps"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("statements", "listed"),
    [
        # per-request state for as many requests as the budget admits, taken off it (0.5.23's DSV4 configurator,
        # pool_configurator.py: available_bytes_for_tokens = max(available_bytes - fixed_bytes, 0))
        (
            (
                "requests = min(rest_memory // 3, self.server_args.max_running_requests)",
                "slots = requests + 1",
                "fixed = slots * 2",
                "left = max(rest_memory - fixed, 0)",
            ),
            True,
        ),
        # a share of the budget taken off it: what is left is the other share, a split of the budget (no reserve)
        (("share = rest_memory * 0.25", "left = rest_memory - share"), False),
    ],
)
def test_a_reservation_the_budget_itself_sizes_is_a_reservation(
    tmp_path: Path, statements: tuple[str, ...], listed: bool
) -> None:
    """Both operands of the subtraction come from the budget: a fixed state sized for what the budget admits (the
    requests it holds, capped, their slots, their bytes) is a reservation (the issue's DSV4 one); a share of the
    budget (within two steps of it by a product or a quotient) is not."""
    body = "\n        ".join((*statements, "rest_memory = left"))
    caps = _caps_json(_sample_with(tmp_path, body, _BUDGET, after=True))["caps"]
    assert isinstance(caps, list)
    reserves = [c["code"] for c in caps if c["category"] == "reserve"]
    assert ("left = max(rest_memory - fixed, 0)" in reserves) is listed, reserves
    assert "left = rest_memory - share" not in reserves
