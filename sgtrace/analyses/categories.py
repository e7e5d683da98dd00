"""The categories of a cap, with the reason each gives (one table, as vulture keeps its ERROR_CODES).

Apart from :mod:`sgtrace.analyses.caps`, which finds the caps, so that the renderers can name a category
without loading the graph library (a cached answer is rendered without it).
"""

from __future__ import annotations

#: Each category, and the one-line reason the text report gives for it.
CATEGORIES: dict[str, str] = {
    "base": "set from the profiled budget",
    "reserve": "subtracts an amount from the budget before it becomes tokens",
    "min": "lowered by min() against another quantity",
    "round": "floored to a multiple (page-size rounding)",
    "floor": "raised by max() to at least another quantity (the pool may then exceed the budget)",
    "reduce": "reduced across ranks (a min over per-rank values, or a distributed MIN read back with .item())",
    "split": "divided between pools or pipeline stages (by a ratio, or by a parallel size)",
    "override": "replaced, under a condition, by a value not derived from the budget",
}
