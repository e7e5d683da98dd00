"""find's pass over a tree: an unchanged file is not read again, a changed one always is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import sgtrace.index.chunks
import sgtrace.index.findpass
from sgtrace.discover import discover
from sgtrace.index.chunks import index_tree
from sgtrace.index.findpass import RunOptions, scan_tree
from sgtrace.parse import read_file

OLD_NS = 1_600_000_000 * 10**9  # long before any manifest is written: trusted


def _tree(root: Path) -> None:
    (root / "a.py").write_text("class A:\n    def f(self):\n        self.max_total_num_tokens = 1\n")
    (root / "b.py").write_text("x = 1\n")
    for path in root.glob("*.py"):
        os.utime(path, ns=(OLD_NS, OLD_NS))


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths find's pass reads from now on (with or without the tree's digest)."""
    read: list[str] = []

    def spy(path: str) -> tuple[bytes, int, int]:
        read.append(path)
        return read_file(path)

    monkeypatch.setattr(sgtrace.index.findpass, "read_file", spy)
    monkeypatch.setattr(sgtrace.index.chunks, "read_file", spy)
    return read


def _writes(root: Path, cache: Path, digest: bool = False) -> tuple[list[int], bytes]:
    """The lines of the writes found; with *digest*, the pass of a graph (chunks) and the tree's digest."""
    options = RunOptions(jobs=1, cache_dir=cache)
    listing = discover(str(root))
    scan = (
        index_tree(listing, "max_total_num_tokens", options).scan
        if digest
        else scan_tree(listing, "max_total_num_tokens", options)
    )
    return [a.line for _, s in scan.files for a in s.accesses if a.kind == "assign"], scan.digest


def test_unchanged_files_are_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    first = _writes(root, cache, digest=True)
    read = _spy(monkeypatch)
    assert _writes(root, cache, digest=True) == first and read == []
    # a change of size, or of time alone, is seen
    (root / "a.py").write_text("class A:\n    def f(self):\n\n        self.max_total_num_tokens = 2\n")
    os.utime(root / "a.py", ns=(OLD_NS, OLD_NS))
    lines, digest = _writes(root, cache, digest=True)
    assert lines == [4] and digest != first[1] and read == [str(root / "a.py")]
    os.utime(root / "b.py", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    read.clear()
    _writes(root, cache)
    assert read == [str(root / "b.py")]


def test_a_file_changed_just_before_the_manifest_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    os.utime(root / "a.py")  # now: as recent as the manifest the next run writes
    _writes(root, cache)
    read = _spy(monkeypatch)
    _writes(root, cache)
    assert read == [str(root / "a.py")]


def test_a_damaged_manifest_is_read_past(tmp_path: Path) -> None:
    import json

    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    first = _writes(root, cache, digest=True)
    manifests = list((cache / "manifest").rglob("*.json"))
    assert len(manifests) == 2  # the query's, and the files' contents any query reuses
    for manifest in manifests:
        payload = json.loads(manifest.read_text())
        for entry in payload["data"]["files"].values():
            entry[3] = "not hex"
        manifest.write_text(json.dumps(payload))
    assert _writes(root, cache, digest=True) == first


def test_a_graph_rebuilt_after_one_change_sees_the_files_left_unread(tmp_path: Path) -> None:
    """The tree's index is built from every file, not only from those the manifest let the pass read."""
    from sgtrace.api import caps
    from sgtrace.model import TraceQuery
    from sgtrace.sources import Target

    root, cache = tmp_path / "t", tmp_path / "c"
    (root / "pkg").mkdir(parents=True)
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Mixin:\n    def init_pool(self, avail):\n"
        "        self.max_total_num_tokens = int(avail * self.mem_fraction_static)\n",
        "pkg/runner.py": "from pkg.base import Mixin\n\n\nclass Runner(Mixin):\n"
        "    def __init__(self, server_args):\n        self.mem_fraction_static = server_args.mem_fraction_static\n",
        "pkg/worker.py": "from pkg.runner import Runner\n\n\nclass Worker:\n    def __init__(self, runner: Runner):\n"
        "        self.max_total_num_tokens = runner.max_total_num_tokens\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
        os.utime(root / name, ns=(OLD_NS, OLD_NS))
    query, target = TraceQuery("max_total_num_tokens"), Target(str(root), "t")
    before = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    (root / "pkg" / "worker.py").write_text(files["pkg/worker.py"] + "\n")  # only this file is read again
    os.utime(root / "pkg" / "worker.py", ns=(OLD_NS, OLD_NS))
    after = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    fresh = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    # the knob is found only through Runner, the subclass the tree's index knows of
    assert [s.knobs for s in before.budget_sites] == [("server_args.mem_fraction_static",)]
    assert after.caps == fresh.caps and after.budget_sites == fresh.budget_sites


def _parsed(root: Path, cache: Path) -> int:
    return scan_tree(discover(str(root)), "max_total_num_tokens", RunOptions(jobs=1, cache_dir=cache)).stats["parsed"]


def test_a_file_added_keeps_what_was_learnt_of_the_others(tmp_path: Path) -> None:
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    assert _parsed(root, cache) == 1
    (root / "c.py").write_text("o.max_total_num_tokens = 3\n")
    assert _parsed(root, cache) == 1  # c.py only: a.py's scan is still known
    (root / "c.py").unlink()
    assert _parsed(root, cache) == 0


def test_a_file_touched_but_not_changed_is_not_parsed_again(tmp_path: Path) -> None:
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    first = _writes(root, cache)
    os.utime(root / "a.py", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert _parsed(root, cache) == 0 and _writes(root, cache) == first
    (root / "a.py").write_text("class A:\n    def f(self):\n        self.max_total_num_tokens = 2\n")
    assert _parsed(root, cache) == 1


def test_another_scope_of_the_same_tree_has_its_own_manifest(tmp_path: Path) -> None:
    from sgtrace.model import PathFilter

    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    _tree(root)
    narrow = RunOptions(jobs=1, cache_dir=cache, path_filter=PathFilter(exclude=("a.py",)))
    scan_tree(discover(str(root)), "max_total_num_tokens", RunOptions(jobs=1, cache_dir=cache))
    scan_tree(discover(str(root), narrow.path_filter), "max_total_num_tokens", narrow)
    assert len(list((cache / "manifest").rglob("*.json"))) == 2
    assert _parsed(root, cache) == 0
