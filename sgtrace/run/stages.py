"""Where in a start-up a line was logged: a model's step (:class:`Stage`), the order the steps run in,
and how a start-up ended.

SGLang's model runner takes the same steps for the target and for a speculative draft
(:class:`~sgtrace.run.messages.Phase`). Older releases build the draft after the target's graphs
(LATE_DRAFT); newer ones load the draft right after the target's weights, then size both models'
pools, then capture both models' graphs (EARLY_DRAFT). A start-up's order is the late one until a
rank loads a draft before its target's pool.

Ranks move in step through the collectives of a start-up (the free-memory all-reduce that ends each
runner's distributed init, the one that sizes the target's pool, the warm-up passes of a capture):
while one rank still logs a step, no rank can have gone past the next such collective (:func:`barrier`).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from sgtrace.run.messages import Phase

TARGET, DRAFT = 0, 1


class Stage(NamedTuple):
    """One model's step."""

    #: TARGET or DRAFT (SCHEDULER's is its own).
    model: int
    #: The step.
    phase: Phase

    def __str__(self) -> str:
        return "the scheduler's line" if self == SCHEDULER else f"{_MODELS[self.model]} {self.phase.name.lower()}"


_MODELS = ("target", "draft", "scheduler")
#: The scheduler's line, after every model's step.
SCHEDULER = Stage(2, Phase.INIT)


def _steps(model: int, *phases: Phase) -> tuple[Stage, ...]:
    return tuple(Stage(model, phase) for phase in phases)


_LOADING = (Phase.INIT, Phase.LOAD_BEGIN, Phase.LOAD_END)
_POOLS = (Phase.POOL, Phase.POOL_END)
_GRAPHS = (Phase.CAPTURE_BEGIN, Phase.CAPTURE_END)
#: Older releases: the draft's runner starts after the target's graphs.
LATE_DRAFT: tuple[Stage, ...] = (
    *_steps(TARGET, *_LOADING, *_POOLS, *_GRAPHS), *_steps(DRAFT, *_LOADING, *_POOLS, *_GRAPHS), SCHEDULER,
)  # fmt: skip
#: Newer releases: both models' weights, then both models' pools, then both models' graphs.
EARLY_DRAFT: tuple[Stage, ...] = (
    *_steps(TARGET, *_LOADING), *_steps(DRAFT, *_LOADING), *_steps(TARGET, *_POOLS), *_steps(DRAFT, *_POOLS),
    *_steps(TARGET, *_GRAPHS), *_steps(DRAFT, *_GRAPHS), SCHEDULER,
)  # fmt: skip
#: Steps behind a collective: no rank logs them while another rank still logs a step before it.
_SYNCED = frozenset({*_steps(TARGET, Phase.LOAD_BEGIN, Phase.POOL, Phase.CAPTURE_END),
                     *_steps(DRAFT, Phase.LOAD_BEGIN, Phase.CAPTURE_END)})  # fmt: skip
#: Steps that end something that can take long (loading, capturing) -> what it is.
LONG_STEPS = {
    Stage(TARGET, Phase.LOAD_END): "the weights' loading",
    Stage(TARGET, Phase.CAPTURE_END): "the CUDA graphs' capture",
    Stage(DRAFT, Phase.LOAD_END): "the draft's loading",
    Stage(DRAFT, Phase.CAPTURE_END): "the draft's graphs",
}


def position(order: tuple[Stage, ...], stage: Stage) -> int:
    """Where *stage* comes in *order* (0 for the first step)."""
    return order.index(stage)


def barrier(order: tuple[Stage, ...], stage: Stage) -> int | None:
    """The position of the first step past the next collective after *stage* (None: none follows, or *stage*
    begins a graph: a model captures several, each begin after another's end)."""
    if stage.phase is Phase.CAPTURE_BEGIN:
        return None
    at = position(order, stage)
    return next((i for i in range(at + 1, len(order)) if order[i] in _SYNCED), None)


def began(stage: Stage) -> Stage:
    """The step an end line's operation began at (a weights' or graph's end: its begin); else the step itself."""
    if stage.phase in (Phase.LOAD_END, Phase.CAPTURE_END):
        return Stage(stage.model, Phase(stage.phase - 1))
    return stage


class Ended(enum.Enum):
    """How a start-up ended, as its lines show."""

    READY = "ready"
    READY_THEN_STOPPED = "ready, then stopped"
    READY_THEN_DIED = "ready, then died"
    DIED = "died"
    STOPPED = "stopped"
    #: Its scheduler printed the pool's size, and nothing after it is in the log.
    INITIALISED = "initialised (its scheduler line)"
    #: The log ends, or the next start-up begins.
    UNFINISHED = "unfinished"

    @property
    def ready(self) -> bool:
        """Whether it got ready (whatever came after)."""
        return self in (Ended.READY, Ended.READY_THEN_STOPPED, Ended.READY_THEN_DIED)

    @property
    def died(self) -> bool:
        """Whether it died."""
        return self in (Ended.DIED, Ended.READY_THEN_DIED)

    @property
    def stopped(self) -> bool:
        """Whether it was stopped (what its processes print as they end after that is no death)."""
        return self in (Ended.STOPPED, Ended.READY_THEN_STOPPED)
