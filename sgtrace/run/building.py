"""A start-up as its lines arrive: per rank, the target's and the draft's figures; what the splitter weighs.

A line's *stage* is where in a start-up it was logged: model * 10 + phase
(events.PHASES; the draft is model 1), the scheduler's line last (SCHEDULER_STAGE).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sgtrace.run.events import PHASES, Event
from sgtrace.run.lines import LogLine

TARGET, DRAFT = 0, 1
#: The stage of the scheduler's line: after every model's.
SCHEDULER_STAGE = 20
#: Stage at which a step that can take long ends -> what it is.
LONG_STEPS = {
    2: "the weights' loading",
    6: "the CUDA graphs' capture",
    12: "the draft's loading",
    16: "the draft's graphs",
}
#: (value, line, rank) of one figure as it is read.
Found = tuple[float, int, str]


@dataclass
class Model:
    """One model's lines on one rank."""

    figures: dict[str, Found] = field(default_factory=dict)
    #: The furthest phase logged (see events.PHASES), -1 for none.
    phase: int = -1
    type: str = ""
    #: Captures that ended (a target's capture ends once a start-up).
    captures: set[str] = field(default_factory=set)
    #: Whether its KV pool line gave K and V apart (MHA) or one KV size (MLA); None before that line.
    split_kv: bool | None = None


@dataclass
class Rank:
    """What one rank of one start-up logged: the target's lines, then the draft's."""

    models: list[Model] = field(default_factory=lambda: [Model()])
    #: The last free memory it logged after the target's weights.
    left: Found | None = None
    #: The stage of that figure.
    left_stage: int = -1

    def logged(self) -> bool:
        """Whether it logged a figure."""
        return self.left is not None or any(model.figures for model in self.models)


