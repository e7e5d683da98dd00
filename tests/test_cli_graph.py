"""``trace`` and ``graph`` through the command line, on the sample tree shipped with sgtrace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.sources import sample_tree

SAMPLE = str(sample_tree())


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_trace_text_shows_the_chain_with_locations_and_operations() -> None:
    code, out, _ = _invoke("trace", "max_total_num_tokens", SAMPLE, "--no-cache")
    assert code == 0
    assert out.startswith(f"data flow of .max_total_num_tokens under {SAMPLE}")
    assert "sglang/srt/managers/scheduler.py:" in out
    assert "<-unpack[0]- return TpModelWorker.get_worker_info()[0]" in out
    assert "KNOB server_args.page_size" in out
    assert "knobs and environment variables upstream:" in out


def test_trace_depth_folds_long_chains() -> None:
    _, shallow, _ = _invoke("trace", "max_total_num_tokens", SAMPLE, "--no-cache", "--depth", "2")
    _, deep, _ = _invoke("trace", "max_total_num_tokens", SAMPLE, "--no-cache", "--depth", "30")
    assert "more upstream (see --depth)" in shallow
    assert len(deep.splitlines()) > len(shallow.splitlines())


def test_trace_json_is_node_link_data() -> None:
    code, out, _ = _invoke("trace", "max_total_num_tokens", SAMPLE, "--format", "json", "--no-cache")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"directed", "nodes", "links", "graph"}
    assert data["graph"]["attribute"] == "max_total_num_tokens"
    for node in data["nodes"]:
        assert {"id", "path", "line", "kind", "label"} <= set(node)
    ops = {link["op"] for link in data["links"]}
    assert {"copy", "unpack[0]", "min"} <= ops


def test_trace_of_an_attribute_never_written_exits_1(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = o.max_total_num_tokens\n")  # read, never written
    code, out, _ = _invoke("trace", "max_total_num_tokens", str(tmp_path), "--no-cache")
    assert code == 1 and "no writes" in out


def test_graph_dot_is_deterministic_and_clustered(tmp_path: Path) -> None:
    first = _invoke("graph", SAMPLE, "--dot", "--no-cache")[1]
    second = _invoke("graph", "max_total_num_tokens", SAMPLE, "--cache-dir", str(tmp_path))[1]
    third = _invoke("graph", "max_total_num_tokens", SAMPLE, "--cache-dir", str(tmp_path))[1]  # from the cache
    assert first == second == third
    assert first.startswith('digraph "max_total_num_tokens in')
    assert 'label="sglang/srt/managers/scheduler.py"' in first
    assert 'label="Scheduler"' in first


def test_graph_json_and_graphml_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "g.graphml"
    code, out, err = _invoke("graph", SAMPLE, "--graphml", "-o", str(target), "--no-cache")
    assert code == 0 and out == "" and "wrote" in err
    assert target.read_text().startswith("<?xml")
    loaded = nx.read_graphml(target)
    assert loaded.number_of_nodes() > 10 and loaded.graph["attribute"] == "max_total_num_tokens"
    code, out, _ = _invoke("graph", "page_size", SAMPLE, "--json", "--no-cache")
    assert json.loads(out)["graph"]["attribute"] == "page_size"


def test_graph_render_says_clearly_when_graphviz_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    code, _, err = _invoke("graph", SAMPLE, "--render", "svg", "-o", str(tmp_path / "g.svg"), "--no-cache")
    assert code == 2
    assert "Graphviz is not installed" in err


def test_graph_render_needs_an_output() -> None:
    result = CliRunner().invoke(cli, ["graph", SAMPLE, "--render", "svg"])
    assert result.exit_code == 2


def test_graph_upstream_keeps_the_writes_and_what_lies_near_them() -> None:
    full = json.loads(_invoke("graph", SAMPLE, "--json", "--no-cache")[1])
    near = json.loads(_invoke("graph", SAMPLE, "--json", "--upstream", "1", "--no-cache")[1])
    seeds = {n["id"] for n in full["nodes"] if n.get("seed") == "write"}
    kept = {n["id"] for n in near["nodes"]}
    assert seeds <= kept and len(kept) < len(full["nodes"])
    # every kept node is a write of the attribute or feeds one directly
    feeding = {link["source"] for link in near["links"] if link["target"] in seeds}
    assert kept <= seeds | feeding


def test_two_output_formats_at_once_is_a_usage_error() -> None:
    code, out, err = _invoke("graph", SAMPLE, "--dot", "--json", "--no-cache")
    assert code == 2 and out == ""
    assert "--dot and --json cannot be used together" in err


def test_graph_focus_budget_is_the_reports_view_with_a_legend() -> None:
    code, out, _ = _invoke("graph", SAMPLE, "--focus", "budget", "--no-cache")
    assert code == 0
    assert "subgraph cluster_legend {" in out and 'label="legend"' in out
    for role in ("knob", "budget", "cap", "pool", "reader"):
        assert f'subgraph "role_{role}" {{ rank=same;' in out
    assert '"knob::0:server_args.mem_fraction_static" [label="server_args.mem_fraction_static\\nknob"' in out
    assert "penwidth=2" in out  # the budget knob stands out
    whole = _invoke("graph", SAMPLE, "--no-cache")[1]
    assert out.count(" -> ") < whole.count(" -> ")
    data = json.loads(_invoke("graph", SAMPLE, "--focus", "budget", "--json", "--no-cache")[1])
    assert {n["role"] for n in data["nodes"]} == {"knob", "budget", "cap", "pool", "reader"}


def test_graph_focus_and_upstream_together_is_a_usage_error() -> None:
    code, _, err = _invoke("graph", SAMPLE, "--focus", "budget", "--upstream", "2")
    assert code == 2 and "--focus and --upstream cannot be used together" in err


_TRACE_IN_A_PROCESS = """
import contextlib, io, json, sys
from sgtrace.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"out": out.getvalue(), "code": code, "networkx": "networkx" in sys.modules}))
"""


def test_a_warm_trace_is_the_cold_one_without_the_graph(tmp_path: Path) -> None:
    """The rendered trace is cached beside the graph: a warm run prints the same bytes and exit code without
    loading the graph or networkx; each format and --depth is a view of its own."""
    import subprocess
    import sys

    def run(*args: str) -> dict[str, object]:
        command = [sys.executable, "-c", _TRACE_IN_A_PROCESS, "trace", "max_total_num_tokens", SAMPLE, *args]
        done = subprocess.run(command + ["--cache-dir", str(tmp_path / "cache")], capture_output=True, text=True)
        return json.loads(done.stdout.splitlines()[-1])

    for args in ((), ("--depth", "2"), ("--format", "json")):
        cold, warm = run(*args), run(*args)
        assert cold["networkx"] and not warm["networkx"], args
        assert warm["out"] == cold["out"] and warm["code"] == cold["code"] == 0, args
    assert run()["out"] != run("--depth", "2")["out"] != run("--format", "json")["out"]
