"""The operator's figures: what each is, the range it must lie in, and those the others give.

An operator who has no log types what they read (``--set weights_gb=72.33``);
the figures combine as a log's lines do: the memory free before the weights is
what was free after them plus what they took. A value outside its range, or
figures that contradict each other, are refused with the reason (BadFigure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: Figures an operator can give with --set besides the formula's and ServerArgs' names: name -> what it is.
OPERATOR_FIGURES = {
    "avail_before_weights_gb": "GPU memory free before the weights were loaded, GB",
    "avail_after_weights_gb": "GPU memory free after the weights were loaded, GB",
    "weights_gb": "memory the weights took, GB",
    "kv_gb": "size of the KV pool, GB",
    "kv_tokens": "tokens in the KV pool",
    "avail_after_pool_gb": "GPU memory free after the pools, GB",
    "max_total_num_tokens": "the scheduler's pool size, tokens",
    "gpu_gb": "the card's memory (nvidia-smi's total), GB: not the memory free before the weights",
    "draft_weights_gb": "memory a speculative draft's weights took, GB (a release that loads the draft first "
    "sizes the pool after them)",
}
#: Rounding of figures logged to two decimals: what two of them may disagree by.
_ROUNDING_GB = 0.015


class BadFigure(Exception):
    """A figure out of its range, or figures that contradict each other."""


def written(value: object) -> str:
    """A value as the operator wrote it or the log printed it (``0``, not ``0.0``; ``2795207``, not ``2.79521e+06``:
    twelve significant digits, which a token count or a byte count never passes)."""
    return f"{value:.12g}" if isinstance(value, float) else str(value)


#: More memory, GB, than any GPU holds (the largest of 2026 hold 288 GB): a memory figure past it is no run's.
MAX_GPU_GB = 10_000
#: More tokens than any pool holds (as --want-tokens bounds them).
MAX_TOKENS = 10**12
#: Token counts: whole numbers from 0 to MAX_TOKENS.
_TOKENS = ("kv_tokens", "max_total_num_tokens")
#: Ranks of a parallel dimension: whole numbers from 1 to MAX_RANKS.
_RANKS = ("tp_size", "pp_size", "dp_size", "ep_size", "nnodes")
MAX_RANKS = 1 << 16
#: Figures a run prints as the difference of two free memories: below 0 where loading freed memory.
_DIFFERENCES = ("weights_gb", "draft_weights_gb")


def check(
    name: str, value: Any, budget: str, numeric: bool, door: str = "--set", key: str = "", printed: bool = False
) -> None:
    """BadFigure unless *value* of *name* is in range: finite, *budget* in (0, 1], memory from 0 to MAX_GPU_GB,
    tokens and ranks bounded whole numbers. Every door checks with it; the message names the *door* (the option or
    the log that gave the value) and the *key* there (*name* unless it is spelt otherwise). A figure *printed* by a
    run's own line may be a difference below 0 (the weights' 'mem usage=-3.87 GB': memory freed while loading)."""
    shown = f"{door} {key or name}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if name == budget or (numeric and value is not None):
            raise BadFigure(f"{shown}={value}: not a number")
        return
    if not math.isfinite(value):
        raise BadFigure(f"{shown}={value}: not a finite number")
    if name == budget and not 0 < value <= 1:
        raise BadFigure(f"{shown}={value:g}: a fraction of the GPU's memory, in (0, 1]")
    if name in OPERATOR_FIGURES and value < 0 and not (printed and name in _DIFFERENCES):
        raise BadFigure(f"{shown}={written(value)}: {OPERATOR_FIGURES[name].split(',')[0]} cannot be negative")
    if name in OPERATOR_FIGURES and name.endswith("_gb") and value > MAX_GPU_GB:
        raise BadFigure(f"{shown}={written(value)}: more than any GPU holds (over {MAX_GPU_GB} GB)")
    if name in _TOKENS and (value != int(value) or not 0 <= value <= MAX_TOKENS):
        raise BadFigure(f"{shown}={written(value)}: a whole number of tokens, from 0 to {MAX_TOKENS:.0e}")
    if name in _RANKS and (value != int(value) or not 1 <= value <= MAX_RANKS):
        raise BadFigure(f"{shown}={written(value)}: a whole number of ranks, from 1 to {MAX_RANKS}")


def complete(found: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """*found* with the memory figures the others give, and how each was worked out (name -> arithmetic)."""
    facts = dict(found)
    derived: dict[str, str] = {}
    before, after, weights = (number(facts.get(n)) for n in ("avail_before_weights_gb", "avail_after_weights_gb",
                                                                "weights_gb"))  # fmt: skip
    if before is None and after is not None and weights is not None:
        facts["avail_before_weights_gb"] = round(after + weights, 2)
        derived["avail_before_weights_gb"] = f"{after:g} free after the weights + {weights:g} they took"
    elif after is None and before is not None and weights is not None:
        facts["avail_after_weights_gb"] = round(before - weights, 2)
        derived["avail_after_weights_gb"] = f"{before:g} free before the weights - {weights:g} they took"
    elif weights is None and before is not None and after is not None and after <= before:  # else memory was freed
        facts["weights_gb"] = round(before - after, 2)
        derived["weights_gb"] = f"{before:g} free before the weights - {after:g} free after them"
    return facts, derived


def contradictions(facts: Mapping[str, Any], given: set[str]) -> None:
    """BadFigure when figures that include one the operator gave (*given*) contradict each other."""
    before, after, weights, kv, gpu = (
        number(facts.get(n))
        for n in ("avail_before_weights_gb", "avail_after_weights_gb", "weights_gb", "kv_gb", "gpu_gb")
    )
    pairs = [
        ("avail_after_weights_gb", after, "avail_before_weights_gb", before, "free after the weights"),
        ("weights_gb", weights, "avail_before_weights_gb", before, "the weights"),
        ("kv_gb", kv, "avail_after_weights_gb", after, "the KV pool"),
        ("avail_before_weights_gb", before, "gpu_gb", gpu, "free before the weights"),
    ]
    for small_name, small, big_name, big, what in pairs:
        if small is None or big is None or not {small_name, big_name} & given:
            continue
        if small > big + _ROUNDING_GB:
            raise BadFigure(
                f"{small_name}={written(small)} is more than {big_name}={written(big)}: {what} cannot exceed it"
                + (" (check which figure is which)" if {small_name, big_name} <= given else "")
            )


def card_only(facts: Mapping[str, Any]) -> bool:
    """Whether the card's size is given but not the memory free before the weights, nor what gives it."""
    return "gpu_gb" in facts and "avail_before_weights_gb" not in facts


def number(value: Any) -> float | None:
    """*value* as a float when it is a number (a bool is not one: ``True`` is no figure), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
