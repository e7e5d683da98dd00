"""A second opinion on the start-up's order, release by release: the table read by hand (tests/release_table.py),
a small reader of the scheduler's calls written here with ``ast`` (no sgtrace), and the evaluator
(``sgtrace explain --format json``'s ``order``) must agree on whether an EAGLE3 draft's weights load before
the target's KV pool is sized. ``bench/release_table.py`` runs the same on every release of the registry."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from packaging.version import Version

from sgtrace.cli import cli
from sgtrace.sources import points
from tests import releases
from tests.release_table import TABLE, row

pytestmark = pytest.mark.release

# The reader. It follows ``self.method()`` calls from Scheduler.__init__ in the order they run, an ``if`` on
# ``spec_algorithm.is_*()`` decided for an EAGLE3 run and any other ``if`` taken both ways, and notes where the
# target's worker is built, where the draft's is, and where the scheduler asks the target to allocate its pool.
# Where the scheduler never asks, the pool is sized while the target is built if ModelRunner.__init__ reaches
# self.init_memory_pool().

#: ``spec_algorithm`` predicates true for an EAGLE3 run; every other ``is_*`` is false for it.
EAGLE3 = frozenset({"is_eagle", "is_eagle3", "is_speculative"})
#: What the scheduler's statements do, by what they assign (a call's result) or call.
SCHEDULER = {"self.tp_worker": "target", "self.draft_worker": "draft", "self.tp_worker.alloc_memory_pool": "pool"}
#: The call of ModelRunner's own that sizes the pool while the runner is built (the older releases).
RUNNER = {"self.init_memory_pool": "pool"}

Methods = dict[str, ast.FunctionDef]


def methods(path: Path, name: str) -> Methods:
    """The methods of the module-level class *name* in the file at *path*."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    return {f.name: f for f in found.body if isinstance(f, ast.FunctionDef)}


def decided(test: ast.expr) -> bool | None:
    """An ``if`` on ``spec_algorithm.is_*()`` decided for an EAGLE3 run; None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = decided(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute):
        owner = test.func.value
        if isinstance(owner, ast.Attribute) and owner.attr == "spec_algorithm":
            return test.func.attr in EAGLE3
    return None


def events(body: list[ast.stmt], found: Methods, kinds: dict[str, str], depth: int = 0) -> Iterator[str]:
    """The kinds of *body*'s statements in the order they run, ``self.method()`` followed into *found*."""
    for stmt in body:
        taken = decided(stmt.test) if isinstance(stmt, ast.If) else None
        if isinstance(stmt, ast.If) and taken is not None:
            branch = stmt.body if taken else stmt.orelse
            yield from events(branch, found, kinds, depth)
            if branch and isinstance(branch[-1], ast.Return):
                return
        elif isinstance(stmt, (ast.If, ast.With, ast.For, ast.While, ast.Try)):
            for part in ("body", "handlers", "orelse", "finalbody"):
                for inner in getattr(stmt, part, []):
                    nested = inner.body if isinstance(inner, ast.ExceptHandler) else [inner]
                    yield from events(nested, found, kinds, depth)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _simple(stmt, found, kinds, depth)


def _simple(stmt: ast.stmt, found: Methods, kinds: dict[str, str], depth: int) -> Iterator[str]:
    calls = sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        name = ast.unparse(call.func)
        if name in kinds:
            yield kinds[name]
        elif name.startswith("self.") and name[5:] in found and depth < 8:
            yield from events(found[name[5:]].body, found, kinds, depth + 1)
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
        yield from (kinds[ast.unparse(t)] for t in stmt.targets if ast.unparse(t) in kinds)


def reader_draft_first(tree: Path) -> bool | None:
    """Whether the scheduler builds an EAGLE3 draft's worker before the target's pool is sized (None: unread)."""
    srt = tree / "sglang" / "srt"
    scheduler = methods(srt / "managers" / "scheduler.py", "Scheduler")
    order = list(events(scheduler["__init__"].body, scheduler, SCHEDULER))
    if "pool" not in order and "target" in order:
        runner = methods(srt / "model_executor" / "model_runner.py", "ModelRunner")
        if "pool" in events(runner["__init__"].body, runner, RUNNER):
            order[order.index("target")] = "pool"  # sized as the target's worker is built
    return "draft" in order[: order.index("pool")] if "pool" in order else None


_NEW = """
class Scheduler:
    def __init__(self):
        self.init_model_worker()

    def init_model_worker(self):
        self.tp_worker = TpModelWorker()
        if self.spec_algorithm.is_frozen_kv_mtp():
            self.tp_worker.alloc_memory_pool()
        {first}
        {second}

    def maybe_init_draft_worker(self):
        if self.spec_algorithm.is_none():
            self.draft_worker = None
            return
        self.draft_worker = DraftWorker()

    def init_memory_pools(self):
        self.tp_worker.alloc_memory_pool()
"""
_OLD = """
class Scheduler:
    def __init__(self):
        self.tp_worker = TpModelWorker()
        if self.spec_algorithm.is_eagle():
            self.draft_worker = EAGLEWorker()
        else:
            self.draft_worker = None
"""
_RUNNER_SOURCE = """
class ModelRunner:
    def __init__(self):
        self.initialize()

    def initialize(self):
        self.load_model()
        {sizes}
"""


