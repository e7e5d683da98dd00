"""Where one start-up ends and the next begins, and which model (target or draft) a line belongs to.

A new start-up begins only on evidence that a new server process began (RULES, tried in order):

- a service start, or a ``server_args=`` line or launch command after figures;
- a new process id in the journal's prefix, another container or pod in docker compose's or kubectl's (and the
  same process id keeps a step in its start-up whatever the
  order or the clock of the ranks' steps says);
- a step after the server got ready, stopped, died or printed its scheduler line (only another
  rank's last graph may trail it);
- SGLang's clock going back more than BACK_S, or a gap longer than the steps between take;
- a rank logging again what it logged already: its target and its draft both took that step;
- a rank logging what no rank can still log once another went past a collective (ranks move in
  step), or the same step on another rank much later than the first rank logged it.

Never on the memory a line shows: a pool capped by ``--max-total-tokens`` leaves most memory free, a
sliding-window or Mamba model logs a second pool, a draft may load before or after the target's pools.

Within a rank the first model is the target. A step the target took already is the draft's when the
start-up may have one (its ``server_args`` do not say speculative decoding is off): the draft's
runner repeats the target's steps. A pool line belongs to the target until the target's memory pool
ends (a second pool is a sliding-window or state pool), then to the draft. A capture names the draft's.
"""

from __future__ import annotations

from collections.abc import Callable

from sgtrace.run.building import DEATH_S, Building, Model, Rank, times
from sgtrace.run.events import Event
from sgtrace.run.messages import DRAFT_TYPE, Kind, Phase, Pool, Speaks, quote
from sgtrace.run.stages import DRAFT, LATE_DRAFT, LONG_STEPS, SCHEDULER, TARGET, Stage, barrier, began

#: SGLang's clock going back by more than this many seconds begins a start-up (ranks' lines interleave a little).
BACK_S = 60.0
#: Steps of a start-up that take seconds (nothing to load or capture between them): a longer gap is a new one.
SHORT_S = 120.0
#: Across a step that can take long (loading, capturing) and that the log does not show, the lines cannot say
#: whether they are one start-up: a gap past SHORT_S is a doubt the start-up carries; past this, a new one
#: (its begun_by starts with UNSURE).
UNSURE_S = 600.0
#: Begins the begun_by of a start-up whose beginning the lines cannot tell for sure.
UNSURE = "maybe "
#: Ranks of one start-up are at the same step within this many seconds: they leave each collective together...
TIGHT_S = 30.0
#: ... and drift apart by at most this much while each loads its weights.
SPREAD_S = 180.0
#: Begins the doubt of a start-up begun by a line of its pool.
_HEADLESS = "it begins with a line of its pool, line"
_LOADING = (Phase.INIT, Phase.LOAD_BEGIN, Phase.LOAD_END)


def boundary(run: Building, event: Event) -> tuple[str, int | None]:
    """(why *event* begins a new start-up, "" if it does not; the model it belongs to in *run*)."""
    for rule in RULES:
        why = rule(run, event)
        if why:
            return why, None
    if not event.step:
        return "", None
    whys = []
    for slot in _slots(run, event):
        why = _fits(run, event, slot)
        if not why:
            return "", slot
        whys.append(why)
    if whys and _one_process(run, event):
        return "", _slots(run, event)[0]  # one process id: the order of its ranks' steps weighs less
    return whys[0] if whys else f"{event.line.rank or 'the server'} logging '{_what(event)}' again", None


def _one_process(run: Building, event: Event) -> bool:
    """Whether the journal's prefix says *event* comes from the process that logged *run*: a start-up is one
    process, so the order and the clock of its ranks' steps (whole seconds, an end line's elapsed) weigh less."""
    return bool(run.pid) and event.line.pid == run.pid


def _service(run: Building, event: Event) -> str:
    return "a service start" if event.kind is Kind.SERVICE_START else ""


def _arguments(run: Building, event: Event) -> str:
    """A ``server_args=`` line or launch command once the start-up showed figures (or its own arguments)."""
    if event.kind is Kind.SERVER_ARGS and (run.figures_seen() or run.args):
        return "a server_args= line"
    if event.kind is Kind.COMMAND and (run.figures_seen() or run.command):
        return "a launch command"
    return ""


def _process(run: Building, event: Event) -> str:
    line = event.line
    if not (event.step or event.kind is Kind.SCHEDULER):
        return ""
    if run.pid and line.pid and line.seconds is not None and line.pid != run.pid:
        return f"a new process id ({line.pid})"
    if run.source and line.source and line.source != run.source:
        return f"another container or pod ({line.source})"
    return ""


