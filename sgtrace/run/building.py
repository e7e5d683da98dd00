"""A start-up as its lines arrive: per rank, the target's and the draft's figures and pools; what the
splitter weighs (see :mod:`sgtrace.run.stages` for the steps and their order)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sgtrace.run.events import Event
from sgtrace.run.lines import LogLine
from sgtrace.run.messages import Kind, Phase, Pool
from sgtrace.run.stages import DRAFT, EARLY_DRAFT, LATE_DRAFT, LONG_STEPS, SCHEDULER, TARGET, Ended, Stage, began
from sgtrace.run.stages import position as _position

#: Other ranks' lines may trail a death by this many seconds, and the exception's own words come within them.
DEATH_S = 15.0
#: (value, line, rank) of one figure as it is read.
Found = tuple[float, int, str]


@dataclass
class Model:
    """One model's lines on one rank."""

    figures: dict[str, Found] = field(default_factory=dict)
    #: The furthest step logged, None for none.
    phase: Phase | None = None
    type: str = ""
    #: Captures that ended (a capture ends once a start-up).
    captures: set[str] = field(default_factory=set)
    #: Whether its KV pool line gave K and V apart (MHA) or one KV size (MLA); None before that line.
    split_kv: bool | None = None
    #: Its pools as the lines give them: (what, GB, tokens or None, line).
    pools: list[tuple[Pool, float, float | None, int]] = field(default_factory=list)
    #: The GB of its pools of each kind, added as each comes (a sum of every pool at each took time quadratic in
    #: the lines: 2,800 KV lines of one start-up, 1.4 s).
    sums: dict[Pool, float] = field(default_factory=dict)
    #: SGLang's clock at its last pool line (None without one, or without a clock).
    pool_at: float | None = None

    def reached(self, phase: Phase) -> bool:
        """Whether it logged *phase* or a later step."""
        return self.phase is not None and self.phase >= phase


@dataclass
class Rank:
    """What one rank of one start-up logged: the target's lines, then the draft's."""

    models: list[Model] = field(default_factory=lambda: [Model()])
    #: The last free memory it logged after the target's weights.
    left: Found | None = None
    #: The stage of that figure.
    left_stage: Stage | None = None

    def logged(self) -> bool:
        """Whether it logged a figure."""
        return self.left is not None or any(model.figures or model.pools for model in self.models)

    def seen(self, slot: int) -> Model | None:
        """Its target's or draft's lines, None if it logged none of that model."""
        return self.models[slot] if len(self.models) > slot else None

    def model(self, slot: int) -> Model:
        """Its target's or draft's lines (made on first use)."""
        while len(self.models) <= slot:
            self.models.append(Model())
        return self.models[slot]


