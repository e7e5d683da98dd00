"""A log split into start-ups, each with its figures per rank, the target's and the draft's apart.

Operators paste what a grep left of a journal, so a start-up is told from the
next by every signal a subset of its lines can still carry (see
:mod:`sgtrace.run.boundaries`): a service start, a ``server_args=`` line, a
new process id, SGLang's own time stamps (a gap, or time going back), a rank
that logs again what it logged already, lines after the server got ready, died
or printed its scheduler line. A figure is filed under the start-up and the
model (target or draft) its line belongs to, never under another.

Free memory is the minimum over ranks, as SGLang takes it
(``get_available_gpu_memory(distributed=True)``); ranks whose figures differ by
more than DISAGREE_GB are reported. A figure a line implies is worked out: the
free memory before the weights is ``avail mem`` + ``mem usage`` of the same
``Load weight end``; what is left at the end is the last free memory the
binding rank logged after its pool, else the scheduler's ``available_gpu_mem``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain, islice, pairwise

from sgtrace.run.boundaries import UNSURE, boundary, doubt, slot_of
from sgtrace.run.building import DRAFT, TARGET, Building, Found, Model, Rank
from sgtrace.run.events import Event, classify
from sgtrace.run.lines import LogLine, lines
from sgtrace.run.messages import QUANTITIES, Kind
from sgtrace.run.stages import EARLY_DRAFT, Ended

#: Two ranks whose memory figures differ by more than this many GB disagree.
DISAGREE_GB = 0.25
#: Start-ups kept in memory: the latest ones (a crash loop of months cannot fill memory).
MAX_KEPT = 1000
#: Kinds of event that can begin the first start-up of a log (and every step).
_BEGINS = frozenset({Kind.SERVICE_START, Kind.SERVER_ARGS, Kind.COMMAND, Kind.SCHEDULER})
#: Verdicts and deaths outside any start-up kept to name (the first few).
_UNFILED = 3
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
    #: When it began, as the log spells it (SGLang's own stamp when the line that began it has none).
    started: str
    #: 1-based line where it began.
    first_line: int
    #: How it ended, as words: ready, died (with the line), stopped, initialised (its scheduler's line,
    #: nothing after it), or unfinished (the log ends or the next start-up begins).
    ended: str
    #: Whether its figures are whole: it got ready, or its KV pool was allocated (or its scheduler printed
    #: the pool's size) and it did not die first.
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
    #: What is left at the end: the binding rank's last free memory after its pool, else the scheduler's.
    left: Figure | None
    #: The scheduler's pool size line.
    max_total_num_tokens: Figure | None
    #: What told it from the start-up before ("" for the first): "a server_args= line", "a gap of 21 minutes"...
    begun_by: str = ""
    #: Target figures worked out from others of the same line (avail_before_weights_gb from a Load weight end).
    derived: tuple[str, ...] = ()
    #: The arguments of a launch command the log shows (``python -m sglang.launch_server ...``), "" if none.
    command: str = ""
    #: (version, line) of the SGLang version the log names in it or before it, if it names one.
    version: tuple[str, int] | None = None
    #: Why the lines cannot say for sure which of them belong to it (a filtered log's gaps), empty if they can.
    doubts: tuple[str, ...] = ()
    #: How it ended.
    end: Ended = Ended.UNFINISHED
    #: The line of its death and its words, if it died.
    death: tuple[int, str] | None = None
    #: SGLang's own verdicts: quantity -> figure (mem_fraction_static it chose, the profiled pool it rejected,
    #: the fraction a death says was needed...).
    verdicts: dict[str, Figure] = field(default_factory=dict)
    #: The target's pools, then the draft's: (model, what, GB, tokens or None, line), on the binding rank.
    pools: tuple[tuple[str, str, float, float | None, int], ...] = ()
    #: Whether the draft was loaded before the target's pools (a newer release's order).
    draft_first: bool = False
    #: Why a figure of its lines is not taken as it reads (the free memory growing while the weights loaded).
    cautions: tuple[str, ...] = ()


def split(log: str | Iterable[LogLine]) -> list[StartUp]:
    """The start-ups of a log (its text, or its cleaned lines), oldest first; at most MAX_KEPT, the latest."""
    return split_log(log)[0]


def split_log(log: str | Iterable[LogLine]) -> tuple[list[StartUp], list[Event]]:
    """The start-ups of a log (see :func:`split`), and the verdicts and deaths of SGLang's that no start-up
    took (a log at ``--log-level warning`` shows them but none of a start-up's lines)."""
    kept: deque[StartUp] = deque(maxlen=MAX_KEPT)
    current: Building | None = None
    early: list[Event] = []  # a version named before the first start-up
    unfiled: list[Event] = []
    count = 0
    newest_first, in_order = _in_time_order(lines(log) if isinstance(log, str) else log)
    for line in in_order:
        event = classify(line)
        if event is None:
            continue
        if current is None and event.kind not in _BEGINS and not event.step and not _refusal(event):
            early += [event] if event.kind in (Kind.VERSION, Kind.VERDICT) else []
            unfiled += [event] if event.kind in (Kind.VERDICT, Kind.DEATH) and len(unfiled) < _UNFILED else []
            continue
        reason, slot = boundary(current, event) if current is not None else ("", None)
        if current is None or reason:
            if current is not None:
                count += _file(kept, count + 1, current)
            named = current.version if current is not None else None  # a version named earlier still holds
            current = Building(line, reason.removeprefix(UNSURE), version=named, newest_first=newest_first)
            if reason.startswith(UNSURE):
                current.doubts.append(f"it may begin before line {line.number}: {current.begun_by}")
            for before in early:
                current.add(before, 0)
            early, slot = [], slot_of(current, event)
        elif doubted := doubt(current, event, slot):
            current.doubts.append(doubted)
        current.add(event, slot or 0)
    if current is not None:
        _file(kept, count + 1, current)
    return list(kept), [] if kept else unfiled


#: Lines read to tell a log pasted newest first (a log viewer's order) from one in the order it was written.
_ORDER_PEEK = 2000


def _in_time_order(log: Iterable[LogLine]) -> tuple[bool, Iterator[LogLine]]:
    """(whether the log runs newest first, its lines oldest first): SGLang's stamps going down far more often than
    up among its first lines (ranks interleave a little, start-ups pasted in any order each go up) turn it over."""
    lines = iter(log)
    head = list(islice(lines, _ORDER_PEEK))
    stamps = [line.seconds for line in head if line.seconds is not None]
    downs = sum(1 for a, b in pairwise(stamps) if b < a)
    ups = sum(1 for a, b in pairwise(stamps) if b > a)
    if downs >= 2 and downs > 3 * ups:
        return True, reversed([*head, *lines])
    return False, chain(head, lines)


def _refusal(event: Event) -> bool:
    """Whether *event* is SGLang refusing a start-up with the fraction it ran (``Loaded weights leave no GPU memory
    ... under --mem-fraction-static=0.94``): a start-up of its own, though none of its lines came before it."""
    return event.kind is Kind.DEATH and "mem_fraction_static" in event.figures


def _file(kept: deque[StartUp], index: int, run: Building) -> int:
    """Keep *run* as start-up *index* (1 is returned), or, when it is a launch command no line of a start-up
    follows (a harness printing the command it ran after the server's lines), say so of the start-up before it
    (0: it is none of its own)."""
    empty = run.begun_by == "a launch command" and not (
        run.figures_seen() or run.args or run.ready or run.ended is not Ended.UNFINISHED or run.verdicts
    )
    if not empty or not kept:
        kept.append(_finish(index, run))
        return 1
    before = kept[-1]
    again = " (the same as its own)" if run.command and run.command == before.command else ""
    note = f"line {run.first.number} is a launch command{again} that no line of a start-up follows: not one of its own"
    kept[-1] = replace(before, doubts=(*before.doubts, note))
    return 0


def pick(runs: list[StartUp], wanted: int | None) -> int:
    """The 1-based start-up to explain: *wanted*, else the latest complete one, else the latest."""
    if wanted is not None:
        return wanted
    complete = [run.index for run in runs if run.complete]
    return complete[-1] if complete else runs[-1].index


def weights(figures: Mapping[str, Figure]) -> Figure | None:
    """A model's weights: its load's ``mem usage``, else the free memory before its load less the free memory after
    it (on the line after it), None when neither is logged or the free memory grew."""
    if "weights_gb" in figures:
        return figures["weights_gb"]
    before, after = figures.get("avail_before_weights_gb"), figures.get("avail_after_weights_gb")
    if before is None or after is None or after.value > before.value:
        return None
    return Figure(round(before.value - after.value, 2), after.line, after.rank)


def fraction(run: StartUp) -> float | str | bool | None:
    """The mem_fraction_static the start-up ran with: the one SGLang chose (a multimodal model's), else the one
    its server_args asked for."""
    chosen = run.verdicts.get("mem_fraction_static")
    return chosen.value if chosen is not None else run.server_args.get("mem_fraction_static")


def facts(run: StartUp) -> dict[str, float | str | bool | None]:
    """The inputs a start-up gives the formula: its server arguments, SGLang's own verdicts (the fraction
    it chose wins over the one asked for) and the target's figures. ``kv_gb`` is every pool the budget
    pays for: the KV pools and the state of Mamba layers."""
    found: dict[str, float | str | bool | None] = dict(run.server_args)
    chosen = fraction(run)
    if chosen is not None:
        found["mem_fraction_static"] = chosen
    found.update({name: figure.value for name, figure in run.target.items() if name not in _NOT_INPUTS})
    if "mamba_gb" in run.target and "kv_gb" in run.target:
        found["kv_gb"] = round(run.target["kv_gb"].value + run.target["mamba_gb"].value, 2)
    if run.max_total_num_tokens is not None:
        found["max_total_num_tokens"] = run.max_total_num_tokens.value
    return found


#: Target figures that are no input of a formula.
_NOT_INPUTS = frozenset({"graph_gb", "mamba_gb", "swa_pool_gb", "full_tokens", "swa_tokens"})


def read_log(text: str) -> dict[str, float | str | bool | None]:
    """Quantities (see run.messages.QUANTITIES) and server arguments of the latest complete start-up in *text*."""
    runs = split(text)
    return facts(runs[[r.index for r in runs].index(pick(runs, None))]) if runs else {}


def _finish(index: int, run: Building) -> StartUp:
    ranks = {name: rank for name, rank in run.ranks.items() if rank.logged()}
    binding = _binding_rank(ranks)
    order = [ranks[binding]] if binding is not None else []
    order += [ranks[name] for name in sorted(ranks, key=_rank_order) if name != binding]
    target = _figures(order, TARGET)
    draft = _figures(order, DRAFT)
    derived = []
    for name in _MIN_OVER_RANKS:
        figures = [f for rank in ranks.values() if (f := _target_figure(rank, name)) is not None]
        if figures:
            # the least; of ranks that tie, the binding rank's (the bar's rank is the one its rows cite)
            target[name] = min(figures, key=lambda f: (f.value, f.rank != binding, f.line))
        if name == "avail_before_weights_gb" and figures and not _logged_before(ranks):
            derived.append(name)
    cautions = []
    for whose, model in (("", target), ("draft's ", draft)):
        usage = model.get("weights_gb")
        if usage is not None and usage.value < 0:  # another process freed memory while the weights loaded
            del model["weights_gb"]
            cautions.append(
                f"the GPU memory free grew by {-usage.value:.2f} GB while the {whose}weights loaded (mem usage="
                f"{usage.value:.2f} GB, line {usage.line}): another process was freeing memory, so the"
                f" {whose}weights' size is not known, and the memory free before them was not all this start-up's"
            )
    named = [(name, run.verdicts[name]) for name in NAMED_INPUTS if name in run.verdicts and name not in target]
    for name, (value, line) in named:
        target[name] = Figure(value, line, "")
    if named:
        cautions.append(
            f"{' and '.join(QUANTITIES[name].split(' (')[0] for name, _ in named)} come from line {named[0][1][1]},"
            " a line no release on the registry prints (a build of its own) that names them by the code's names"
        )
    if run.newest_first:
        cautions.append("the log runs newest first (SGLang's stamps go down): it is read from its last line up")
    if run.args_cut is not None:
        line, last = run.args_cut
        after = f"after {last}" if last != "-" else "before its first field"
        cautions.append(
            f"its server_args= line (line {line}) is cut short {after}: the fields after it are not in the log, and"
            " the release's defaults stand for them (--set NAME=VALUE gives one)"
        )
    if run.served and not run.ready:
        cautions.append(
            f"its ready line is not in the log: it was up once its warmup was answered from the machine itself (line"
            f" {run.served_at})"
        )
    if run.outlived is not None:
        cautions.append(
            f"the traceback with no prefix at line {run.outlived[0]} came before its first step and the start-up went"
            f" on at line {run.outlived[1]}: not its death (a client's, printed into the same stream)"
        )
    complete = run.ready or (not run.ended.died and ("kv_gb" in target or run.tokens is not None))
    end = run.ended
    if end is Ended.UNFINISHED and run.served:  # it answered its warmup: up, though its ready line is not shown
        end = Ended.READY
    if end is Ended.UNFINISHED and run.tokens is not None:
        end = Ended.INITIALISED
    words = f"{end.value} (line {run.death})" if end.died else end.value
    pools = tuple(
        (("target", "draft")[slot], what.value, gb, tokens, line)
        for slot in (TARGET, DRAFT)
        for what, gb, tokens, line in next((m.pools for m in _models(order, slot) if m.pools), [])
    )
    types = tuple(t for t in (next((m.type for m in _models(order, s) if m.type), "") for s in (TARGET, DRAFT)) if t)
    return StartUp(
        index=index,
        started=run.first.when or run.first_stamp,
        first_line=run.first.number,
        ended=words,
        complete=complete,
        server_args=run.args,
        target=target,
        draft=draft,
        model_types=types,
        ranks=tuple(sorted(ranks, key=_rank_order)),
        disagreements=_disagreements(ranks),
        left=_left(ranks, binding, run),
        max_total_num_tokens=_as_figure(run.tokens),
        begun_by=run.begun_by,
        derived=tuple(derived),
        command=run.command,
        version=run.version,
        doubts=tuple(run.doubts),
        cautions=tuple(cautions),
        end=end,
        death=(run.death, run.death_text) if run.death is not None else None,
        verdicts={name: Figure(value, line, "") for name, (value, line) in run.verdicts.items()},
        pools=pools,
        draft_first=run.order == EARLY_DRAFT,
    )


#: The target's figures a line of SGLang's own verdicts may name (messages' "named_inputs"), where no step gave them.
NAMED_INPUTS = ("avail_before_weights_gb", "avail_after_weights_gb")


def _models(ranks: list[Rank], slot: int) -> list[Model]:
    return [rank.models[slot] for rank in ranks if len(rank.models) > slot]


def _figures(ranks: list[Rank], slot: int) -> dict[str, Figure]:
    """One model's figures: the binding rank's (the first), and those it did not log from the other ranks, in
    rank order (a fragment pasted from several ranks shows each rank's lines in part)."""
    found: dict[str, Figure] = {}
    for model in _models(ranks, slot):
        for name, figure in model.figures.items():
            found.setdefault(name, Figure(*figure))
    return found


def _as_figure(found: Found | None) -> Figure | None:
    return Figure(*found) if found is not None else None


def _target_figure(rank: Rank, name: str) -> Figure | None:
    """A target figure of one rank, the free memory before the weights worked out if it was not logged."""
    figures = rank.models[0].figures
    if name in figures:
        return Figure(*figures[name])
    after, usage = figures.get("avail_after_weights_gb"), figures.get("weights_gb")
    if name == "avail_before_weights_gb" and after is not None and usage is not None:
        return Figure(round(after[0] + usage[0], 2), after[1], after[2])
    return None


def _logged_before(ranks: dict[str, Rank]) -> bool:
    return any("avail_before_weights_gb" in rank.models[0].figures for rank in ranks.values())


def _left(ranks: dict[str, Rank], binding: str | None, run: Building) -> Figure | None:
    """The binding rank's last free memory if it is from the start-up's last stage, else the scheduler's."""
    rank = ranks[binding] if binding is not None else None
    final = rank is not None and rank.left_stage == run.last_stage
    scheduler = run.scheduler_left
    if (
        rank is not None
        and rank.left is not None
        and (final or scheduler is None)
        and (scheduler is None or scheduler[2] != binding)
    ):
        return _as_figure(rank.left)
    return _as_figure(scheduler) if scheduler is not None else _as_figure(rank.left if rank else None)


def _binding_rank(ranks: dict[str, Rank]) -> str | None:
    """The rank whose free memory after the weights is least (the one the formula's minimum comes from)."""
    if not ranks:
        return None

    def key(name: str) -> tuple[float, tuple[tuple[int, str], ...]]:
        figure = ranks[name].models[0].figures.get("avail_after_weights_gb")
        return (figure[0] if figure else float("inf"), _rank_order(name))

    return min(ranks, key=key)


def _disagreements(ranks: dict[str, Rank]) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    found = []
    names = sorted({name for rank in ranks.values() for name in rank.models[0].figures if name != "left_gb"})
    for name in names:
        values = [(rank, r.models[0].figures[name][0]) for rank, r in ranks.items() if name in r.models[0].figures]
        spread = max(v for _, v in values) - min(v for _, v in values)
        if len(values) > 1 and spread > (0 if name == "kv_tokens" else DISAGREE_GB):
            found.append((name, tuple(sorted(values, key=lambda rv: _rank_order(rv[0])))))
    return tuple(found)


def _rank_order(name: str) -> tuple[tuple[int, str], ...]:
    """The order of ranks by their numbers, as numbers (TP2 before TP10), compared as digits: a rank of 5,000 digits
    has no int Python converts."""
    return tuple((len(n.lstrip("0")), n.lstrip("0")) for n in re.findall(r"\d+", name))
