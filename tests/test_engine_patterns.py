"""caps and trace on the engine-pattern fixtures (tests/fixtures/engine_patterns/EXPECTED.md).

Each fixture reproduces one form that other serving engines use; the budget
sites and caps below are EXPECTED.md's, located by their statements' text.
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from sgtrace.api import caps, trace
from sgtrace.index.findpass import RunOptions
from sgtrace.model import CapsResult, TraceQuery
from sgtrace.sources import Target

PATTERNS = Path(__file__).parent / "fixtures" / "engine_patterns"

#: fixture -> (budget sites and reserves as (file, text), caps as (file, text, category)).
EXPECTED: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str, str]]]] = {
    "type_executor": (
        [("executors.py", "usable = self.device_bytes * self.config.kv_fraction")],
        [("executors.py", "kv_blocks = int(usable // self.config.block_bytes)", "base")],
    ),
    "optional_worker": (
        [("workers.py", "budget = total * self.config.kv_fraction"), ("workers.py", "usable = budget - torch")],
        [
            ("workers.py", "usable = budget - torch", "reserve"),
            ("workers.py", "kv_blocks = int(usable // self.config.block_bytes)", "base"),
        ],
    ),
    "return_min_ranks": (
        [("planner.py", "available = int(free_bytes * self.config.kv_fraction)")],
        [
            ("planner.py", "kv_blocks = available // block_bytes", "base"),
            ("planner.py", "return min(per_rank_blocks)", "reduce"),
        ],
    ),
    "comprehension_budget": (
        [
            ("planner.py", "free = [m - state_bytes for m in free]"),
            ("planner.py", "free = [m - scratch for m in free]"),
            ("planner.py", "available = [int(m * self.config.kv_fraction) for m in free]"),
        ],
        [
            ("planner.py", "free = [m - state_bytes for m in free]", "reserve"),
            ("planner.py", "free = [m - scratch for m in free]", "reserve"),
            ("planner.py", "fewest = min(available)", "reduce"),
            ("planner.py", "self.kv_blocks = fewest // self.config.block_bytes", "base"),
        ],
    ),
    "early_return_override": (
        [("sizer.py", "available = int(free_bytes * self.config.kv_fraction)")],
        [
            ("sizer.py", "            return", "override"),
            ("sizer.py", "self.config.kv_blocks = available // self.config.block_bytes", "base"),
        ],
    ),
    "pp_split": (
        [("profiler.py", "usable = total * self.config.kv_fraction")],
        [
            ("profiler.py", "kv_blocks = int(usable // self.config.block_bytes)", "base"),
            ("cache.py", "self.kv_blocks //= parallel.pipeline_parallel_size", "split"),
            ("cache.py", "kv_blocks //= pipeline_parallel_size", "split"),
        ],
    ),
    "partial_factory": (
        [("workers.py", "usable = total * self.config.kv_fraction")],
        [("workers.py", "kv_blocks = int(usable // self.config.block_bytes)", "base")],
    ),
    "annotated_factory": (
        [("executors.py", "available = int(free_bytes * self.config.kv_fraction)")],
        [("executors.py", "kv_blocks = available // self.config.block_bytes", "base")],
    ),
    "class_registry": (
        [("workers.py", "usable = total * self.config.kv_fraction")],
        [("workers.py", "kv_blocks = int(usable // self.config.block_bytes)", "base")],
    ),
}

#: fixture -> (file, text of the pool's write in ServingEngine, file, text in the method applying the fraction).
CHAINS = {
    "type_executor": (
        "engine.py",
        "self.kv_blocks = self.executor.measure_blocks()",
        "executors.py",
        "return kv_blocks",
    ),
    "optional_worker": ("engine.py", "self.kv_blocks = self.driver.profile_blocks()", "workers.py", "return kv_blocks"),
    "partial_factory": ("engine.py", "self.kv_blocks = self.executor.available_blocks()", "workers.py", "return kv"),
    "annotated_factory": ("engine.py", "self.kv_blocks = self.executor.count_blocks()", "executors.py", "return kv"),
    "class_registry": ("engine.py", "self.kv_blocks = self.worker.profile_blocks()", "workers.py", "return kv_blocks"),
}


def _line(pattern: str, path: str, text: str) -> int:
    lines = (PATTERNS / pattern / path).read_text().splitlines()
    found = [i for i, line in enumerate(lines, 1) if line.startswith(text) or (text.strip() == text and text in line)]
    assert len(found) == 1, f"{path}: {text!r} found {len(found)} times"
    return found[0]


def _exact(graph: nx.DiGraph) -> nx.DiGraph:
    return nx.subgraph_view(graph, filter_edge=lambda u, v: not graph.edges[u, v].get("approximate"))


def _caps(pattern: str, strict: bool = False) -> CapsResult:
    root = PATTERNS / pattern
    query = TraceQuery("kv_blocks", strict_types=strict)
    return caps(query, "kv_fraction", Target(str(root), pattern), RunOptions(jobs=1, cache_dir=None))


@pytest.mark.parametrize("pattern", sorted(EXPECTED))
def test_budget_sites_and_caps_are_expected_md_s(pattern: str) -> None:
    sites, expected = EXPECTED[pattern]
    result = _caps(pattern)
    assert sorted((s.path, s.line) for s in result.budget_sites) == sorted(
        (path, _line(pattern, path, text)) for path, text in sites
    )
    found = {(c.path, c.line): c.category for c in result.caps}
    assert found == {(path, _line(pattern, path, text)): category for path, text, category in expected}
    assert not any(c.approximate for c in result.caps)


@pytest.mark.parametrize("pattern", sorted(EXPECTED))
def test_strict_types_gives_the_same_answer(pattern: str) -> None:
    assert _caps(pattern, strict=True).caps == _caps(pattern).caps


def test_the_early_return_override_names_its_guard_and_knob() -> None:
    [kept] = [c for c in _caps("early_return_override").caps if c.category == "override"]
    assert kept.guard == ("self.config.kv_blocks != 0",) and kept.knobs == ("self.config.kv_blocks",)


def test_the_split_of_the_attribute_keeps_its_guard() -> None:
    result = _caps("pp_split")
    [split] = [c for c in result.caps if c.path == "cache.py" and c.target == "kv_blocks" and c.line == 10]
    assert split.guard == ("self.kv_blocks",)


@pytest.mark.parametrize("pattern", sorted(CHAINS))
def test_trace_connects_the_engine_to_the_worker_without_guesses(pattern: str) -> None:
    engine_file, write, worker_file, returned = CHAINS[pattern]
    root = PATTERNS / pattern
    for strict in (False, True):
        graph = trace(
            TraceQuery("kv_blocks", strict_types=strict), Target(str(root), pattern), RunOptions(jobs=1, cache_dir=None)
        ).graph
        exact = _exact(graph)
        [sink] = [p for p in graph.nodes if p.path == engine_file and p.line == _line(pattern, engine_file, write)]
        [source] = [
            p
            for p in graph.nodes
            if p.kind == "return" and p.path == worker_file and p.line == _line(pattern, worker_file, returned)
        ]
        assert nx.has_path(exact, source, sink), f"{source} does not reach {sink}"


def test_a_comprehension_element_is_linked_to_its_iterable() -> None:
    root = PATTERNS / "comprehension_budget"
    graph = trace(TraceQuery("kv_blocks"), Target(str(root), "c"), RunOptions(jobs=1, cache_dir=None)).graph
    elements = [p for p in graph.nodes if p.kind == "local" and p.label.endswith(".m")]
    assert elements and not [p for p in graph.nodes if p.kind == "global" and p.label.endswith("m")]
    for element in elements:
        assert any(op == "element" and "free" in u.label for u, _, op in graph.in_edges(element, data="op"))


#: A receiver whose type nothing in the code tells (an unannotated parameter's factory).
UNKNOWN_RECEIVER = {
    "__init__.py": "",
    "engine.py": """\