def _after_end(run: Building, event: Event) -> str:
    """A step or scheduler line after the start-up got ready, stopped, died or printed its scheduler line."""
    if not (event.step or event.kind is Kind.SCHEDULER):
        return ""
    seconds = event.line.seconds
    if run.ready or run.ended.name == "STOPPED":
        return f"a start-up line after the server {'got ready' if run.ready else 'stopped'}"
    if run.ended.died:  # the other ranks are killed within seconds; their last lines may trail
        if run.went_on(event):
            return ""
        if seconds is None or run.died_at is None or seconds - run.died_at > DEATH_S:
            return "a start-up line after the server died"
    if run.scheduler_at is not None and event.step:
        rank, at = run.scheduler_at
        trailing = event.line.rank != rank  # another rank's last steps (its graphs, or its pools without graphs)
        if not trailing or seconds is None or at is None or seconds - at > BACK_S:
            return f"a start-up line after the scheduler's {quote('scheduler')} line"
    return ""


def _scheduler(run: Building, event: Event) -> str:
    if event.kind is not Kind.SCHEDULER:
        return ""
    if run.scheduler_at is not None and run.scheduler_at[0] == event.line.rank:
        return f"a second scheduler line from {event.line.rank or 'the server'}"
    return _clock(run, event, SCHEDULER)


#: The rules that begin a start-up before a step is filed, in the order they are tried.
RULES: tuple[Callable[[Building, Event], str], ...] = (_service, _arguments, _process, _after_end, _scheduler)


def _fits(run: Building, event: Event, slot: int) -> str:
    """Why *event* cannot be *slot*'s line in *run* ("" if it can): ranks in step, SGLang's clock."""
    assert event.phase is not None
    stage = Stage(slot, event.phase)
    if stage not in run.order:
        return ""
    wall = barrier(run.order, stage)
    if wall is not None and run.top_position() >= wall:
        return f"'{_what(event)}' after another rank had gone past it (ranks move in step)"
    return _in_step(run, event, stage) or _clock(run, event, stage)


def _in_step(run: Building, event: Event, stage: Stage) -> str:
    """Ranks move in step: no rank is at a step much later (TIGHT_S, SPREAD_S) than another was there or further."""
    timed = times(event, stage)
    if len(timed) > 1:  # an end line that says when its step began: ranks begin in step, each takes its time
        timed = timed[1:]
    for (at, capture), seconds in timed:
        where = run.position(at)
        later = [t for (s, c), t in run.first_at.items() if run.position(s) > where or (s == at and c == capture)]
        if later and seconds - min(later) > (SPREAD_S if at.phase is Phase.LOAD_END else TIGHT_S):
            return f"'{_what(event)}' {_duration(seconds - min(later))} after another rank was there or further"
    return ""


def _clock(run: Building, event: Event, stage: Stage) -> str:
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
    if gap <= allowed or (untimed and run.top is None):  # the lines that began it came just before
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
    if unweighed := _unweighed(run, event, slot):
        return unweighed
    if event.kind is Kind.SCHEDULER:
        stage = SCHEDULER
    elif event.phase is not None and slot is not None:
        stage = Stage(slot, event.phase)
    else:
        return ""
    if event.line.seconds is None or run.last_seconds is None or run.top is None or stage not in run.order:
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
    if slot != DRAFT or event.phase not in _LOADING or run.first_stage is None:
        return ""
    if run.first_stage.phase < Phase.POOL or any(doubted.startswith(_HEADLESS) for doubted in run.doubts):
        return ""
    return (
        f"{_HEADLESS} {run.first.number}, none of its target's loading: the model loading at line"
        f" {event.line.number} may be its draft or the next start-up's target"
    )


def _unweighed(run: Building, event: Event, slot: int | None) -> str:
    """A load filed as the draft's on the word of server_args alone: no figure of the target's says how much
    memory its weights left, so the load may as well be the next start-up's target."""
    if slot != DRAFT or event.phase is not Phase.LOAD_BEGIN or "avail_before_weights_gb" not in event.figures:
        return ""
    seen = _targets(run).figures
    if any(n in seen for n in ("avail_after_weights_gb", "avail_after_pool_gb", "left_gb", "avail_before_weights_gb")):
        return ""
    return (
        f"the model loading at line {event.line.number} is taken as the draft (server_args say speculative decoding is"
        " on), but no line of its target says what memory was free: it may be the next start-up's target"
    )


