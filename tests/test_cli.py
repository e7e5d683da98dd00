"""The command line, end to end: golden text and JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace import __version__
from sgtrace.cli import cli
from sgtrace.fetch import installed_package
from tests.conftest import FIXTURES

FORMS = FIXTURES / "sglang_snippets" / "write_forms"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("SGTRACE_UPDATE_GOLDEN"))


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual)
    assert actual == path.read_text()


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sgtrace", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_find_golden(fmt: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a copy outside any checkout: the answer names the tree it read, and sgtrace's own commit is no part of it
    copy = tmp_path / "write_forms"
    shutil.copytree(FORMS, copy)
    monkeypatch.chdir(copy)
    code, out, err = _invoke("find", "max_total_num_tokens", ".", "--format", fmt, "--names", "--no-cache")
    assert code == 0
    _golden(f"find_write_forms.{'txt' if fmt == 'text' else 'json'}", out.replace(str(copy), "<tree>"))
    if fmt == "text":
        assert err.strip().startswith("sgtrace: 77 writes of .max_total_num_tokens in 1 file")


def test_json_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FORMS)
    _, out, _ = _invoke("find", "max_total_num_tokens", "forms.py", "--format", "json")
    payload = json.loads(out)
    assert list(payload) == ["attribute", "root", "writes", "errors", "tree"]
    assert payload["attribute"] == "max_total_num_tokens" and payload["root"] == "forms.py"
    for write in payload["writes"]:
        assert list(write) == ["path", "line", "column", "kind", "owner", "function", "code"]
        assert write["owner"] is None or write["owner"].startswith("write_forms.forms.")
    assert "name" not in {w["kind"] for w in payload["writes"]}


def test_reads_are_listed_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FORMS)
    _, out, _ = _invoke("find", "max_total_num_tokens", "nonwrites.py", "--format", "json", "--reads")
    payload = json.loads(out)
    assert payload["writes"] == []
    assert {r["kind"] for r in payload["reads"]} == {"read", "getattr"}


def test_nothing_found_exits_1(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = o.max_total_num_tokens\n")  # read, never written
    code, out, err = _invoke("find", "max_total_num_tokens", str(tmp_path))
    assert code == 1
    assert "no writes" in out


def test_parse_errors_go_to_stderr_as_path_line_message(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def f(:\n    self.max_total_num_tokens = 1\n")
    (tmp_path / "good.py").write_text("self.max_total_num_tokens = 1\n")
    code, out, err = _invoke("find", "max_total_num_tokens", str(tmp_path), "--format", "json")
    assert code == 0
    assert err.splitlines()[0].startswith("bad.py:1: syntax error")
    payload = json.loads(out)
    assert [(e["path"], e["line"]) for e in payload["errors"]] == [("bad.py", 1)]
    assert ("good.py", 1) in {(w["path"], w["line"]) for w in payload["writes"]}


def test_several_roots_prefix_their_paths(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text("o.max_total_num_tokens = 1\n")
    code, out, _ = _invoke("find", "max_total_num_tokens", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json")
    assert code == 0
    assert [w["path"] for w in json.loads(out)["writes"]] == [f"{tmp_path}/a/m.py", f"{tmp_path}/b/m.py"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["find", "max_total_num_tokens", "/no/such/dir"], "no such file or directory: /no/such/dir"),
        (["find", "max_total_num_tokens", "--no-such-option"], "No such option '--no-such-option'"),
        (["find", "not-an-identifier", "."], "is not a Python identifier"),
        (["no-such-command"], "No such command"),
    ],
)
def test_usage_and_input_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    proc = _run(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert message in proc.stderr


def test_version_and_help_with_examples() -> None:
    assert _run("--version").stdout.strip() == f"sgtrace, version {__version__}"
    helptext = _run("find", "--help").stdout
    assert "Examples:" in helptext and "sgtrace find max_total_num_tokens sglang==0.5.9" in helptext
    assert "Exit codes" in helptext


def test_default_root_is_the_sample_when_sglang_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: None)
    code, out, err = _invoke("find", "max_total_num_tokens", "--format", "json")
    assert code == 0
    assert "analysing the sample tree shipped with sgtrace" in err
    payload = json.loads(out)
    assert payload["root"] == "<sample>"
    kinds = {(w["owner"], w["kind"]) for w in payload["writes"]}
    assert ("sglang.srt.managers.scheduler.Scheduler", "unpack") in kinds


def test_installed_package_is_located_without_importing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "sglang"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('sgtrace must not import me')\n")
    (package / "runner.py").write_text("class R:\n    def f(self):\n        self.max_total_num_tokens = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_package("sglang") == package
    assert "sglang" not in sys.modules
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "sgtrace", "find", "max_total_num_tokens", "--format", "json"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"analysing the installed sglang at {package}" in proc.stderr
    [write] = json.loads(proc.stdout)["writes"]
    assert (write["path"], write["owner"], write["function"]) == ("runner.py", "sglang.runner.R", "R.f")


def test_cache_info_and_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FORMS)
    cache = tmp_path / "cache"
    assert _invoke("find", "max_total_num_tokens", ".", "--cache-dir", str(cache))[0] == 0
    (cache / "releases" / "sglang-0").mkdir(parents=True)
    (cache / "releases" / "sglang-0" / "m.py").write_text("x = 1\n")
    code, out, _ = _invoke("cache", "info", "--cache-dir", str(cache))
    assert code == 0 and "manifest" in out and "releases" in out
    code, out, _ = _invoke("cache", "clear", "--cache-dir", str(cache), "--keep-releases")
    assert code == 0 and out.startswith("removed ")
    assert not (cache / "manifest").exists() and (cache / "releases" / "sglang-0" / "m.py").exists()
    _invoke("cache", "clear", "--cache-dir", str(cache))
    assert "(empty)" in _invoke("cache", "info", "--cache-dir", str(cache))[1]


def test_a_default_budget_the_tree_never_names_is_said_as_a_default(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class A:\n    def f(self, x):\n        self.max_total_num_tokens = x // 2\n")
    for command in (["caps", str(tmp_path)], ["explain", str(tmp_path), "--set", "x=1"]):
        code, out, err = _invoke(*command, "--cache-dir", str(tmp_path / "cache"))
        assert code == 2 and out == ""
        assert err.strip().splitlines() == [
            f"sgtrace: error: {tmp_path} never names mem_fraction_static, the default budget knob (--budget "
            f"mem_fraction_static): name the one this tree uses with --budget NAME (sgtrace find NAME {tmp_path} "
            "shows where a name is written)"
        ]
    code, _, err = _invoke("caps", str(tmp_path), "--budget", "mem_fraction_statik", "--cache-dir", str(tmp_path / "c"))
    assert code == 2 and err.startswith(f"sgtrace: error: --budget mem_fraction_statik: not a name in {tmp_path}")


@pytest.mark.parametrize("where", ["file", "under a file"])
def test_a_cache_that_cannot_be_used_costs_a_warning_not_the_answer(tmp_path: Path, where: str) -> None:
    (tmp_path / "tree").mkdir()
    write = "self.max_total_num_tokens = int(server_args.mem_fraction_static * 8)"
    (tmp_path / "tree" / "m.py").write_text(f"class A:\n    def f(self, server_args):\n        {write}\n")
    (tmp_path / "file").write_text("not a folder")
    cache = tmp_path / "file" if where == "file" else tmp_path / "file" / "cache"
    for command in (["find", "max_total_num_tokens"], ["caps"], ["trace", "max_total_num_tokens"]):
        used = _run(*command, str(tmp_path / "tree"), "--format", "json", "--cache-dir", str(cache))
        cold = _run(*command, str(tmp_path / "tree"), "--format", "json", "--no-cache")
        assert used.returncode == cold.returncode in (0, 1) and used.stdout == cold.stdout, (command, used.stderr)
        assert "warning: cannot use" in used.stderr and "running without a cache" in used.stderr


#: A formula of two chains, each needing an input of its own: explain lacks both.
_TWO_INPUTS = """\
class Runner:
    def __init__(self, server_args):
        self.mem_fraction_static = server_args.mem_fraction_static

    def init(self, avail, total, cell):
        a = avail * self.mem_fraction_static
        b = total * self.mem_fraction_static
        self.max_total_num_tokens = int((a + b) // cell)
"""
_NO_FORMULA = "class A:\n    def f(self, a):\n        self.max_total_num_tokens = int(a.mem_fraction_static * 1000)\n"
_LOAD_END = "[2026-02-28 10:00:05 TP0] Load weight end. type=X, dtype=torch.bfloat16, avail mem=21.71 GB"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "sgtrace: error: no command given (see 'sgtrace --help')"),
        (["cache"], "sgtrace: error: no command given (see 'sgtrace cache --help')"),
        (["explain", "{two}", "--log", "{load}"],
         "sgtrace: missing input mem_fraction_static: --set mem_fraction_static=VALUE, or a log with its "
         "'server_args=ServerArgs(' line or its 'KV Cache is allocated' line; missing input total: --set total=VALUE"),
        (["explain", "{two}", "--set", "mem_fraction_static=0.5", "--format", "json"],
         "; missing input total: --set total=VALUE"),
        (["explain", "{sample}", "--set", "gpu_gb=96", "--set", "mem_fraction_static=0.88", "--set",
          "avail_after_weights_gb=21.71"], "; note: gpu_gb is the card's size, not the memory free before the weights"),
        (["explain", "{none}", "--set", "mem_fraction_static=0.8"], "error: no budget formula was found in"),
        (["explain", "{two}", "--log", "{text}"], "error: no SGLang start-up in the log"),
        (["explain", "{two}", "--log", "{text}", "--format", "json"], "error: no SGLang start-up in the log"),
        (["explain", "{two}", "--set", "mem_fraction_static=None"], "--set mem_fraction_static=None: not a number"),
        (["explain", "{two}"], "error: give --log FILE or --set NAME=VALUE"),
        (["explain", "{two}", "--set", "mem_fraction_static=.5", "--want-tokens", "5", "--want-kv-gb", "1"],
         "--want-kv-gb and --want-tokens cannot be used together"),
        (["check", "{two}", "--baseline", "{text}"], "error: cannot read baseline {text}: not JSON"),
        (["check", "{two}", "--baseline", "{text}", "--format", "json"], "cannot read baseline {text}: not JSON"),
        (["trace", "no_such_attribute", "{two}"], "error: no_such_attribute: not a name in {two}"),
        (["diff", "{two}", "/no/such/dir"], "error: no such file or directory: /no/such/dir"),
        (["history", "{two}"], "error: a history needs two releases or more; 1 given"),
        (["cache", "prune", "--cache-dir", "{other}"], "is not an sgtrace cache"),
        (["trace", "no_such_attribute"], "error: no_such_attribute: not a name in "),  # the default tree, said after
    ],
)  # fmt: skip
def test_every_exit_2_says_why_in_one_line_on_stderr(tmp_path: Path, args: list[str], message: str) -> None:
    """Issue 55, item 4: whatever the command and the input, an exit 2 is one line on stderr, its only line; explain
    short of several inputs names them all in it, and the notes that tell why end it (they were a line each)."""
    from sgtrace.sources import sample_tree

    files = {"two": "two/runner.py", "none": "none/a.py", "load": "load.log", "text": "text.log", "other": "other/f"}
    for path, text in zip(files.values(), [_TWO_INPUTS, _NO_FORMULA, _LOAD_END + "\n", "hello\n", "x"], strict=True):
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    names = {name: str((tmp_path / path).parent if "/" in path else tmp_path / path) for name, path in files.items()}
    names["sample"] = str(sample_tree())

    def filled(text: str) -> str:
        for name, value in names.items():
            text = text.replace("{" + name + "}", value)
        return text

    proc = _run(*map(filled, args), cwd=tmp_path)  # the cache: the test's own (SGTRACE_CACHE_DIR)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.strip(), proc.stderr
    assert filled(message) in proc.stderr
    if len(args) == 2 and args[0] == "trace":  # which tree was read for want of one named ends the line
        assert "; note: " in proc.stderr and "analysing the" in proc.stderr
    if "json" in args:
        assert json.loads(proc.stdout)  # the answer short of inputs, or the error, as JSON