@dataclass
class Building:
    """A start-up as its lines arrive."""

    first: LogLine
    begun_by: str
    args: dict[str, float | str | bool | None] = field(default_factory=dict)
    #: (line, the last field it holds whole) when the ``server_args=`` line is cut short.
    args_cut: tuple[int, str] | None = None
    ranks: dict[str, Rank] = field(default_factory=dict)
    ended: Ended = Ended.UNFINISHED
    #: The line of its death, if it died.
    death: int | None = None
    #: The death's own words (a memory verdict's, else the line's first words).
    death_text: str = ""
    #: Whether the death's line has no prefix to tie it to the server (a bare traceback: the server's, or a
    #: client's printed into the same stream).
    death_untied: bool = False
    #: A traceback with no prefix that was not its death after all (its start-up went on): (its line, the line
    #: the start-up went on at).
    outlived: tuple[int, int] | None = None
    ready: bool = False
    #: Whether, once its pool was sized, it answered a request of the machine itself (its warmup's): it was up
    #: though no ready line says so. Not a boundary's evidence (another server's traffic may be in the stream).
    served: bool = False
    #: The line of that request.
    served_at: int | None = None
    tokens: Found | None = None
    scheduler_left: Found | None = None
    #: (rank, seconds) of the scheduler's line.
    scheduler_at: tuple[str, float | None] | None = None
    died_at: float | None = None
    pid: str = ""
    #: The container or pod of its lines (docker compose's, kubectl's prefix).
    source: str = ""
    first_stamp: str = ""
    last_seconds: float | None = None
    latest_seconds: float | None = None
    #: The order its steps run in (the draft late, or early: see stages).
    order: tuple[Stage, ...] = LATE_DRAFT
    #: (stage, capture) -> when a rank was first there (an end line: its step began at the stage before).
    first_at: dict[tuple[Stage, str], float] = field(default_factory=dict)
    #: Why the lines cannot say for sure that all of it is one start-up.
    doubts: list[str] = field(default_factory=list)
    #: (stage, capture) -> the longest time a rank's load or capture that ends there took (elapsed=).
    took: dict[tuple[Stage, str], float] = field(default_factory=dict)
    command: str = ""
    version: tuple[str, int] | None = None
    #: The furthest step any rank logged, and the step of the line that began it (when a step began it).
    top: Stage | None = None
    first_stage: Stage | None = None
    #: The furthest step at which a rank logged free memory.
    last_stage: Stage | None = None
    #: SGLang's verdicts: quantity -> (value, line) (the fraction it chose, the profile it rejected...).
    verdicts: dict[str, tuple[float, int]] = field(default_factory=dict)
    #: Whether the log it is in runs newest first (read turned over).
    newest_first: bool = False

    @property
    def up(self) -> bool:
        """Whether it was up: its ready line, or its warmup answered (:attr:`served`)."""
        return self.ready or self.served

    def position(self, stage: Stage) -> int:
        """Where *stage* comes in this start-up's order."""
        return _position(self.order, stage)

    def top_position(self) -> int:
        """Where its furthest step comes (-1 before any)."""
        return -1 if self.top is None else self.position(self.top)

    def add(self, event: Event, slot: int) -> None:
        """File *event* here; *slot* is the model (TARGET, DRAFT) a step belongs to."""
        line = event.line
        self._clock(line)
        if line.pid and line.seconds is not None and not self.pid:
            self.pid = line.pid
        self.source = self.source or line.source
        kind = event.kind
        if self.ended.died and self.death is not None and self.went_on(event):
            self.outlived = (self.death, line.number)
            self.ended, self.death, self.death_text, self.died_at, self.death_untied = (
                Ended.UNFINISHED,
                None,
                "",
                None,
                False,
            )
        if event.step:
            self._step(event, slot)
        elif kind is Kind.SERVER_ARGS:
            self.args = event.arguments
            self.args_cut = (line.number, event.detail) if event.detail else None
        elif kind is Kind.COMMAND:
            self.command = self.command or event.detail
        elif kind is Kind.VERSION:
            self.version = (event.detail, line.number)
        elif kind is Kind.SCHEDULER:
            self._scheduler(event)
        elif kind is Kind.VERDICT:
            for name, value in event.figures.items():
                self.verdicts.setdefault(name, (value, line.number))
        elif kind is Kind.AVAIL and line.rank in self.ranks and not self.ready:  # once up: a weights' update, LoRA
            self.ranks[line.rank].left = (event.figures["left_gb"], line.number, line.rank)
        elif kind is Kind.SERVED:
            sized = self.tokens is not None or any(rank.models[TARGET].pools for rank in self.ranks.values())
            if not self.served and sized and not self.ended.died:
                self.served, self.served_at = True, line.number
        else:
            self._end(event)

    def went_on(self, event: Event) -> bool:
        """Whether *event* is this start-up going on after a traceback that was not its death: a traceback with no
        prefix to tie it to the server (a client's in the same stream: a notebook's earlier cell timing out)
        before the start-up logged any step, and then a step, from its process. A new launch shows its arguments
        (or its command, or a service start) before its steps."""
        line = event.line
        same = not self.pid or not line.pid or line.pid == self.pid
        return self.death_untied and self.top is None and event.step and same

    def _clock(self, line: LogLine) -> None:
        if line.seconds is None:
            return
        self.first_stamp = self.first_stamp or line.when
        self.last_seconds = line.seconds
        self.latest_seconds = max(self.latest_seconds or line.seconds, line.seconds)

    def _step(self, event: Event, slot: int) -> None:
        line = event.line
        assert event.phase is not None
        rank = self.ranks.setdefault(line.rank, Rank())
        model = rank.model(slot)
        stage = Stage(slot, event.phase)
        target = rank.models[TARGET]
        if (
            slot == DRAFT
            and event.phase <= Phase.LOAD_END
            and target.reached(Phase.LOAD_END)
            and not target.reached(Phase.POOL)
        ):
            self.order = EARLY_DRAFT  # the draft loads before the target's pool: a newer release
        if (
            slot == DRAFT
            and event.phase in (Phase.POOL, Phase.POOL_END)
            and model.phase is None
            and not target.reached(Phase.CAPTURE_BEGIN)
        ):
            self.order = EARLY_DRAFT  # a draft's pool before the target's graphs, its loading not shown: loaded early
        model.phase = event.phase if model.phase is None else max(model.phase, event.phase)
        model.type = model.type or event.model_type
        if self.top is None or self.position(stage) > self.position(self.top):
            self.top = stage
        if line is self.first:
            self.first_stage = stage
        if event.pool is not None:
            self._pool(model, event)
        for name, value in event.figures.items():
            if name == "left_gb" or event.pool is not None:
                continue
            if name == "graph_gb" and name in model.figures:  # a model captures more than one graph: add them up
                model.figures[name] = (model.figures[name][0] + value, line.number, line.rank)
            else:
                model.figures.setdefault(name, (value, line.number, line.rank))
        if event.phase is Phase.CAPTURE_END:
            model.captures.add(event.capture)
        if "left_gb" in event.figures and (slot == DRAFT or event.phase >= Phase.POOL_END):
            rank.left, rank.left_stage = (event.figures["left_gb"], line.number, line.rank), stage
            if self.last_stage is None or self.position(stage) >= self.position(self.last_stage):
                self.last_stage = stage
        if event.elapsed and stage in LONG_STEPS:
            key = (stage, event.capture)
            self.took[key] = max(self.took.get(key, 0.0), event.elapsed)
        if line.seconds is not None:
            for at, seconds in times(event, stage):
                self.first_at[at] = min(self.first_at.get(at, seconds), seconds)

    def _pool(self, model: Model, event: Event) -> None:
        """A pool of *model*: every pool is kept; its figures are the sums of its KV pools and of its states."""
        line, figures = event.line, event.figures
        model.pool_at = line.seconds if line.seconds is not None else model.pool_at
        if event.pool is Pool.KV:
            model.split_kv = event.split_kv if model.split_kv is None else model.split_kv
            gb = figures.get("kv_gb")
            if gb is not None:
                model.pools.append((Pool.KV, gb, figures.get("kv_tokens"), line.number))
                total = model.sums[Pool.KV] = model.sums.get(Pool.KV, 0) + gb
                if "swa_pool_gb" not in model.figures:
                    model.figures["kv_gb"] = (round(total, 2), line.number, line.rank)
            if "kv_tokens" in figures:
                model.figures.setdefault("kv_tokens", (figures["kv_tokens"], line.number, line.rank))
        elif event.pool is Pool.MAMBA:
            model.pools.append((Pool.MAMBA, figures["mamba_gb"], None, line.number))
            total = model.sums[Pool.MAMBA] = model.sums.get(Pool.MAMBA, 0) + figures["mamba_gb"]
            model.figures["mamba_gb"] = (round(total, 2), line.number, line.rank)
        elif event.pool is Pool.SWA_TOTAL:  # SGLang's own sum of the window and full pools: it stands for both
            model.figures.setdefault("swa_pool_gb", (figures["swa_pool_gb"], line.number, line.rank))
            model.figures["kv_gb"] = (figures["swa_pool_gb"], line.number, line.rank)
        for name in ("full_tokens", "swa_tokens"):
            if name in figures:
                model.figures.setdefault(name, (figures[name], line.number, line.rank))
        if "left_gb" in figures:
            model.figures.setdefault("avail_after_pool_gb", (figures["left_gb"], line.number, line.rank))

    def _scheduler(self, event: Event) -> None:
        line = event.line
        if self.tokens is None:
            self.tokens = (event.figures["max_total_num_tokens"], line.number, line.rank)
        if "left_gb" in event.figures:
            self.scheduler_left = (event.figures["left_gb"], line.number, line.rank)
        self.scheduler_at = (line.rank, line.seconds)

    def _end(self, event: Event) -> None:
        line = event.line
        if event.kind is Kind.READY:
            self.ready = True
            self.ended = Ended.READY
        elif event.kind is Kind.DEATH and not self.ended.died and not self.ended.stopped:
            if self.up and (event.message == "child_exit" or not (line.when or line.unit)):
                # once up: a process exiting is the server stopped (a notebook kills it), and a traceback with no
                # prefix to tie it to the server is a client's in the same stream (a CI test's failed assertion);
                # the server's own crash is stamped ("Scheduler hit an exception", "Received sigquit")
                if not self.ready:  # its warmup answered: up, as a ready line would have said
                    self.ended = Ended.READY
                return
            self.ended = Ended.READY_THEN_DIED if self.up else Ended.DIED
            self.death = line.number
            self.death_text = line.text[:300]
            self.death_untied = not (line.when or line.unit)
            self.died_at = line.seconds if line.seconds is not None else self.last_seconds
            for name, value in event.figures.items():
                self.verdicts.setdefault(name, (value, line.number))
        elif event.kind is Kind.DEATH and self.ended.died and event.figures and self._same_death(line):
            # the exception's own words after its traceback ("ValueError: Loaded weights leave no GPU memory..."):
            # the death's cause, with SGLang's figures
            self.death, self.death_text = line.number, line.text[:300]
            for name, value in event.figures.items():
                self.verdicts.setdefault(name, (value, line.number))
        elif event.kind is Kind.SERVICE_STOP and not self.ended.died:
            if event.message == "http_stopped" and not self.up:
                return  # another server's, maybe: only a server that is up is stopped by its HTTP server's end
            self.ended = Ended.READY_THEN_STOPPED if self.up else Ended.STOPPED

    def _same_death(self, line: LogLine) -> bool:
        """Whether *line*, a death with figures after the start-up died, says why it died: the first death named no
        figure, and the line has no stamp (a traceback's last line) or one within seconds of the death's."""
        if self.death is None or any(number == self.death for _, number in self.verdicts.values()):
            return False
        return line.seconds is None or self.died_at is None or abs(line.seconds - self.died_at) <= DEATH_S

    def figures_seen(self) -> bool:
        """Whether a model figure or the scheduler line was logged."""
        return self.tokens is not None or any(rank.logged() for rank in self.ranks.values())


def times(event: Event, stage: Stage) -> list[tuple[tuple[Stage, str], float]]:
    """((stage, capture), seconds) at which *event* shows its rank: an end line also where its step began."""
    seconds = event.line.seconds
    if seconds is None:
        return []
    found = [((stage, event.capture), seconds)]
    if event.elapsed and began(stage) != stage:
        found.append(((began(stage), event.capture), seconds - event.elapsed))
    return found


__all__ = ["DRAFT", "SCHEDULER", "TARGET", "Building", "Found", "Model", "Rank", "times"]
