"""Scope on the command line: --exclude/--include/--no-ignore on a small checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli


def _find(root: Path, *args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(root), "--format", "json", *args])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def _paths(payload: dict[str, object]) -> set[str]:
    writes = payload["writes"]
    assert isinstance(writes, list)
    return {w["path"].split("/")[0] + "/" for w in writes}


def test_checkout_modules_and_scope_flags(small_checkout: Path) -> None:
    code, payload, err = _find(small_checkout)
    assert code == 0 and _paths(payload) == {"python/", "test/"}
    writes = payload["writes"]
    assert isinstance(writes, list)
    assert {w["owner"].rsplit(".", 1)[0] for w in writes if w["owner"] and w["path"].startswith("python/")} >= {
        "sglang.srt.managers.scheduler",
    }
    assert not any("build/" in w["path"] for w in writes)
    _, scoped, _ = _find(small_checkout, "--exclude", "test/**")
    assert _paths(scoped) == {"python/"}
    _, included, _ = _find(small_checkout, "--include", "test/**")
    assert _paths(included) == {"test/"}
    # With .gitignore off, the build copy is seen, left out, and said.
    code, unignored, err = _find(small_checkout, "--no-ignore")
    assert code == 0 and unignored["writes"] == payload["writes"]
    assert "package sglang found twice: analysing python/sglang, leaving out python/build/lib/sglang" in err


def test_the_sample_installed_in_a_checkouts_venv_is_analysed(tmp_path: Path) -> None:
    """The README's first command, run in a clone: `pip install .` puts the sample under .venv, which the
    clone's .gitignore leaves out; the run names that folder, so it is analysed all the same."""
    import shutil
    import subprocess

    from sgtrace.sources import sample_tree

    installed = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "sgtrace" / "sample"
    shutil.copytree(sample_tree(), installed)
    (tmp_path / ".gitignore").write_text(".venv/\n")
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)

    def writes(root: Path) -> list[tuple[str, int]]:
        result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(root), "--format", "json", "--no-cache"])
        assert result.exit_code == 0, result.stderr
        return [(w["path"], w["line"]) for w in json.loads(result.stdout)["writes"]]

    assert writes(installed) == writes(Path(sample_tree())) != []


def test_a_folder_with_nothing_to_analyse_is_said(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("o.max_total_num_tokens = 1\n")
    runner = CliRunner()
    found = runner.invoke(cli, ["find", "max_total_num_tokens", str(tmp_path), "--no-cache"])
    assert found.exit_code == 0 and "no Python file" not in found.stderr
    for args in (["find", "max_total_num_tokens"], ["caps"], ["trace", "max_total_num_tokens"]):
        none = runner.invoke(cli, [*args, str(tmp_path), "--exclude", "*.py", "--no-cache"])
        assert f"warning: no Python file to analyse under {tmp_path}" in none.stderr, args


def _graph_paths(root: Path, *args: str) -> set[str]:
    result = CliRunner().invoke(cli, ["graph", str(root), "--json", "--no-cache", *args])
    assert result.exit_code == 0, result.stderr
    return {node["path"].split("/")[0] + "/" for node in json.loads(result.stdout)["nodes"] if node.get("path")}


def test_a_checkouts_test_folders_are_not_part_of_the_slice_unless_asked(
    small_checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """test/srt/test_pool.py sets the pool to 8 in a setUp: find lists it apart, the slice leaves it out (it is
    not the package's code), unless --with-tests (or the configuration's with-tests) asks for it."""
    code, payload, _ = _find(small_checkout)
    assert code == 0 and _paths(payload) == {"python/", "test/"}
    assert _graph_paths(small_checkout) == {"python/"}
    assert _graph_paths(small_checkout, "--focus", "budget") == {"python/"}
    assert _graph_paths(small_checkout, "--with-tests") == {"python/", "test/"}
    (small_checkout / "pyproject.toml").write_text("[tool.sgtrace]\nwith-tests = true\n")
    monkeypatch.chdir(small_checkout)  # the configuration is the current folder's
    assert _graph_paths(small_checkout) == {"python/", "test/"}
