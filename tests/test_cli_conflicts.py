"""Conflicting options are usage errors, listed in each command's --help (issue 18, item 4).

The table below is written out by hand (not read from the commands), so an option pair that stops
being checked fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.cli import main
from sgtrace.sources import sample_tree
from tests.conftest import FIXTURES

SAMPLE = str(sample_tree())
LOG = str(FIXTURES / "logs" / "kimi_three_startups.journal")
FIGURES = ["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]

#: (command line, the one line it must give, the help text of the command that must say it)
CASES = [
    (["explain", SAMPLE, "--log", LOG, "--want-kv-gb", "10", "--want-tokens", "5000"],
     "--want-kv-gb and --want-tokens cannot be used together", "[not with --want-tokens, --runs]"),
    (["explain", SAMPLE, "--log", LOG, "--runs", "--want-kv-gb", "10"],
     "--runs and --want-kv-gb cannot be used together", "[not with --want-kv-gb, --want-tokens, --format json;"),
    (["explain", SAMPLE, "--log", LOG, "--runs", "--want-tokens", "5000"],
     "--runs and --want-tokens cannot be used together", "[not with --want-kv-gb, --runs]"),
    (["explain", SAMPLE, "--log", LOG, "--runs", "--format", "json"],
     "--runs and --format json cannot be used together", "[json: not with --runs]"),
    (["explain", SAMPLE, *FIGURES, "--run", "2"], "--run needs --log", "[needs --log]"),
    (["explain", SAMPLE, *FIGURES, "--runs"], "--runs needs --log", "needs --log]"),
    (["trace", "max_total_num_tokens", SAMPLE, "--depth", "3", "--format", "json"],
     "--depth and --format json cannot be used together", "[not with --format json]"),
    (["graph", SAMPLE, "--dot", "--json"], "--dot and --json cannot be used together", "[not with --json, --graphml]"),
    (["graph", SAMPLE, "--dot", "--graphml"], "--dot and --graphml cannot be used together", "--graphml]"),
    (["graph", SAMPLE, "--json", "--graphml"], "--json and --graphml cannot be used together", "--graphml"),
    (["graph", SAMPLE, "--render", "svg", "-o", "{tmp}/g.svg", "--json"],
     "--render and --json cannot be used together", "[not with --json, --graphml; needs --output]"),
    (["graph", SAMPLE, "--render", "png", "-o", "{tmp}/g.png", "--graphml"],
     "--render and --graphml cannot be used together", "needs --output]"),
    (["graph", SAMPLE, "--focus", "budget", "--upstream", "2"],
     "--focus and --upstream cannot be used together", "[not with --upstream]"),
    (["graph", SAMPLE, "--render", "svg"], "--render needs --output", "needs --output]"),
    (["graph", SAMPLE, "--budget", "page_size"], "--budget needs --focus", "[needs --focus]"),
    (["check", SAMPLE, "--baseline", "{tmp}/a.json", "--write-baseline", "{tmp}/b.json"],
     "--baseline and --write-baseline cannot be used together", "[not with --write-baseline]"),
    *[
        (["check", SAMPLE, "--write-baseline", "{tmp}/b.json", *given],
         f"--write-baseline and {given[0]} cannot be used together",
         "[not with --log, --run, --set, --format, --fail-on, --exit-zero, --command, --server-info, --baseline]")
        for given in (["--log", LOG], ["--set", "weights_gb=70"], ["--format", "sarif"], ["--fail-on", "added"],
                      ["--exit-zero"], ["--server-info", LOG])
    ],
    (["check", SAMPLE, "--baseline", "{tmp}/a.json", "--run", "2"], "--run needs --log", "needs --log]"),
    (["diff", SAMPLE, SAMPLE, "--run", "2"], "--run needs --log", "[needs --log]"),
    (["report", SAMPLE, "--run", "2", "-o", "-"], "--run needs --log", "[needs --log]"),
    (["caps", SAMPLE, "--no-cache", "--cache-dir", "{tmp}/cache"],
     "--no-cache and --cache-dir cannot be used together", "[not with --cache-dir]"),
]  # fmt: skip

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


@pytest.mark.parametrize(("args", "message", "listed"), CASES, ids=[" ".join(c[0][2:])[:60] for c in CASES])
def test_conflicting_options_are_a_usage_error_listed_in_help(
    sgtrace: Run, tmp_path: Path, args: list[str], message: str, listed: str
) -> None:
    (tmp_path / "a.json").write_text("{}")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    command = args[0]
    code, out, err = sgtrace(*args)
    assert err == f"sgtrace: error: {message} (see 'sgtrace {command} --help')\n"
    pairs = list(zip(args, args[1:], strict=False))
    to_file = any(a in ("-o", "--output") and b != "-" for a, b in pairs)  # an answer asked into a file
    json_asked = not to_file and ("--json" in args or ("--format", "json") in pairs)
    assert code == 2 and (json.loads(out)["error"]["message"] == err.strip()[16:] if json_asked else out == ""), out
    assert not (tmp_path / "b.json").exists() and not (tmp_path / "cache").exists()
    code, helptext, _ = sgtrace(command, "--help")
    # click wraps the help (and may break "--exit-zero" after its dash): compare without the white space
    assert code == 0 and "".join(listed.split()) in "".join(helptext.split()), helptext


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log", "-", "--command", "-"], "--log - and --command - cannot be used together"),
        (["--log", "-", "--server-info", "-"], "--log - and --server-info - cannot be used together"),
        (["--command", "-", "--server-info", "-", *FIGURES], "--command - and --server-info - cannot be used"),
    ],
)
def test_standard_input_is_read_by_one_option_at_most(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sgtrace", "explain", SAMPLE, "--no-cache", *args],
        input="", capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"sgtrace: error: {message}") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_configured_default_does_not_conflict(sgtrace: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI's [tool.sgtrace.check] format = "sarif" still lets a reviewer write a baseline."""
    (tmp_path / "pyproject.toml").write_text('[tool.sgtrace.check]\nformat = "sarif"\nexit-zero = true\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = sgtrace("check", SAMPLE, "--write-baseline", str(tmp_path / "b.json"), "--no-cache")
    assert code == 0 and (tmp_path / "b.json").exists(), err


def test_options_that_go_together_still_work(sgtrace: Run, tmp_path: Path) -> None:
    code, out, _ = sgtrace("explain", SAMPLE, "--log", LOG, "--runs", "--run", "2", "--no-cache")
    assert code == 0 and "start-ups in the log (3" in out
    code, out, _ = sgtrace("explain", SAMPLE, "--log", LOG, "--want-tokens", "5000", "--no-cache")
    assert code == 0
    code, out, _ = sgtrace("graph", SAMPLE, "--upstream", "0", "--json", "--no-cache")
    assert code == 0 and out.startswith("{")
    code, out, _ = sgtrace("trace", "max_total_num_tokens", SAMPLE, "--depth", "3", "--format", "text", "--no-cache")
    assert code == 0


#: Errors that end a command before its answer, one of each kind: a usage error, an option's value, a tree that
#: is not there, a file an option names, a baseline that is not one.
_JSON_ERRORS = [
    ["caps", SAMPLE, "--bogus"],
    ["explain", SAMPLE, "--set", "mem_fraction_static=2"],
    ["caps", "{tmp}/missing"],
    ["explain", SAMPLE, "--model-config", "{tmp}/missing.json"],
    ["check", SAMPLE, "--baseline", "{tmp}/a.json"],
    ["find", "max_total_num_tokens", "{tmp}/missing"],
]


@pytest.mark.parametrize("args", _JSON_ERRORS, ids=[" ".join(a[:3])[:50] for a in _JSON_ERRORS])
def test_an_error_under_format_json_is_json_on_stdout_too(sgtrace: Run, tmp_path: Path, args: list[str]) -> None:
    """Exit 2 says why on stderr in one line; asked for JSON, stdout holds the same as JSON (a CI job that parses
    stdout learns why there is no answer), and without it stdout stays empty."""
    (tmp_path / "a.json").write_text("[1, 2]")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = sgtrace(*args)
    assert code == 2 and out == "" and err.startswith("sgtrace: error: ") and err.count("\n") == 1, (out, err)
    code, out, err = sgtrace(*args, "--format", "json")
    assert code == 2, err
    error = json.loads(out)["error"]
    assert error["exit_code"] == 2 and err.strip() == f"sgtrace: error: {error['message']}", (out, err)
