"""What a budget pays for besides the KV pool (issue 54, item 5): the shares the release's code takes out of it
first, read from its statements, and the log's line of each, or that it has none."""

from __future__ import annotations

import pytest

from sgtrace.analyses.evaluate import ASSUMED, Known, Unknown, Value
from sgtrace.analyses.explain import Explanation, Share, Step
from sgtrace.analyses.operator import read_runs
from sgtrace.analyses.shares import shares
from sgtrace.model import Cap
from sgtrace.run.messages import Pool

_FORMULA = Step("srt/mixin.py", 64, "rest_memory = post - pre * (1 - self.mem_fraction_static)", "rest_memory", 12.28)
#: A hybrid model's start-up (corpus log 091's lines, one rank): its Mamba state and KV pool.
_LINES = [
    "[2026-05-25 17:43:21 TP0] Load weight begin. avail mem=31.49 GB",
    "[2026-05-25 17:43:33 TP0] Load weight end. elapsed=12.03 s, type=Qwen3_5ForConditionalGeneration, quant=awq,"
    " bits=4, avail mem=17.00 GB, mem usage=14.49 GB.",
    "[2026-05-25 17:43:33 TP0] Mamba Cache is allocated. max_mamba_cache_size: 40, conv_state size: 0.11GB,"
    " ssm_state size: 5.77GB ",
    "[2026-05-25 17:43:33 TP0] KV Cache is allocated. #tokens: 422310, K size: 3.22 GB, V size: 3.22 GB",
    "[2026-05-25 17:43:33 TP0] Memory pool end. avail mem=4.62 GB",
]


def _cap(line: int, category: str, code: str, function: str = "Mixin.handle_max_mamba_cache") -> Cap:
    return Cap("srt/mixin.py", line, None, function, "total_rest_memory", category, (), (), code)


def _shares(
    caps: list[tuple[Cap, str, str]], lines: list[str], worked: dict[str, Value] | None = None
) -> tuple[Share, ...]:
    result = Explanation({}, (_FORMULA,), 12.28, None, None, None, tuple(caps), sized_at=(("srt/mixin.py", 64),))
    resolve = (lambda name, path, line: (worked or {}).get(name, Unknown((name,)))) if worked is not None else None
    return shares(result, read_runs("\n".join(lines) + "\n")[0], resolve)


@pytest.mark.parametrize(
    ("cap", "status", "mamba_line", "expected"),
    [
        # the run's facts say it runs; the log shows its pool, or has no line of it
        (_cap(131, "reserve", "return total_rest_memory - mamba_state_memory"), "applies", True,
         ("mamba_state_memory", Pool.MAMBA, 3, 5.88)),
        (_cap(131, "reserve", "return total_rest_memory - mamba_state_memory"), "applies", False,
         ("mamba_state_memory", Pool.MAMBA, None, None)),
        # undecided by the facts: a share only where the log's line of its pool says it ran
        (_cap(131, "reserve", "return total_rest_memory - mamba_state_memory"), "unknown", True,
         ("mamba_state_memory", Pool.MAMBA, 3, 5.88)),
        (_cap(131, "reserve", "return total_rest_memory - mamba_state_memory"), "unknown", False, None),
        (_cap(131, "reserve", "return total_rest_memory - mamba_state_memory"), "not reached", True, None),
        # a fixed reserve: no pool the log prints a line of
        (_cap(40, "reserve", "available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)", "Pool.size"),
         "applies", True, ("self._fixed_overhead_bytes", None, None, None)),
        # a min is no share, nor is the formula's own statement
        (_cap(90, "min", "total_rest_memory = min(total_rest_memory, cap)"), "applies", True, None),
        (_cap(64, "reserve", "rest_memory = post - pre * (1 - self.mem_fraction_static)"), "applies", True, None),
    ],
)  # fmt: skip
def test_a_share_is_what_the_code_takes_out_first_with_the_logs_line_of_it(
    cap: Cap, status: str, mamba_line: bool, expected: tuple[str, Pool | None, int | None, float | None] | None
) -> None:
    lines = _LINES if mamba_line else [line for line in _LINES if "Mamba" not in line]
    found = _shares([(cap, status, "")], lines)
    assert [(s.what, s.pool, s.shown, s.gb) for s in found] == ([expected] if expected else [])


_ASSUMED_AWAY = f"self.mambaish_config is not None is false: decided by model_type assumed 'x' ({ASSUMED})"


def test_a_share_decided_against_by_an_assumption_is_one_the_logs_line_says_ran() -> None:
    """0.5.23 on corpus log 035: the model's type assumed from its architecture's name says it has no Mamba layers,
    the log's Mamba line says it has; of the function's four statements, the last (what it leaves) is the share."""
    caps = [
        (_cap(3324, "reserve", "total_rest_memory = total_rest_memory - intermediate_size / (1 << 30)"), "not reached",
         _ASSUMED_AWAY),
        (_cap(3409, "reserve", "return total_rest_memory - mamba_state_memory"), "not reached", _ASSUMED_AWAY),
        # decided false by the run's own facts: no share, whatever the log shows
        (_cap(90, "reserve", "total_rest_memory = total_rest_memory - spec", "Mixin.handle_mamba_spec"),
         "not reached", "not self.spec_algorithm.is_none() is false"),
    ]  # fmt: skip
    assert [(s.what, s.line, s.shown) for s in _shares(caps, _LINES)] == [("mamba_state_memory", 3409, 3)]
    assert _shares(caps, [line for line in _LINES if "Mamba" not in line]) == ()


def test_a_share_the_code_works_out_to_nothing_is_none() -> None:
    """0.5.23's DefaultPoolConfigurator takes out a sharded pool's scratch, 0 bytes unless the pool is sharded."""
    cap = _cap(640, "reserve", "available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)", "Pool.size")
    assert _shares([(cap, "applies", "")], _LINES, {"self._fixed_overhead_bytes": Known(0)}) == ()
    assert len(_shares([(cap, "applies", "")], _LINES, {})) == 1  # not worked out: it may take something
