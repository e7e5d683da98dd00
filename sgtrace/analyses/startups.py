"""A log split into start-ups, each with its figures per rank, the target's and the draft's apart.

A ``server_args=`` line or a service start (systemd's ``Started ...``) begins a
start-up. Within one rank the first model loaded is the target and a second one
(or one whose type in ``Load weight end`` is a draft's) is the speculative
draft. Free memory is the minimum over ranks, as SGLang itself takes it
(``get_available_gpu_memory(distributed=True)``); ranks whose figures differ by
more than DISAGREE_GB are reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgtrace.analyses.logs import (
    AVAIL,
    DEATH,
    DRAFT_GRAPH,
    LOAD_BEGIN,
    MODEL_TYPE,
    PATTERNS,
    READY,
    SCHEDULER_TOKENS,
    LogLine,
    kv_size,
    lines,
    server_args,
)

#: Two ranks whose memory figures differ by more than this many GB disagree.
DISAGREE_GB = 0.25
#: Model classes of speculative drafts, by the name SGLang's model files give them.
DRAFT_TYPE = re.compile(r"Eagle|NextN|MTP|Draft", re.IGNORECASE)
_SERVICE_UNITS = ("", "systemd", "init.scope")
_MIN_OVER_RANKS = ("avail_before_weights_gb", "avail_after_weights_gb", "avail_after_pool_gb")


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure read from the log."""

    #: Its value (GB, or tokens).
    value: float
    #: 1-based line number in the log.
    line: int
    #: The rank that logged it ("" for a log without rank prefixes).
    rank: str


@dataclass(frozen=True)
class StartUp:
    """One start-up of the server, as the log shows it."""

    #: 1-based, oldest first.
    index: int
    #: When it began, as the log spells it.
    started: str
    #: 1-based line where it began.
    first_line: int
    #: ready, died (with the line), stopped, or unfinished (the log ends or the next start-up begins).
    ended: str
    #: Whether its figures are whole: it got ready, or its KV pool was allocated and it did not die first.
    complete: bool
    #: The scalar server arguments it logged.
    server_args: dict[str, float | str | bool | None]
    #: The target model's figures (free memory: the minimum over ranks; others: the rank with the least).
    target: dict[str, Figure]
    #: The draft model's figures, empty without speculative decoding.
    draft: dict[str, Figure]
    #: Model classes: target, then draft if any.
    model_types: tuple[str, ...]
    #: Ranks seen.
    ranks: tuple[str, ...]
    #: (quantity, ((rank, value), ...)) for figures the ranks disagree on.
    disagreements: tuple[tuple[str, tuple[tuple[str, float], ...]], ...]
    #: The last free memory figure of the binding rank (what is left at the end).
    left: Figure | None
    #: The scheduler's pool size line.
    max_total_num_tokens: Figure | None


@dataclass
class _Rank:
    """What one rank of one start-up logged, per model (0 target, 1 draft)."""

    models: list[dict[str, Figure]] = field(default_factory=lambda: [{}])
    types: list[str] = field(default_factory=list)
    left: Figure | None = None


@dataclass
class _Building:
    first: LogLine
    args: dict[str, float | str | bool | None] = field(default_factory=dict)
    ranks: dict[str, _Rank] = field(default_factory=dict)
    ended: str = ""
    ready: bool = False
    tokens: Figure | None = None


def split(text: str) -> list[StartUp]:
    """The start-ups in *text*, oldest first."""
    building: list[_Building] = []
    for line in lines(text):
        arguments = server_args(line.text)
        starts_service = line.unit in _SERVICE_UNITS and not line.rank and line.text.startswith("Started ")
        if starts_service and not (line.unit == "" and line.when):
            building.append(_Building(line))
            continue
        if arguments is not None:
            if not building or building[-1].args or _seen_figures(building[-1]):
                building.append(_Building(line))
            building[-1].args = arguments
            continue
        if not building and any(pattern.search(line.text) for _, pattern in PATTERNS):
            building.append(_Building(line))  # figures without a start line: a log cut from a start-up
        if building:
            _read(building[-1], line)
    return [_finish(index, b) for index, b in enumerate(building, 1)]


def pick(runs: list[StartUp], wanted: int | None) -> int:
    """The 1-based start-up to explain: *wanted*, else the latest complete one, else the latest."""
    if wanted is not None:
        return wanted
    complete = [run.index for run in runs if run.complete]
    return complete[-1] if complete else runs[-1].index


def facts(run: StartUp) -> dict[str, float | str | bool | None]:
    """The inputs a start-up gives the formula: its server arguments and the target's figures."""
    found: dict[str, float | str | bool | None] = dict(run.server_args)
    found.update({name: figure.value for name, figure in run.target.items() if name != "graph_gb"})
    if run.max_total_num_tokens is not None:
        found["max_total_num_tokens"] = run.max_total_num_tokens.value
    return found


