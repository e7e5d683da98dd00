"""With no tree named: the SGLang checkout holding the current folder, else the installed sglang, else the sample."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.fetch import FetchError
from sgtrace.sources import resolve, sample_tree

#: A module only the checkout holds: one more write of the attribute, and a name the sample does not have.
_EXTRA = """\
class Pool:
    def __init__(self):
        self.max_total_num_tokens = 4
        self.pool_pages_wanted = 2
"""


def _find(*args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(cli, ["find", *args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True)


@pytest.fixture()
def checkout(small_checkout: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The small checkout with a write the sample lacks; an installed sglang too, which the checkout comes before."""
    (small_checkout / "python" / "sglang" / "srt" / "extra.py").write_text(_EXTRA)
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: sample_tree() / "sglang")
    return small_checkout.resolve()


@pytest.mark.parametrize("where", [".", "python", "python/sglang", "python/sglang/srt"])
def test_the_checkout_holding_the_current_folder_is_read_as_if_named(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.chdir(checkout / where)
    code, named, _ = _find("max_total_num_tokens", str(checkout))
    assert code == 0
    code, payload, err = _find("max_total_num_tokens")
    assert code == 0 and payload == named
    writes = payload["writes"]
    assert isinstance(writes, list)
    assert {"python/sglang/srt/extra.py", "test/srt/test_pool.py"} <= {w["path"] for w in writes}
    assert f"analysing the checkout {checkout} (the git repository holding the current folder)" in err
    assert "sample" not in err and "installed" not in err


def test_a_worktree_is_a_checkout(checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(checkout, "add", "-A")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    tree = tmp_path / "side"
    _git(checkout, "worktree", "add", "-q", str(tree))
    (tree / "python" / "sglang" / "srt" / "extra.py").write_text(_EXTRA.replace("= 4", "= 5"))  # its own copy
    assert (tree / ".git").is_file()
    monkeypatch.chdir(tree / "python")
    code, payload, err = _find("max_total_num_tokens")
    assert code == 0 and payload == _find("max_total_num_tokens", str(tree))[1]
    assert f"analysing the checkout {tree} " in err
    writes = payload["writes"]
    assert isinstance(writes, list) and any("= 5" in w["code"] for w in writes)


def test_the_typo_suggestion_comes_from_the_checkouts_names(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout / "python")
    result = CliRunner().invoke(cli, ["find", "pool_pages_wantd"])
    assert result.exit_code == 2
    assert f"pool_pages_wantd: not a name in {checkout} (did you mean pool_pages_wanted?)" in result.stderr
    on_sample = CliRunner().invoke(cli, ["find", "pool_pages_wantd", str(sample_tree())])
    assert on_sample.exit_code == 2 and "pool_pages_wanted" not in on_sample.stderr


@pytest.mark.parametrize("installed", [True, False])
def test_a_git_repository_without_sglang_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed: bool
) -> None:
    """Laid out as sgtrace's own repository: its sample's sglang lies inside the sgtrace package, at no root."""
    package = tmp_path / "tool" / "sample" / "sglang"
    package.mkdir(parents=True)
    (tmp_path / "tool" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("class S:\n    def f(self):\n        self.max_total_num_tokens = 1\n")
    _git(tmp_path, "init", "-q")
    shipped = sample_tree() / "sglang"
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: shipped if installed else None)
    monkeypatch.chdir(package)
    code, payload, err = _find("max_total_num_tokens")
    assert code == 0 and "checkout" not in err
    if installed:
        assert payload["root"] == str(shipped) and "analysing the installed sglang" in err
    else:
        assert payload["root"] == "<sample>" and "analysing the sample tree shipped with sgtrace" in err


def test_sgtraces_own_folders_are_no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run inside the sample shipped with sgtrace (in sgtrace's git checkout, when the suite runs from one)."""
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: None)
    monkeypatch.chdir(sample_tree() / "sglang" / "srt")
    code, payload, err = _find("max_total_num_tokens")
    assert code == 0 and payload["root"] == "<sample>" and "checkout" not in err


@pytest.mark.parametrize(("home", "read"), [("home/user", False), ("home", True)])
def test_the_walk_up_stops_below_homes_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str, read: bool
) -> None:
    repository = tmp_path / "home"
    (repository / "python" / "sglang").mkdir(parents=True)
    (repository / "python" / "sglang" / "__init__.py").write_text("")
    _git(repository, "init", "-q")
    work = repository / "user" / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / home))
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: None)
    monkeypatch.chdir(work)
    target = resolve(None, tmp_path / "cache")
    assert (target.path == str(repository.resolve())) is read
    assert (target.display == "<sample>") is not read


def test_explain_reads_the_checkout_rather_than_ask_for_a_release(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: None)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FetchError, match="sglang is not installed"):
        resolve(None, tmp_path / "cache", sample=False)
    monkeypatch.chdir(checkout / "python" / "sglang")
    target = resolve(None, tmp_path / "cache", sample=False)
    assert (target.path, target.display) == (str(checkout), str(checkout))
