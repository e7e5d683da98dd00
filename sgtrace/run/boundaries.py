"""Where one start-up ends and the next begins, and which model (target or draft) a line belongs to.

:func:`boundary` weighs an event against the start-up being built. A new one
begins at:

- a service start, or a ``server_args=`` line or launch command after figures;
- a new process id in the journal's prefix;
- SGLang's clock going back more than BACK_S, or a gap of more than GAP_S
  before the operation the line ends (its ``elapsed=`` is subtracted);
- a model line after the server got ready, stopped, died or printed its
  scheduler line (only another rank's last graph may trail it);
- a rank logging again what it logged already (:func:`_slot`);
- a rank logging what no rank can still log once another went past a
  collective of SGLang's start-up (_BARRIER: ranks move in step);
- the same event on another rank more than SPREAD_S later;
- free memory that cannot follow what the start-up showed: memory is only
  taken while a server starts, so no line can show more free memory (or a
  larger pool) than a rank had at an earlier stage, beyond the 10 % by which
  SGLang lets ranks differ (:func:`_memory`).

Within a rank the first model is the target; a line the target logged already,
or a later phase once the draft began, is the draft's when it can be (see
:func:`_may_be_draft`: less memory, a draft's class, a smaller pool), else a new
start-up.
"""

from __future__ import annotations

from sgtrace.run.building import (
    DRAFT,
    LONG_STEPS,
    SCHEDULER_STAGE,
    TARGET,
    Building,
    Model,
    Rank,
    memory_claims,
    times,
)
from sgtrace.run.events import DRAFT_TYPE, PHASES, Event

#: SGLang's clock going back by more than this many seconds begins a start-up (ranks' lines interleave a little).
BACK_S = 60.0
#: Other ranks' lines may trail a death by this many seconds.
DEATH_S = 15.0
#: Steps of a start-up that take seconds (nothing to load or capture between them): a longer gap is a new one.
SHORT_S = 120.0
#: Across a step that can take long (loading, capturing) and that the log does not show, the lines cannot say
#: whether they are one start-up: a gap past SHORT_S is a doubt the start-up carries; past this, a new one
#: (its begun_by starts with UNSURE).
UNSURE_S = 600.0
#: Begins the begun_by of a start-up whose beginning the lines cannot tell for sure.
UNSURE = "maybe "
#: Ranks of one start-up are at the same stage within this many seconds: they leave each collective together...
TIGHT_S = 30.0
#: ... and drift apart by at most this much while each loads its weights.
SPREAD_S = 180.0
#: Stage (model * 10 + phase) -> the stage no rank has reached while a rank still logs it: the collectives of
#: the start-up (the free-memory all-reduce that ends each runner's distributed init, the one that sizes the
#: target's KV pool, the warm-up passes of a graph capture; the draft's runner starts after the target's graphs).
_BARRIER = {0: 1, 1: 3, 2: 3, 3: 6, 4: 6, 6: 11, 10: 11, 11: 16, 12: 16, 13: 16, 14: 16}
#: A model's phases of loading, and the target's first stage after them (its pool).
_LOADING, _POOL_STAGE = ("init", "load_begin", "load_end"), PHASES["kv"]
#: Begins the doubt of a start-up begun by a line of its pool.
_HEADLESS = "it begins with a line of its pool, line"
#: Ranks of one start-up differ in free memory by up to 10 % (SGLang warns past it) and a rounding.
_RANKS_DIFFER = (1.1, 1.0)
#: The first stage after the target's KV pool, and the share of the free memory before the weights a pool
#: leaves at most (weights and pool take mem_fraction_static of it; an operator's is above 0.12).
_POOLED, _POOL_LEAVES = 4, 0.8


