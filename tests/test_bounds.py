"""Every hostile file ends within its bound: an answer, or a per-file error that says which bound; never
a crash, a hang or output that grows faster than the input.

The time each takes is measured by ``bench/hostile.py`` (not here); the timeout below only tells a
hang from an answer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile_cases import CASES

#: Seconds after which a run counts as hung (every case ends in a few seconds on a 2-core machine).
HANG = 120

#: case -> (the line find's errors must hold, or None; the line caps's errors must hold, or None)
EXPECTED: dict[str, tuple[str | None, str | None]] = {
    "huge": ("too large: 11.9 MB (the bound is 10 MB; --max-file-size raises it)",) * 2,
    "parens": ("syntax error: too many nested parentheses",) * 2,
    "calls": ("syntax error: too many nested parentheses",) * 2,
    "indent": ("syntax error: too many levels of indentation",) * 2,
    "long_sum": (None, "nested more than 200 levels deep"),
    "sum_1000": (None, "nested more than 200 levels deep"),
    "attributes": (None, "nested more than 200 levels deep"),
    "subscripts": (None, "nested more than 200 levels deep"),
    "unary": (None, "nested more than 200 levels deep"),
    "ifexp": (None, "nested more than 200 levels deep"),
    "lambdas": (None, None),
    "elif_chain": (None, None),
    "elif_500": (None, None),
    "chain": (None, None),
    "many_writes": (None, None),
    "wide_call": (None, None),
    "long_line": (None, None),
}


def _run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgtrace", *arguments], capture_output=True, text=True, timeout=HANG, check=False
    )


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, make in CASES.items():
        tree = tmp_path_factory.mktemp(name)
        (tree / "pkg").mkdir()
        (tree / "pkg" / "runner.py").write_text(make())
        made[name] = tree
    return made


def test_every_case_is_listed() -> None:
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_file_ends_within_its_bound(name: str, trees: dict[str, Path], tmp_path: Path) -> None:
    tree = trees[name]
    size = (tree / "pkg" / "runner.py").stat().st_size
    for command, expected in zip((["find", "max_total_num_tokens"], ["caps"]), EXPECTED[name], strict=True):
        proc = _run([*command, str(tree), "--cache-dir", str(tmp_path / "cache")])
        assert proc.returncode in (0, 1), (command, proc.stderr[-2000:])  # never 2 (input) or 3 (internal)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("pkg/runner.py:")]
        if expected is None:
            assert errors == [], (command, errors)
        else:
            assert errors and any(expected in error for error in errors), (command, errors)
        # a finding's code is bounded, so output grows with the findings, not with their square
        writes = max(1, CASES[name]().count("self.max_total_num_tokens ="))
        assert len(proc.stdout) <= 4 * size + 2500 * writes, command


def test_the_depth_bound_can_be_raised(trees: dict[str, Path], tmp_path: Path) -> None:
    """A 1,000-term sum, which CPython compiles, is analysed with --max-depth 1000 (refused at 200)."""
    source = (trees["sum_1000"] / "pkg" / "runner.py").read_text().replace(" + a" * 1000, " + a" * 990)
    (tmp_path / "tree" / "pkg").mkdir(parents=True)
    (tmp_path / "tree" / "pkg" / "runner.py").write_text(source)
    proc = _run(["caps", str(tmp_path / "tree"), "--max-depth", "1000", "--no-cache", "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    assert '"category": "base"' in proc.stdout.replace('"category":"base"', '"category": "base"')


def test_the_file_size_bound_can_be_raised(trees: dict[str, Path]) -> None:
    proc = _run(["find", "max_total_num_tokens", str(trees["huge"]), "--max-file-size", "20MB", "--no-cache"])
    assert proc.returncode == 0, proc.stderr
    assert "pkg/runner.py" in proc.stdout
