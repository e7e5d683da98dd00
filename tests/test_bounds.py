"""Every hostile file ends within its bound: an answer, or a per-file error that says which bound; never
a crash, a hang or output that grows faster than the input.

The time each takes is measured by ``bench/hostile.py`` (not here); the timeout below only tells a
hang from an answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sgtrace.graph.slicer import HUB_SOURCES
from tests.hostile_cases import CASES, SHAPES

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


# -- the growing shapes: answered at their largest size, with a graph that grows as the code does --------------

#: shape -> the caps of its tree of size n.
SHAPE_CAPS = {
    "chained_targets": lambda n: 3,  # the budget's write, the min, and the chain (one statement)
    "chained_elsewhere": lambda n: 2,  # a.x = ... on a receiver of unknown type feeds nothing
    "inheritance_chain": lambda n: 2,
    "diamonds": lambda n: 3,  # and Top's min
    "mixin_methods": lambda n: n + 2,  # every method's min
    "writes_in_one_function": lambda n: n + 2,
    "wide_unpacking": lambda n: n + 2,  # every target takes the budget
    "call_fan": lambda n: 3,
    "long_operands": lambda n: 2,
    "property_chain": lambda n: 3,  # and the min with the last property
    "recursion": lambda n: 3,
    "import_cycle": lambda n: 3,
    "star_imports": lambda n: 3,
}
#: shape -> (a small size, three times it): the graph's edges must grow no faster than the code.
SHAPE_SIZES = {name: (20, 60) if name in ("diamonds", "call_fan") else (100, 300) for name in SHAPES}


def _write(tree: Path, files: dict[str, str]) -> Path:
    tree.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tree / name).write_text(text)
    return tree


def test_every_shape_is_listed() -> None:
    assert set(SHAPE_CAPS) == set(SHAPES)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_growing_shape_is_answered_at_its_largest_size(name: str, tmp_path: Path) -> None:
    make, largest = SHAPES[name]
    tree = _write(tmp_path / "tree", make(largest))
    proc = _run(["caps", str(tree), "--max-nodes", "1000000", "--format", "json", "--cache-dir", str(tmp_path / "c")])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(json.loads(proc.stdout)["caps"]) == SHAPE_CAPS[name](largest)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_growing_shape_makes_a_graph_that_grows_as_its_code(name: str, tmp_path: Path) -> None:
    make, _ = SHAPES[name]
    edges = []
    for n in SHAPE_SIZES[name]:
        tree = _write(tmp_path / str(n), make(n))
        proc = _run(["trace", "max_total_num_tokens", str(tree), "--max-nodes", "1000000", "--format", "json",
                     "--cache-dir", str(tmp_path / "c")])  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        edges.append(len(json.loads(proc.stdout)["links"]))
    assert edges[1] <= 3.3 * edges[0] + 20, edges  # n x n edges (a write to every read) would be nine times


@pytest.mark.parametrize("n", [HUB_SOURCES - 4, HUB_SOURCES + 24])
def test_writes_through_a_hub_are_the_same_caps(n: int, tmp_path: Path) -> None:
    """Past HUB_SOURCES writes, a class's attribute feeds its reads through one node: the caps are those
    of the writes, one by one, as below it."""
    files = SHAPES["mixin_methods"][0](n)
    tree = _write(tmp_path / "tree", files)
    proc = _run(["caps", str(tree), "--format", "json", "--cache-dir", str(tmp_path / "c")])
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = {(c["path"], c["line"], c["category"]) for c in json.loads(proc.stdout)["caps"]}
    lowered = [i + 1 for i, line in enumerate(files["mixin.py"].splitlines()) if "= min(" in line]
    budget = {("runner.py", 10, "base"), ("runner.py", 11, "min")}
    assert found == {("mixin.py", line, "min") for line in lowered} | budget


#: Every command that builds a slice, as it is given a tree (the tree's path replaces TREE).
SLICING = [
    ["trace", "max_total_num_tokens", "TREE", "--format", "json"],
    ["graph", "max_total_num_tokens", "TREE", "--dot"],
    ["graph", "max_total_num_tokens", "TREE", "--focus", "budget"],
    ["caps", "TREE", "--format", "json"],
    ["explain", "TREE", "--set", "avail=10", "--set", "total=20", "--set", "mem_fraction_static=0.5"],
    ["diff", "TREE", "TREE", "--format", "json"],
    ["check", "TREE", "--write-baseline", "BASELINE"],
    ["report", "TREE", "-o", "PAGE"],
]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_slicing_command_ends_on_a_growing_shape(name: str, tmp_path: Path) -> None:
    make, largest = SHAPES[name]
    tree = _write(tmp_path / "tree", make(min(largest, 1000)))
    names = {"TREE": str(tree), "BASELINE": str(tmp_path / "baseline.json"), "PAGE": str(tmp_path / "page.html")}
    for command in SLICING:
        arguments = [names.get(word, word) for word in command]
        proc = _run([*arguments, "--max-nodes", "1000000", "--cache-dir", str(tmp_path / "c")])
        if command[0] == "explain" and proc.returncode == 2:  # an input the formula needs that --set did not give
            assert proc.stderr.startswith("sgtrace: missing input"), proc.stderr[-2000:]
            continue
        assert proc.returncode in (0, 1), (command, proc.stderr[-2000:])