def boundary(run: Building, event: Event) -> tuple[str, int | None]:
    """(why *event* begins a new start-up, "" if it does not; the model it belongs to in *run*)."""
    kind = event.kind
    if kind == "service_start":
        return "a service start", None
    if kind in ("server_args", "command"):
        begins = run.figures_seen() or (run.args if kind == "server_args" else run.command)
        return ("a server_args= line" if kind == "server_args" else "a launch command") if begins else "", None
    if kind not in PHASES and kind != "scheduler":
        return "", None
    why = _process(run, event) or _after_end(run, event)
    if why:
        return why, None
    if kind == "scheduler":
        repeated = run.scheduler_at is not None and run.scheduler_at[0] == event.line.rank
        why = f"a second scheduler line from {event.line.rank or 'the server'}" if repeated else ""
        return why or _memory(run, memory_claims(event, TARGET)) or _clock(run, event, SCHEDULER_STAGE), None
    whys = []
    for slot in _slots(run, event):
        why = _fits(run, event, slot)
        if not why:
            return "", slot
        whys.append(why)
    return whys[0] if whys else f"{event.line.rank or 'the server'} logging '{_what(event)}' again", None


def _fits(run: Building, event: Event, slot: int) -> str:
    """Why *event* cannot be *slot*'s line in *run* ("" if it can): ranks in step, memory, SGLang's clock."""
    stage = slot * 10 + PHASES[event.kind]
    if run.top_stage >= _BARRIER.get(stage, 99):
        return f"'{_what(event)}' after another rank had gone past it (ranks move in step)"
    return _in_step(run, event, stage) or _memory(run, memory_claims(event, slot)) or _clock(run, event, stage)


def _in_step(run: Building, event: Event, stage: int) -> str:
    """Ranks move in step: no rank is at a stage much later (TIGHT_S, SPREAD_S) than another was there or further."""
    for (at, capture), seconds in times(event, stage):
        later = [t for (s, c), t in run.first_at.items() if s > at or (s == at and c == capture)]
        if later and seconds - min(later) > (SPREAD_S if at % 10 == 2 else TIGHT_S):
            return f"'{_what(event)}' {_duration(seconds - min(later))} after another rank was there or further"
    return ""


def _clock(run: Building, event: Event, stage: int) -> str:
    """SGLang's clock going back, or more time before the line's operation began than the steps between take.

    The steps between take seconds (SHORT_S), plus the time each load and capture between took on the ranks
    that logged its end. Across such a step that no line of the start-up times, a longer gap is only a
    doubt (see :func:`doubt`), and past UNSURE_S a new start-up marked unsure.
    """
    seconds = event.line.seconds
    if seconds is None or run.latest_seconds is None or run.last_seconds is None:
        return ""
    if seconds < run.latest_seconds - BACK_S:
        return "SGLang's clock going back"
    gap, allowed, untimed = _gap(run, event, stage)
    if gap <= allowed or (untimed and run.top_stage < 0):  # the lines that began it came just before
        return ""
    if not untimed:
        return f"a gap of {_duration(gap)} before steps SGLang took {_duration(allowed)} for"
    if gap > UNSURE_S:
        return f"{UNSURE}a gap of {_duration(gap)} across {untimed} the log does not show"
    return ""


def doubt(run: Building, event: Event, slot: int | None) -> str:
    """Why the lines cannot say for sure that *event*, filed in *run*, belongs to it ("" if they can)."""
    if headless := _headless(run, event, slot):
        return headless
    if event.kind == "scheduler":
        stage = SCHEDULER_STAGE
    elif event.kind in PHASES and slot is not None:
        stage = slot * 10 + PHASES[event.kind]
    else:
        return ""
    if event.line.seconds is None or run.last_seconds is None or run.top_stage < 0:
        return ""
    gap, allowed, untimed = _gap(run, event, stage)
    if untimed and gap > allowed:
        return (
            f"line {event.line.number} comes {_duration(gap)} after the line before, across {untimed} the log"
            " does not show: the lines cannot say whether they are one start-up"
        )
    return ""