def _gap(run: Building, event: Event, stage: Stage) -> tuple[float, float, str]:
    """(seconds before *event*'s step began, seconds the steps between take, the first of them no line times)."""
    seconds = event.line.seconds or 0.0
    gap = seconds - event.elapsed - (run.last_seconds or 0.0)
    began_at = run.position(began(stage) if event.elapsed else stage)
    allowed, untimed = SHORT_S, ""
    top = run.top_position()
    for end, name in LONG_STEPS.items():
        if end in run.order and top < run.position(end) <= began_at:
            if end == stage and top == run.position(began(end)):
                # the step's own begin is the furthest line: the time since is the step, its two lines show it
                allowed += max(gap, 0.0)
                continue
            took = sum(elapsed for (at, _), elapsed in run.took.items() if at == end)
            allowed += took
            untimed = untimed or ("" if took else name)
    return gap, allowed, untimed


def _slots(run: Building, event: Event) -> list[int]:
    """The models *event* can belong to on its rank, likeliest first (a rank that logged nothing: either)."""
    rank = run.ranks.get(event.line.rank)
    fresh = rank is None or (rank.models[TARGET].phase is None and len(rank.models) == 1)
    if not fresh or event.phase in (Phase.CAPTURE_BEGIN, Phase.CAPTURE_END) or event.speaks is not Speaks.EITHER:
        slot = _slot(run, event)
        return [] if slot is None else [slot]
    if _draft_type(event):
        return [DRAFT]
    draft = _may_be_draft(run, _targets(run), event)
    if run.top is not None and run.top.model == DRAFT and run.top != SCHEDULER:
        return [DRAFT, TARGET] if draft else [TARGET]  # ranks move in step: the others are at the draft's steps
    graphs = run.top is not None and run.top_position() >= run.position(Stage(TARGET, Phase.CAPTURE_END))
    speculative = run.args.get("speculative_algorithm") is not None
    if not (graphs or speculative):
        return [TARGET]  # a late draft follows the target's graphs
    return [TARGET, DRAFT] if draft else [TARGET]


def _targets(run: Building) -> Model:
    """The target as all ranks show it: the least of each figure, and its class (for a rank's first line)."""
    seen = Model()
    for rank in run.ranks.values():
        target = rank.models[TARGET]
        seen.type = seen.type or target.type
        if target.phase is not None and (seen.phase is None or target.phase > seen.phase):
            seen.phase = target.phase
        figures = dict(target.figures)
        if rank.left is not None:
            figures["left_gb"] = rank.left
        for name, found in figures.items():
            if name not in seen.figures or found[0] < seen.figures[name][0]:
                seen.figures[name] = found
    return seen


def slot_of(run: Building, event: Event) -> int:
    """The model a start-up's first line belongs to (TARGET unless it is a draft's; TARGET for other events)."""
    return (_slot(run, event) or TARGET) if event.step else TARGET


def _slot(run: Building, event: Event) -> int | None:
    """The model *event* belongs to on its rank: TARGET, DRAFT, or None when both took that step already."""
    assert event.phase is not None
    rank = run.ranks.get(event.line.rank)
    phase = event.phase
    if phase in (Phase.CAPTURE_BEGIN, Phase.CAPTURE_END):
        return _capture_slot(rank, event)
    if event.speaks is Speaks.DRAFT:
        return DRAFT
    if rank is None or (rank.models[TARGET].phase is None and len(rank.models) == 1):
        if _draft_type(event) or (run.top is not None and run.top.model == DRAFT and run.top != SCHEDULER):
            return DRAFT
        return TARGET
    target = rank.models[TARGET]
    draft = rank.seen(DRAFT)
    if event.speaks is Speaks.TARGET:
        return TARGET
    if phase in (Phase.POOL, Phase.POOL_END):
        return _pool_slot(run, target, draft, event)
    if not target.reached(phase):
        return DRAFT if _draft_type(event) and target.reached(Phase.LOAD_BEGIN) else TARGET
    if (draft is None or not draft.reached(phase)) and _may_be_draft(run, target, event):
        return DRAFT  # the draft's runner repeats the target's steps
    return None


def _pool_slot(run: Building, target: Model, draft: Model | None, event: Event) -> int | None:
    """A pool belongs to the target until its pools ended (a second pool is a window or state pool): its
    memory pool end, a later step of it, a step of the draft, or POOLS_S without a pool line. Then it is the
    draft's, when the lines say there is one (see :func:`_drafts_pool`)."""
    if draft is not None and draft.phase is not None and run.order == LATE_DRAFT:
        return None if draft.reached(Phase.POOL_END) else DRAFT  # the draft's runner starts after the target's pools
    if not _pools_ended(target, draft, event):
        return TARGET
    if draft is not None and draft.reached(Phase.POOL_END):
        return None
    if draft is not None and draft.phase is not None:
        return DRAFT
    return DRAFT if _drafts_pool(run, target, event) else None