@dataclass
class Building:
    """A start-up as its lines arrive."""

    first: LogLine
    begun_by: str
    args: dict[str, float | str | bool | None] = field(default_factory=dict)
    ranks: dict[str, Rank] = field(default_factory=dict)
    ended: str = ""
    ready: bool = False
    tokens: Found | None = None
    scheduler_left: Found | None = None
    #: (rank, seconds) of the scheduler's line.
    scheduler_at: tuple[str, float | None] | None = None
    died_at: float | None = None
    pid: str = ""
    first_stamp: str = ""
    last_seconds: float | None = None
    latest_seconds: float | None = None
    #: (stage, capture) -> when a rank was first there (an end line: its step began at the stage before).
    first_at: dict[tuple[int, str], float] = field(default_factory=dict)
    #: Why the lines cannot say for sure that all of it is one start-up.
    doubts: list[str] = field(default_factory=list)
    #: (stage, capture) -> the longest time a rank's load or capture that ends there took (elapsed=).
    took: dict[tuple[int, str], float] = field(default_factory=dict)
    command: str = ""
    version: tuple[str, int] | None = None
    #: The furthest stage any rank logged.
    top_stage: int = -1
    #: The stage of the line that began the start-up, when a model's line began it (-1 otherwise).
    first_stage: int = -1
    #: The furthest stage at which a rank logged free memory.
    last_stage: int = -1
    #: Stage -> the least free memory a rank showed at it.
    free_low: dict[int, float] = field(default_factory=dict)
    #: Stage -> the most memory a line showed free (or taken by the pool) at it.
    need_high: dict[int, float] = field(default_factory=dict)
    #: Stage -> the least memory a line showed free (or taken by the pool) at it.
    seen_low: dict[int, float] = field(default_factory=dict)

    def add(self, event: Event, slot: int) -> None:
        """File *event* here; *slot* is the model (TARGET, DRAFT) a model event belongs to."""
        line = event.line
        self._clock(line)
        if line.pid and line.seconds is not None and not self.pid:
            self.pid = line.pid
        kind = event.kind
        if kind in PHASES:
            self._model_event(event, slot)
        elif kind == "server_args":
            self.args = event.arguments
        elif kind == "command":
            self.command = self.command or event.detail
        elif kind == "version":
            self.version = (event.detail, line.number)
        elif kind == "scheduler":
            self._scheduler(event)
        elif kind == "avail" and line.rank in self.ranks:
            self.ranks[line.rank].left = (event.figures["left_gb"], line.number, line.rank)
        else:
            self._end(event)

    def _clock(self, line: LogLine) -> None:
        if line.seconds is None:
            return
        self.first_stamp = self.first_stamp or line.when
        self.last_seconds = line.seconds
        self.latest_seconds = max(self.latest_seconds or line.seconds, line.seconds)

    def _model_event(self, event: Event, slot: int) -> None:
        line = event.line
        rank = self.ranks.setdefault(line.rank, Rank())
        while len(rank.models) <= slot:
            rank.models.append(Model())
        model = rank.models[slot]
        stage = slot * 10 + PHASES[event.kind]
        model.phase = max(model.phase, PHASES[event.kind])
        model.type = model.type or event.model_type
        if event.kind == "kv":
            model.split_kv = event.split_kv
        self.top_stage = max(self.top_stage, stage)
        if line is self.first:
            self.first_stage = stage
        for name, value in event.figures.items():
            if name == "left_gb":
                continue
            if name == "graph_gb" and name in model.figures:  # a draft captures more than one graph: add them up
                model.figures[name] = (model.figures[name][0] + value, line.number, line.rank)
            else:
                model.figures.setdefault(name, (value, line.number, line.rank))
        if event.kind == "capture_end":
            model.captures.add(event.capture.lower())
        if "left_gb" in event.figures and (slot == DRAFT or PHASES[event.kind] >= PHASES["pool_end"]):
            rank.left, rank.left_stage = (event.figures["left_gb"], line.number, line.rank), stage
            self.last_stage = max(self.last_stage, stage)
        self._remember(memory_claims(event, slot))
        if event.elapsed and stage in LONG_STEPS:
            key = (stage, event.capture.lower())
            self.took[key] = max(self.took.get(key, 0.0), event.elapsed)
        if line.seconds is not None:
            for at, seconds in times(event, stage):
                self.first_at[at] = min(self.first_at.get(at, seconds), seconds)

    def _remember(self, claims: list[tuple[int, float, bool]]) -> None:
        for stage, gb, free in claims:
            if free:
                self.free_low[stage] = min(self.free_low.get(stage, gb), gb)
            self.need_high[stage] = max(self.need_high.get(stage, gb), gb)
            self.seen_low[stage] = min(self.seen_low.get(stage, gb), gb)

    def _scheduler(self, event: Event) -> None:
        line = event.line
        if self.tokens is None:
            self.tokens = (event.figures["max_total_num_tokens"], line.number, line.rank)
        if "left_gb" in event.figures:
            self.scheduler_left = (event.figures["left_gb"], line.number, line.rank)
        self.scheduler_at = (line.rank, line.seconds)
        self._remember(memory_claims(event, TARGET))

    def _end(self, event: Event) -> None:
        line = event.line
        if event.kind == "ready":
            self.ready = True
            self.ended = "ready"
        elif event.kind == "death" and "died" not in self.ended:
            self.ended = ("ready, then " if self.ready else "") + f"died (line {line.number})"
            self.died_at = line.seconds if line.seconds is not None else self.last_seconds
        elif event.kind == "service_stop" and "died" not in self.ended:
            self.ended = "ready, then stopped" if self.ready else "stopped"

    def figures_seen(self) -> bool:
        """Whether a model figure or the scheduler line was logged."""
        return self.tokens is not None or any(rank.logged() for rank in self.ranks.values())


def times(event: Event, stage: int) -> list[tuple[tuple[int, str], float]]:
    """((stage, capture), seconds) at which *event* shows its rank: an end line also where its step began."""
    seconds = event.line.seconds
    if seconds is None:
        return []
    capture = event.capture.lower()
    found = [((stage, capture), seconds)]
    if event.elapsed and stage % 10 in (2, 6):
        found.append(((stage - 1, capture), seconds - event.elapsed))
    return found


def memory_claims(event: Event, slot: int) -> list[tuple[int, float, bool]]:
    """(stage, GB, whether it is free memory rather than a pool that needed it) of each memory figure of *event*."""
    figures = event.figures
    stage = SCHEDULER_STAGE if event.kind == "scheduler" else slot * 10 + PHASES[event.kind]
    claims = []
    if "avail_before_weights_gb" in figures:
        claims.append((stage, figures["avail_before_weights_gb"], True))
    if "avail_after_weights_gb" in figures:
        claims.append((stage, figures["avail_after_weights_gb"], True))
        if "weights_gb" in figures:  # before the weights: what they took on top
            claims.append((stage - 1, figures["avail_after_weights_gb"] + figures["weights_gb"], True))
    if "kv_gb" in figures:
        claims.append((stage, figures["kv_gb"], False))
    for name in ("avail_after_pool_gb", "left_gb"):
        if name in figures:
            claims.append((stage, figures[name], True))
    return claims