def _headless(run: Building, event: Event, slot: int | None) -> str:
    """A model loading as the draft in a start-up that a line of its pool began (none of its target's loading
    shown): that line may be the previous start-up's last (a draft's pool), and this load the next one's."""
    if slot != DRAFT or event.kind not in _LOADING or run.first_stage < _POOL_STAGE:
        return ""
    if any(doubted.startswith(_HEADLESS) for doubted in run.doubts):
        return ""
    return (
        f"{_HEADLESS} {run.first.number}, none of its target's loading: the model loading at line"
        f" {event.line.number} may be its draft or the next start-up's target"
    )


def _gap(run: Building, event: Event, stage: int) -> tuple[float, float, str]:
    """(seconds before *event*'s step began, seconds the steps between take, the first of them no line times)."""
    seconds = event.line.seconds or 0.0
    gap = seconds - event.elapsed - (run.last_seconds or 0.0)
    began_at = stage - 1 if event.elapsed and stage % 10 in (2, 6) else stage  # an end line: where its step began
    allowed, untimed = SHORT_S, ""
    for end, name in LONG_STEPS.items():
        if run.top_stage < end <= began_at:
            took = sum(elapsed for (at, _), elapsed in run.took.items() if at == end)
            allowed += took
            untimed = untimed or ("" if took else name)
    return gap, allowed, untimed


def _process(run: Building, event: Event) -> str:
    line = event.line
    if run.pid and line.pid and line.seconds is not None and line.pid != run.pid:
        return f"a new process id ({line.pid})"
    return ""


def _after_end(run: Building, event: Event) -> str:
    """A model event or scheduler line after the start-up got ready, stopped, died or printed its scheduler line."""
    seconds = event.line.seconds
    if run.ready or run.ended == "stopped":
        return f"a start-up line after the server {'got ready' if run.ready else 'stopped'}"
    if run.ended.startswith("died"):  # the other ranks are killed within seconds; their last lines may trail
        if seconds is None or run.died_at is None or seconds - run.died_at > DEATH_S:
            return "a start-up line after the server died"
    if run.scheduler_at is not None and event.kind in PHASES:
        rank, at = run.scheduler_at
        trailing = event.kind == "capture_end" and event.line.rank != rank  # another rank's last graph, logged late
        if not trailing or seconds is None or at is None or seconds - at > BACK_S:
            return "a start-up line after the scheduler's max_total_num_tokens= line"
    return ""


def _memory(run: Building, claims: list[tuple[int, float, bool]]) -> str:
    """Why the memory *claims* show cannot follow what *run* showed ("" if they can)."""
    scale, plus = _RANKS_DIFFER
    before = run.free_low.get(1)
    for stage, gb, free in claims:
        earlier = [low for at, low in run.free_low.items() if at < stage]
        if earlier and gb > min(earlier) * scale + plus:
            return f"{gb:.2f} GB where the start-up had only {min(earlier):.2f} GB free before"
        later = [high for at, high in run.need_high.items() if at > stage]
        if free and later and max(later) > gb * scale + plus:
            return f"{gb:.2f} GB free where the start-up showed {max(later):.2f} GB later"
        low, high = run.seen_low.get(stage), run.need_high.get(stage)
        if low is not None and high is not None and (gb > low * scale + plus or gb * scale + plus < high):
            return f"{gb:.2f} GB where other ranks showed {run.seen_low[stage]:.2f}-{run.need_high[stage]:.2f} GB"
        if free and before is not None and stage >= _POOLED and gb > before * _POOL_LEAVES * scale + plus:
            return f"{gb:.2f} GB free after the KV pool, with {before:.2f} GB free before the weights"
    return ""


