"""Release specs the registry does not hold, and specs mistyped (issue 18, item 5).

A registry of our own (a folder pip is pointed at, no index) holds ``pkgx`` 1.0 and 1.2 as wheels and
1.1 as an sdist only, ``pkgs`` as sdists only; pip answers about it as it answers about PyPI, and the
messages are read from pip's own error. One test asks the real registry about ``sglang==9.9.9``.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.cli import main
from sgtrace.registry import nearest, pip_versions, spec_hint, version_key
from sgtrace.sources import sample_tree
from tests import releases

Run = Callable[..., tuple[int, str, str]]
WRITE = "class R:\n    def f(self):\n        self.max_total_num_tokens = 1\n"


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


def _wheel(folder: Path, name: str, version: str) -> None:
    """A minimal wheel pip accepts: METADATA, WHEEL, RECORD, and one module writing the attribute."""
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{name}/runner.py", WRITE)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")


@pytest.fixture()
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A registry of our own, the only one pip may ask; the cache folder to fetch into."""
    folder = tmp_path / "registry"
    folder.mkdir()
    for version in ("1.0", "1.2"):
        _wheel(folder, "pkgx", version)
    (folder / "pkgx-1.1.tar.gz").write_bytes(b"not read: nothing asks for it")
    (folder / "pkgs-2.0.tar.gz").write_bytes(b"not read")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return tmp_path / "cache"


def _error(result: tuple[int, str, str], message: str) -> None:
    code, out, err = result
    assert code == 2 and out == "", (code, err)
    [line] = err.strip().splitlines()
    assert line == f"sgtrace: error: {message}", line


def test_our_registry_serves_a_wheel(sgtrace: Run, registry: Path) -> None:
    code, out, _ = sgtrace("find", "max_total_num_tokens", "pkgx==1.2", "--cache-dir", str(registry))
    assert code == 0 and "pkgx/runner.py\n  3:9 " in out


def test_a_version_that_is_an_sdist_only_says_so(sgtrace: Run, registry: Path) -> None:
    _error(
        sgtrace("find", "max_total_num_tokens", "pkgx==1.1", "--cache-dir", str(registry)),
        "cannot fetch pkgx==1.1: pkgx 1.1 is on the registry as an sdist only, with no wheel; sgtrace takes "
        "wheels only (building an sdist would run its code): pass a .whl or a directory",
    )
    assert not (registry / "releases" / "pkgx-1.1").exists()


def test_an_unknown_version_names_the_nearest_the_registry_has(sgtrace: Run, registry: Path) -> None:
    _error(
        sgtrace("find", "max_total_num_tokens", "pkgx==9.9", "--cache-dir", str(registry)),
        "cannot fetch pkgx==9.9: pkgx has no version 9.9 on the registry; nearest: 1.0, 1.2",
    )
    _error(
        sgtrace("find", "max_total_num_tokens", "pkgx==1.20", "--cache-dir", str(registry)),
        "cannot fetch pkgx==1.20: pkgx has no version 1.20 on the registry; nearest: 1.0, 1.2",
    )


def test_a_package_of_sdists_only_or_none_is_said(sgtrace: Run, registry: Path) -> None:
    _error(
        sgtrace("find", "x", "pkgs==1.0", "--cache-dir", str(registry)),
        "cannot fetch pkgs==1.0: pkgs has no version 1.0 on the registry; nearest: 2.0 (pkgs has sdists only: "
        "sgtrace takes wheels)",
    )
    _error(
        sgtrace("find", "x", "nosuchpkg==1.0", "--cache-dir", str(registry)),
        "cannot fetch nosuchpkg==1.0: the registry has no package named nosuchpkg",
    )
    _error(
        sgtrace("find", "x", "sglangg==1.0", "--cache-dir", str(registry)),
        "cannot fetch sglangg==1.0: the registry has no package named sglangg (did you mean sglang?)",
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("sglang=0.5.9", "sglang==0.5.9"),
        ("sglang>=0.5.9", "sglang==0.5.9"),
        ("sglang@0.5.9", "sglang==0.5.9"),
        ("vllm-0.6.6.post1", "vllm==0.6.6.post1"),
    ],
)
def test_a_mistyped_spec_gets_a_did_you_mean(sgtrace: Run, typed: str, meant: str) -> None:
    """``sglang=0.5.9`` said "no such file or directory"."""
    _error(sgtrace("caps", typed), f"no such file or directory: {typed} (did you mean the release {meant}?)")


def test_a_folder_spelt_like_a_spec_is_a_folder(sgtrace: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sglang-0.5.9").mkdir()
    (tmp_path / "sglang-0.5.9" / "m.py").write_text(WRITE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = sgtrace("find", "max_total_num_tokens", "sglang-0.5.9", "--no-cache")
    assert code == 0 and "m.py\n  3:9 " in out
    assert spec_hint("some/folder") == "" and spec_hint("build-2024") == ""


def test_a_file_that_is_not_python_is_not_a_tree(sgtrace: Run, tmp_path: Path) -> None:
    """A README given as the tree was parsed as Python and reported as a syntax error."""
    readme = tmp_path / "README.md"
    readme.write_text("# sgtrace\n\nself.max_total_num_tokens = 1\n")
    _error(sgtrace("caps", str(readme), "--no-cache"), f"not a directory or a Python file: {readme}")
    code, _, _ = sgtrace("caps", str(sample_tree()), "--no-cache")
    assert code == 0


def test_pips_list_of_versions_is_read_and_ordered_as_pep_440_orders_them() -> None:
    stderr = (
        "WARNING: Location 'file:///x' is ignored\n"
        "ERROR: Could not find a version that satisfies the requirement p==9 (from versions: 0.5.10, 0.5.9, "
        "0.5.10rc0, 0.5.10.post1, 0.5.0rc1, 0.5.0, 1.0.dev1)\nERROR: No matching distribution found for p==9\n"
    )
    versions = pip_versions(stderr)
    assert versions is not None
    assert sorted(versions, key=version_key) == [
        "0.5.0rc1", "0.5.0", "0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "1.0.dev1",
    ]  # fmt: skip
    assert nearest("0.5.10.post2", versions) == ["0.5.10", "0.5.10.post1", "1.0.dev1"]
    assert pip_versions("ERROR: ... (from versions: none)") == [] and pip_versions("ERROR: network") is None


@pytest.mark.release
def test_on_the_real_registry_an_unknown_version_names_the_newest(sgtrace: Run, tmp_path: Path) -> None:
    code, out, err = sgtrace("caps", "sglang==9.9.9", "--cache-dir", str(tmp_path / "cache"))
    if code == 2 and "has no version" not in err and not os.environ.get("CI"):
        pytest.skip(f"registry not reachable outside CI: {err.strip()}")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    found = re.fullmatch(
        r"sgtrace: error: cannot fetch sglang==9\.9\.9: sglang has no version 9\.9\.9 on the registry; "
        r"nearest: (\S+), (\S+)\n",
        err,
    )
    assert found is not None, err
    # the two newest releases: in order, the newer no older than the newest the tests read
    older, newer = (version_key(v) for v in found.groups())
    assert older < newer < version_key("9.9.9") and version_key(releases.NEWEST) <= newer, err
