"""explain weighs the causes where the log's pool and the formula's differ (issue 54, item 5): each explanation
the numbers allow, with its number, those the log supports first; a formula's own line is never its cap."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sgtrace.analyses.causes import weigh
from sgtrace.analyses.explain import Explanation, Reading, Step
from sgtrace.analyses.operator import Context
from sgtrace.cli import cli
from sgtrace.model import Cap
from sgtrace.report.operator_text import answer
from sgtrace.sources import sample_tree
from tests.journals import Spec, journal

#: One GPU: 78.40 GB free before the weights, 15.20 GB of weights, run at 0.6: a pool of 31.84 GB.
_RUN = Spec(ranks=1, fraction=0.6, before_gb=78.4, weights_gb=15.2, split_kv=True)


def _explain(tmp_path: Path, lines: list[str], *args: str) -> dict[str, Any]:
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, ["explain", "--log", str(log), "--format", "json", *args, str(sample_tree())])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_fraction_given_from_a_readme_is_weighed_against_the_one_the_lines_imply(tmp_path: Path) -> None:
    """The issue's case: the log does not show the run's fraction, the user gives another (--set 0.88): the
    fraction the lines imply (0.6) is the explanation the log supports, not a cap."""
    lines = [line for line in journal([_RUN]) if "server_args" not in line]
    data = _explain(tmp_path, lines, "--set", "mem_fraction_static=0.88")
    assert data["kv_budget_gb"] > data["observed_kv_gb"] + 20
    first = data["causes"][0]
    assert (first["why"], first["number"], first["supported"]) == ("fraction", 0.6, True)
    assert "not the 0.88 given (--set)" in first["words"]
    steps = {(step["path"], step["line"]) for step in data["steps"]}
    assert not any(f"{path}:{line} " in c["words"] for c in data["causes"] for path, line in steps)


def test_the_runs_own_fraction_is_not_put_in_doubt(tmp_path: Path) -> None:
    """With the run's fraction on its server_args line and the pool where it puts it, nothing differs to weigh."""
    data = _explain(tmp_path, journal([_RUN]))
    assert data["causes"] == []


def test_memory_that_came_back_while_the_pool_was_allocated_is_said_not_another_path(tmp_path: Path) -> None:
    """A unified-memory box: the pool 5 GB above the formula's, and 4.65 GB more free after it than the figures
    leave: memory moved (the log supports it), where the answer said 'another path sized it' as a fact."""
    lines = [
        line.replace("K size: 15.92 GB, V size: 15.92 GB", "K size: 18.42 GB, V size: 18.42 GB")
        for line in journal([_RUN])
    ]
    data = _explain(tmp_path, lines)
    first = data["causes"][0]
    assert (first["why"], first["number"], first["supported"]) == ("memory moved", 4.65, True)
    assert all(cause["why"] != "another path" for cause in data["causes"])
    assert "what the numbers allow: 4.65 GB more was free after the pool" in " ".join(data["answer"].split())


def test_a_formula_line_is_never_its_own_cap_where_nothing_else_explains_the_gap() -> None:
    """weigh finds nothing (the only caps that apply are the formula's own statement, its base write and a page
    rounding): the answer names none of them as the cap that bound, where it said 'a cap bound; it can be' them."""
    formula = Step("srt/memory.py", 10, "rest = avail - total * (1 - f)", "rest", 30.0)

    def cap(line: int, category: str) -> Cap:
        return Cap("srt/memory.py", line, None, "Runner.size", "max_total_num_tokens", category, (), (), "...")

    caps = ((cap(10, "reserve"), "applies", ""), (cap(20, "base"), "applies", ""), (cap(21, "round"), "unknown", ""))
    plain = Explanation({}, (formula,), 30.0, 20.0, None, None, caps, sized_at=(("srt/memory.py", 10),))
    # the formula's own line a min as well, its other operand the pool's tokens: still not the cap that bound
    bound = dataclasses.replace(plain, caps=((cap(10, "min"), "applies", ""),), bound=(("srt/memory.py", 10, "x"),))
    for result in (plain, bound):
        result = dataclasses.replace(result, causes=weigh([], "f", {}, {}, result, None, Reading()))
        assert result.causes == ()
        said = answer("f", result, Context((), 0, (), None, None))
        assert "10.00 GB below the formula's" in said and "nothing the numbers allow explains it" in said
        assert not any(f"srt/memory.py:{line}" in said for line in (10, 20, 21)), said