def _slots(run: Building, event: Event) -> list[int]:
    """The models *event* can belong to on its rank, likeliest first (a rank that logged nothing: either)."""
    rank = run.ranks.get(event.line.rank)
    fresh = rank is None or (rank.models[0].phase < 0 and len(rank.models) == 1)
    drafts = event.kind == "load_end" and DRAFT_TYPE.search(event.model_type)
    if not fresh or event.kind.startswith("capture") or drafts:
        slot = _slot(run, event)
        return [] if slot is None else [slot]
    if run.top_stage >= 10:
        return [DRAFT, TARGET]
    speculative = run.args.get("speculative_algorithm") is not None
    return [TARGET, DRAFT] if run.top_stage >= 6 or speculative else [TARGET]  # a draft follows the target's graphs


def slot_of(run: Building, event: Event) -> int:
    """The model a start-up's first line belongs to (TARGET unless it is a draft's; TARGET for other events)."""
    return (_slot(run, event) or TARGET) if event.kind in PHASES else TARGET


def _slot(run: Building, event: Event) -> int | None:
    """The model *event* belongs to on its rank: TARGET, DRAFT, or None when the rank logged it already."""
    rank = run.ranks.get(event.line.rank)
    if event.kind.startswith("capture"):
        return _capture_slot(rank, event)
    phase = PHASES[event.kind]
    if rank is None or (rank.models[0].phase < 0 and len(rank.models) == 1):
        draft = event.kind == "load_end" and DRAFT_TYPE.search(event.model_type)
        return DRAFT if draft or run.top_stage >= 10 else TARGET  # ranks move in step: others are at the draft
    target = rank.models[0]
    draft_model = rank.models[1] if len(rank.models) > 1 else None
    if draft_model is not None and draft_model.phase >= 0:
        return DRAFT if draft_model.phase < phase else None
    if target.phase < phase:
        return DRAFT if event.kind == "load_end" and DRAFT_TYPE.search(event.model_type) else TARGET
    return DRAFT if _may_be_draft(run, target, event) else None


def _capture_slot(rank: Rank | None, event: Event) -> int | None:
    if event.draft:
        return DRAFT
    if rank is None:
        return TARGET
    began = len(rank.models) > 1 and rank.models[1].phase >= 0
    ended = event.kind == "capture_end" and event.capture.lower() in rank.models[0].captures
    return None if began or ended else TARGET


def _may_be_draft(run: Building, target: Model, event: Event) -> bool:
    """Whether a line the target logged already can be the draft's: the memory it shows says which."""
    if "speculative_algorithm" in run.args and run.args["speculative_algorithm"] is None:
        return False
    figures, kind = event.figures, event.kind
    if kind == "init":  # the draft's runner initialises after the target's weights are in
        return target.phase >= PHASES["load_end"]
    speculative = run.top_stage >= 6 or run.args.get("speculative_algorithm") is not None
    if kind == "load_begin":
        after, before = target.figures.get("avail_after_weights_gb"), target.figures.get("avail_before_weights_gb")
        free = figures["avail_before_weights_gb"]
        return free <= after[0] + 0.5 if after else (free < before[0] - 1.0 if before else speculative)
    if kind == "load_end":
        if DRAFT_TYPE.search(event.model_type):
            return True
        usage, target_usage = figures.get("weights_gb"), target.figures.get("weights_gb")
        if usage is not None and target_usage is not None:
            return usage < 0.5 * target_usage[0]  # a draft is far smaller than its target
        return bool(target.type) and event.model_type != target.type
    if kind == "kv":  # a draft's pool is far smaller; a pool of another form (K and V, or one KV) is another model's
        pool, size = target.figures.get("kv_gb"), figures.get("kv_gb", 0.0)
        other_form = target.split_kv is not None and target.split_kv != event.split_kv
        return (size < 0.5 * pool[0] or (other_form and size < pool[0])) if pool else speculative
    if kind == "pool_end":
        free_after = target.figures.get("avail_after_pool_gb")
        return figures["avail_after_pool_gb"] < free_after[0] - 0.05 if free_after else speculative
    return True


def _what(event: Event) -> str:
    text = event.line.text
    return text[: text.index(".")] if "." in text[:40] else text[:40]


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"