@pytest.mark.parametrize(
    ("scheduler", "sizes", "expected"),
    [
        (_NEW.format(first="self.maybe_init_draft_worker()", second="self.init_memory_pools()"), "", True),
        (_NEW.format(first="self.init_memory_pools()", second="self.maybe_init_draft_worker()"), "", False),
        (_OLD, "self.init_memory_pool()", False),
        (_OLD, "pass", None),
    ],
    ids=["draft-then-pool", "pool-then-draft", "sized-in-the-target", "never-sized"],
)
def test_the_reader_on_snippets(tmp_path: Path, scheduler: str, sizes: str, expected: bool | None) -> None:
    """The frozen-KV MTP branch is no way in for an EAGLE3 run; the old shape sizes the pool in the target."""
    srt = tmp_path / "sglang" / "srt"
    files = {"managers/scheduler.py": scheduler, "model_executor/model_runner.py": _RUNNER_SOURCE}
    for name, source in files.items():
        (srt / name).parent.mkdir(parents=True)
        (srt / name).write_text(source.replace("{sizes}", sizes))
    assert reader_draft_first(tmp_path) is expected


# The evaluator.


def evaluator_order(tree: Path, speculative: bool = True) -> dict[str, Any] | None:
    """``sgtrace explain``'s ``order`` for an EAGLE3 run of the release at *tree* (None where it reads none);
    without *speculative*, for a release that has no speculative decoding, a run without a draft."""
    run = ["--set", "speculative_algorithm=EAGLE3"] if speculative else []
    arguments = ["explain", str(tree), "--format", "json", *run, "--set", "mem_fraction_static=0.88"]
    result = CliRunner().invoke(cli, arguments, catch_exceptions=False)
    assert result.stdout, result.stderr
    order: dict[str, Any] | None = json.loads(result.stdout)["order"]
    return order


def _key(version: str) -> Version:
    return Version(version)


#: The releases the suite fetches by name (tests/releases.py), the table's change points among them; the
#: history's span (every release from MIDDLE to NEWEST) is read by the tests that list it.
FETCHED = sorted({*releases.fixed_versions(), *(r.since for r in TABLE)}, key=_key)
CHANGE_POINTS = [r.since for r in TABLE]
#: The releases the suite fetches just before and just after each change point (the test below checks them).
NEIGHBOURS = (
    *("0.4.2.post2", "0.5.2", "0.5.8", "0.5.9", "0.5.10.post1", "0.5.12"),
    *("0.5.13.post1", "0.5.15", "0.5.15.post1", "0.5.17", "0.5.19"),
)
#: The evaluator costs 1-20 s a release: on these 21, 174 s of CPU (323 s on a loaded 2-core machine); on all 31
#: the suite fetches it would take about twice that. bench/release_table.py asks it on every release.
EVALUATED = sorted({*CHANGE_POINTS, *NEIGHBOURS, releases.NEWEST}, key=_key)


def _span() -> list[str]:
    return [point.label for point in points([releases.SPAN], releases.cache_dir())]


def _qualified(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    owner, name = qualname.split(".")
    found = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner)
    return next(f for f in found.body if isinstance(f, ast.FunctionDef) and f.name == name)


@pytest.mark.parametrize("version", CHANGE_POINTS)
def test_each_change_point_is_where_the_table_says(version: str) -> None:
    """The row's lines are in its release: the measuring call and the formula inside the sizing function."""
    held = row(version)
    assert held.since == version
    path, qualname = held.sizing.split(":")
    source = (releases.release(version) / path).read_text(encoding="utf-8")
    function = _qualified(ast.parse(source), qualname)
    lines = source.splitlines()
    for place in (held.measured, *held.formula):
        file, line = place.split(":")
        assert file == path and function.lineno <= int(line) <= (function.end_lineno or 0), place
    assert "get_available_gpu_memory(" in lines[_line(held.measured) - 1]
    terms = ("rest_memory", "slack_gb", "max_num_token", "mm_reservation_gb")
    assert held.formula and all(any(t in lines[_line(f) - 1] for t in terms) for f in held.formula)


def _line(place: str) -> int:
    return int(place.rsplit(":", 1)[1])


def test_the_table_goes_forward_and_the_suite_fetches_its_change_points() -> None:
    assert CHANGE_POINTS == sorted(CHANGE_POINTS, key=_key) and len(set(CHANGE_POINTS)) == len(CHANGE_POINTS)
    assert set(CHANGE_POINTS) <= set(releases.OTHERS)


def test_the_neighbours_are_the_fetched_releases_beside_each_change_point() -> None:
    fetched = sorted({*FETCHED, *_span()}, key=_key)
    places = [i + step for i, v in enumerate(fetched) if v in CHANGE_POINTS for step in (-1, 1)]
    beside = {fetched[i] for i in places if 0 <= i < len(fetched)}
    assert set(NEIGHBOURS) == beside - set(CHANGE_POINTS)


@pytest.mark.parametrize("version", FETCHED)
def test_the_reader_agrees_with_the_table(version: str) -> None:
    assert reader_draft_first(releases.release(version)) is row(version).draft_first


def test_the_reader_agrees_with_the_table_across_the_span() -> None:
    differ = {v: reader_draft_first(releases.release(v)) for v in _span()}
    assert {v: d for v, d in differ.items() if d is not row(v).draft_first} == {}


@pytest.mark.parametrize("version", EVALUATED)
def test_the_evaluator_agrees_with_the_table(version: str) -> None:
    """Its order's draft_first and its sizing function are the table's; an order it cannot read fails."""
    held = row(version)
    order = evaluator_order(releases.release(version), speculative=held.speculative)
    assert order is not None, f"sglang=={version}: the evaluator reads no order"
    assert (order["draft_first"], order["sizing"]) == (held.draft_first, held.sizing), order
