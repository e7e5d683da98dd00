"""Fetching trees: local wheels offline, hostile archives, failures that leave nothing half-done."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace import fetch
from sgtrace.cli import cli
from sgtrace.cli.base import _Progress


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pkg/__init__.py", "")
        archive.writestr("pkg/runner.py", "class R:\n    def f(self):\n        self.max_total_num_tokens = 1\n")
        archive.writestr("pkg/data.bin", b"\x00" * 10)
        archive.writestr("../escape.py", "self.max_total_num_tokens = 2\n")
        archive.writestr("/absolute.py", "self.max_total_num_tokens = 3\n")
        link = zipfile.ZipInfo("pkg/link.py")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc/passwd")
    return path


def test_a_local_wheel_works_offline_and_only_its_plain_py_members_are_unpacked(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    cache = tmp_path / "cache"
    result = CliRunner().invoke(
        cli, ["find", "max_total_num_tokens", str(wheel), "--format", "json", "--cache-dir", str(cache)]
    )
    assert result.exit_code == 0, result.output
    writes = json.loads(result.stdout)["writes"]
    assert [(w["path"], w["owner"]) for w in writes] == [("pkg/runner.py", "pkg.runner.R")]
    [tree] = (cache / "releases").iterdir()
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == [
        "pkg/__init__.py",
        "pkg/runner.py",
    ]
    assert not (tmp_path / "escape.py").exists() and not (cache / "escape.py").exists()


def test_an_unfetchable_spec_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["find", "x", "sglang==0.0.0.999", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("sgtrace: error: cannot fetch sglang==0.0.0.999")
    assert not (tmp_path / "releases" / "sglang-0.0.0.999").exists()


def test_a_broken_download_or_unpack_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")

    def half_download(spec: str, target: Path) -> Path:
        target.mkdir(parents=True)
        (target / "partial.whl.part").write_bytes(b"PK")
        raise fetch.FetchError(f"cannot fetch {spec}: connection reset")

    monkeypatch.setattr(fetch, "_download", half_download)
    with pytest.raises(fetch.FetchError):
        fetch.release_dir("pkg==1.0", tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache" / "releases").iterdir()] == []

    def broken_copy(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fetch, "_copy", broken_copy)
    with pytest.raises(fetch.FetchError):
        fetch.wheel_dir(wheel, tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache" / "releases").iterdir()] == []


def test_progress_shows_only_after_a_second(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = iter([100.0, 100.5, 101.5, 101.6, 102.0])
    monkeypatch.setattr("sgtrace.cli.base.time.monotonic", lambda: next(clock))
    progress = _Progress()
    progress(1, 10)  # 0.5 s in: silent
    progress(2, 10)  # 1.5 s in: shown
    progress(3, 10)  # 0.1 s after the last: throttled
    progress(10, 10)  # done: shown, with a newline
    err = capsys.readouterr().err
    assert err == "\rsgtrace: parsed 2/10 files\rsgtrace: parsed 10/10 files\n"
