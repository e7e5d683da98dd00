"""[tool.sgtrace] through the real command line: defaults, the command line winning, bad tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from tests.test_cli_scope import _find, _paths


def test_config_sets_defaults_and_the_command_line_wins(
    small_checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work" / "deeper"
    work.mkdir(parents=True)
    (tmp_path / "work" / "pyproject.toml").write_text('[tool.sgtrace]\nexclude = ["test/**"]\n')
    monkeypatch.chdir(work)
    _, payload, _ = _find(small_checkout)
    assert _paths(payload) == {"python/"}
    _, payload, _ = _find(small_checkout, "--exclude", "nothing")
    assert _paths(payload) == {"python/", "test/"}


@pytest.mark.parametrize(
    "table, message",
    [
        ('exlude = ["x"]', "unknown key 'exlude' (did you mean 'exclude'?)"),
        ("exclude = 3", "exclude"),
        ("jobs = 0", "jobs"),
        ("[tool.sgtrace.nosuchcommand]\nx = 1", "nosuchcommand"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_2(
    small_checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.sgtrace]\n{table}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(small_checkout)])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("sgtrace: error: ") and str(tmp_path / "pyproject.toml") in line and message in line