from .workers import PoolConfig


class ServingEngine:
    def __init__(self, config: PoolConfig, backend) -> None:
        self.worker = backend.create(config)
        self.kv_blocks = self.worker.profile_blocks()
""",
    "workers.py": """\
import torch


class PoolConfig:
    kv_fraction: float = 0.9
    block_bytes: int = 1 << 20


class OnlyWorker:
    def __init__(self, config: PoolConfig) -> None:
        self.config = config

    def profile_blocks(self) -> int:
        _, total = torch.cuda.mem_get_info()
        usable = total * self.config.kv_fraction
        kv_blocks = int(usable // self.config.block_bytes)
        return kv_blocks
""",
}


def _unknown_receiver(tmp_path: Path, strict: bool) -> CapsResult:
    root = tmp_path / "guessed"
    root.mkdir(exist_ok=True)
    for name, text in UNKNOWN_RECEIVER.items():
        (root / name).write_text(text)
    query = TraceQuery("kv_blocks", strict_types=strict)
    return caps(query, "kv_fraction", Target(str(root), "guessed"), RunOptions(jobs=1, cache_dir=tmp_path / "cache"))


def test_an_unknown_receiver_is_guessed_by_method_name_and_marked_approximate(tmp_path: Path) -> None:
    from sgtrace.report import caps_json, caps_text

    result = _unknown_receiver(tmp_path, strict=False)
    [base] = result.caps
    assert (base.path, base.category, base.approximate) == ("workers.py", "base", True)
    assert [s.path for s in result.budget_sites] == ["workers.py"]
    assert json.loads(caps_json.render(result))["caps"][0]["approximate"] is True
    assert "base     kv_blocks in OnlyWorker.profile_blocks (approximate)" in caps_text.render(result)
    [sarif_result] = json.loads(caps_json.render_sarif(result))["runs"][0]["results"]
    assert sarif_result["properties"] == {"approximate": True}


def test_strict_types_turns_the_guess_off(tmp_path: Path) -> None:
    result = _unknown_receiver(tmp_path, strict=True)
    assert not result.caps and not result.budget_sites


def test_an_exact_cap_has_no_approximate_key_in_json() -> None:
    from sgtrace.report import caps_json

    assert all("approximate" not in c for c in json.loads(caps_json.render(_caps("pp_split")))["caps"])


@pytest.mark.parametrize(
    ("annotation", "names", "classes_of"),
    [
        ("Type[ExecutorBase]", ["ExecutorBase"], True),
        ("type[X] | None", ["X"], True),
        ("Optional[Type['Worker']]", ["Worker"], True),
        ("Optional[WorkerBase]", ["WorkerBase"], False),
        ("WorkerBase | None", ["WorkerBase"], False),
        ("Union[A, B]", ["A", "B"], False),
    ],
)
def test_annotations_name_their_classes(annotation: str, names: list[str], classes_of: bool) -> None:
    from sgtrace.graph.types import annotation_names, is_class_annotation

    assert annotation_names(annotation) == names
    assert is_class_annotation(annotation) is classes_of