#: Seconds within which one model's pools are all allocated (a window and a full pool, a state pool).
POOLS_S = 10.0


def _pools_ended(target: Model, draft: Model | None, event: Event) -> bool:
    """Whether the target's pools are all allocated: its memory pool ended, or the draft's pools began, or
    (its memory pool end not in the log) no pool line came for POOLS_S. A draft loaded before the target's
    pools (newer releases) does not end them: they come after it."""
    if not target.reached(Phase.POOL):
        return False
    if target.reached(Phase.POOL_END) or (draft is not None and draft.reached(Phase.POOL)):
        return True
    last = target.pool_at
    return last is not None and event.line.seconds is not None and event.line.seconds - last > POOLS_S


def _drafts_pool(run: Building, target: Model, event: Event) -> bool:
    """Whether a pool after the target's is a draft's, not the next start-up's: the start-up runs one (its
    server_args, a draft's capture), or the pool is of another form (one KV size against K and V) or far
    smaller (a draft has a layer or few, its pool the target's tokens)."""
    if not _may_have_draft(run):
        return False
    if run.args.get("speculative_algorithm") is not None:
        return True
    if event.pool is not Pool.KV or "kv_gb" not in event.figures:
        return event.phase is Phase.POOL_END
    own = target.figures.get("kv_gb")
    other_form = target.split_kv is not None and target.split_kv != event.split_kv
    return own is None or other_form or event.figures["kv_gb"] < 0.5 * own[0]


def _may_be_draft(run: Building, target: Model, event: Event) -> bool:
    """Whether a loading step the target took already can be the draft's: a draft's class, a far smaller
    model, or a load that begins with the memory the target's weights left (a restart begins with it all)."""
    if not _may_have_draft(run):
        return False
    figures, phase = event.figures, event.phase
    speculative = run.args.get("speculative_algorithm") is not None
    if phase is Phase.INIT:  # the draft's runner initialises after the target's weights are in
        return target.reached(Phase.LOAD_END)
    if phase is Phase.LOAD_BEGIN:
        left = [
            target.figures[n][0]
            for n in ("avail_after_weights_gb", "avail_after_pool_gb", "left_gb")
            if n in target.figures
        ]
        before = target.figures.get("avail_before_weights_gb")
        free = figures.get("avail_before_weights_gb")
        if free is None or speculative:  # server_args say a draft comes: the free memory may have grown (another
            return speculative  # process exiting), and a restart would log its own server_args first
        return free <= min(left) + 0.5 if left else (before is not None and free < before[0] - 1.0)
    if phase is Phase.LOAD_END:
        if _draft_type(event):
            return True
        usage, target_usage = figures.get("weights_gb"), target.figures.get("weights_gb")
        if usage is not None and target_usage is not None:
            return usage < 0.5 * target_usage[0]  # a draft is far smaller than its target
        return bool(target.type) and event.model_type != target.type
    return speculative


def _capture_slot(rank: Rank | None, event: Event) -> int | None:
    """A capture that names the draft is the draft's; another is the target's, once a start-up each, unless
    the target ended that capture already and the rank's draft began: the draft's runner captures its own
    graphs with the same words (older releases)."""
    slot = DRAFT if event.speaks is Speaks.DRAFT else TARGET
    if rank is None:
        return slot
    draft = rank.seen(DRAFT)
    if event.speaks is Speaks.EITHER and draft is not None and draft.phase is not None:
        slot = DRAFT if event.capture in rank.models[TARGET].captures else slot
    model = rank.seen(slot)
    if event.phase is Phase.CAPTURE_END and model is not None and event.capture in model.captures:
        return None
    return slot


def _may_have_draft(run: Building) -> bool:
    """Whether the start-up may run a speculative draft (its server_args, when logged, say whether it does)."""
    return not ("speculative_algorithm" in run.args and run.args["speculative_algorithm"] is None)


def _draft_type(event: Event) -> bool:
    return event.phase is Phase.LOAD_END and bool(DRAFT_TYPE.search(event.model_type))


def _what(event: Event) -> str:
    text = event.line.text
    return text[: text.index(".")] if "." in text[:40] else text[:40]


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"