def _seen_figures(run: _Building) -> bool:
    return any(any(model for model in rank.models) for rank in run.ranks.values())


def _read(run: _Building, line: LogLine) -> None:
    if READY.search(line.text):
        run.ready = True
        run.ended = "ready"
    elif DEATH.search(line.text) and "died" not in run.ended:
        run.ended = ("ready, then " if run.ready else "") + f"died (line {line.number})"
    elif line.unit == "systemd" and line.text.startswith("Stopped ") and "died" not in run.ended:
        run.ended = "ready, then stopped" if run.ready else "stopped"
    rank = run.ranks.setdefault(line.rank, _Rank())
    _read_models(rank, line)
    tokens = SCHEDULER_TOKENS.search(line.text)
    if tokens and run.tokens is None:
        run.tokens = Figure(float(tokens.group(1)), line.number, line.rank)
    avail = AVAIL.search(line.text)
    if avail:
        rank.left = Figure(float(avail.group(1)), line.number, line.rank)


def _read_models(rank: _Rank, line: LogLine) -> None:
    """File the line's figures under the model it belongs to: a second load begins the draft's."""
    if LOAD_BEGIN.search(line.text) and "avail_before_weights_gb" in rank.models[-1]:
        rank.models.append({})
    kind = MODEL_TYPE.search(line.text)
    if kind:
        rank.types.append(kind.group(1))
        if DRAFT_TYPE.search(kind.group(1)) and len(rank.models) == 1 and not rank.models[0]:
            rank.models.insert(0, {})  # only the draft's lines are in the log: keep the target's slot empty
    model = rank.models[1] if DRAFT_GRAPH.search(line.text) and len(rank.models) > 1 else rank.models[-1]
    for name, pattern in PATTERNS:
        match = pattern.search(line.text)
        if match is None:
            continue
        value = float(match.group(1))
        if name == "graph_gb" and name in model:  # a draft captures more than one graph: add them up
            model[name] = Figure(model[name].value + value, line.number, line.rank)
        else:
            model.setdefault(name, Figure(value, line.number, line.rank))
    size = kv_size(line.text)
    if size is not None:
        model.setdefault("kv_gb", Figure(size, line.number, line.rank))


def _finish(index: int, run: _Building) -> StartUp:
    ranks = {name: rank for name, rank in run.ranks.items() if any(rank.models) or rank.left}
    binding = _binding_rank(ranks)
    target: dict[str, Figure] = dict(ranks[binding].models[0]) if binding is not None else {}
    models = ranks[binding].models if binding is not None else []
    draft: dict[str, Figure] = dict(models[1]) if len(models) > 1 else {}
    for name in _MIN_OVER_RANKS:
        figures = [rank.models[0][name] for rank in ranks.values() if name in rank.models[0]]
        if figures:
            target[name] = min(figures, key=lambda f: (f.value, f.line))
    complete = run.ready or (not run.ended.startswith("died") and "kv_gb" in target)
    types = tuple(ranks[binding].types) if binding is not None else ()
    return StartUp(
        index=index,
        started=run.first.when,
        first_line=run.first.number,
        ended=run.ended or "unfinished",
        complete=complete,
        server_args=run.args,
        target=target,
        draft=draft,
        model_types=types,
        ranks=tuple(sorted(ranks, key=_rank_order)),
        disagreements=_disagreements(ranks),
        left=ranks[binding].left if binding is not None else None,
        max_total_num_tokens=run.tokens,
    )


def _binding_rank(ranks: dict[str, _Rank]) -> str | None:
    """The rank whose free memory after the weights is least (the one the formula's minimum comes from)."""
    if not ranks:
        return None

    def key(name: str) -> tuple[float, tuple[int, ...]]:
        figure = ranks[name].models[0].get("avail_after_weights_gb")
        return (figure.value if figure else float("inf"), _rank_order(name))

    return min(ranks, key=key)


def _disagreements(ranks: dict[str, _Rank]) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    found = []
    names = sorted({name for rank in ranks.values() for name in rank.models[0]})
    for name in names:
        values = [(rank, r.models[0][name].value) for rank, r in ranks.items() if name in r.models[0]]
        spread = max(v for _, v in values) - min(v for _, v in values)
        if len(values) > 1 and spread > (0 if name == "kv_tokens" else DISAGREE_GB):
            found.append((name, tuple(sorted(values, key=lambda rv: _rank_order(rv[0])))))
    return tuple(found)


def _rank_order(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))
