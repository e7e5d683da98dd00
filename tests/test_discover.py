"""Discovery: which files, which module names, and what cannot be read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sgtrace.discover import RootError, module_name, walk
from sgtrace.model import FileError, SourceFile


def _files(root: Path) -> dict[str, str]:
    return {item.path: item.module for item in walk(str(root)) if isinstance(item, SourceFile)}


def _errors(root: Path) -> list[FileError]:
    return [item for item in walk(str(root)) if isinstance(item, FileError)]


def test_module_names_follow_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True)
    for path in (tmp_path / "pkg" / "__init__.py", pkg / "__init__.py", pkg / "mod.py", tmp_path / "top.py"):
        path.write_text("x = 1\n")
    assert _files(tmp_path) == {
        "pkg/__init__.py": "pkg",
        "pkg/sub/__init__.py": "pkg.sub",
        "pkg/sub/mod.py": "pkg.sub.mod",
        "top.py": "top",
    }
    # Rooted inside the package, names keep the package prefix.
    assert _files(tmp_path / "pkg" / "sub") == {"__init__.py": "pkg.sub", "mod.py": "pkg.sub.mod"}


def test_src_layout_and_namespace_packages() -> None:
    assert module_name(("src", "pkg", "mod.py"), []) == "pkg.mod"
    assert module_name(("ns", "mod.py"), []) == "ns.mod"
    assert module_name(("__init__.py",), ["pkg"]) == "pkg"


def test_single_file_root(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text("x = 1\n")
    assert _files(tmp_path / "one.py") == {"one.py": "one"}


def test_missing_root() -> None:
    with pytest.raises(RootError):
        list(walk("/no/such/place"))


def test_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.py").write_text("x = 1\n")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    assert _files(tmp_path) == {"a/m.py": "a.m"}
    assert [e.message for e in _errors(tmp_path)] == ["symlink loop: directory already visited"]


def test_dangling_link_and_fifo_are_errors(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone.py", tmp_path / "dangling.py")
    os.mkfifo(tmp_path / "pipe.py")
    errors = {e.path: e.message for e in _errors(tmp_path)}
    assert errors == {"dangling.py": "cannot read file: No such file or directory", "pipe.py": "not a regular file"}


def test_skips_caches_and_non_python(tmp_path: Path) -> None:
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("x = 1\n")
    assert _files(tmp_path) == {}
