"""The report's history section: the start-up's pool release by release as a small chart (the caps' count
when no start-up is given), and the steps that change what is watched, listed."""

from __future__ import annotations

from dataclasses import dataclass

from sgtrace.analyses.history import Change, History, Stop
from sgtrace.report.diff_parts import pool_sentence
from sgtrace.report.history import change_summary, label

#: The chart's size in SVG units, and its margins (left for the axis' figures, bottom for the releases).
WIDTH, HEIGHT = 900, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 30, 70


@dataclass(frozen=True, slots=True)
class Point:
    """One release on the chart."""

    #: How the release is named.
    label: str
    #: Its x, and its y (None when it has no value: not read, or not evaluated).
    x: float
    y: float | None
    #: The value shown (``10.43 GB``, ``16 caps``), or why there is none.
    text: str
    #: Whether the step into it changes what is watched.
    marked: bool
    #: Whether its value is written beside it (the first value, and each that differs from the one before).
    labelled: bool = False

    @property
    def anchor(self) -> str:
        """Where its value's text is anchored: to its right, or to its left near the chart's right edge."""
        return "end" if self.x > WIDTH - RIGHT - 100 else "start"

    @property
    def text_x(self) -> float:
        """The x of its value's text."""
        return self.x - 6 if self.anchor == "end" else self.x + 6


@dataclass(frozen=True, slots=True)
class Tick:
    """A figure on the value axis."""

    y: float
    text: str


@dataclass(frozen=True, slots=True)
class Step:
    """A marked step, as the section lists it."""

    old: str
    new: str
    summary: str
    #: ``diff``'s pool sentence ("" without a start-up).
    pool: str
    #: The newer release's commit subject, for a git history.
    subject: str


@dataclass(frozen=True, slots=True)
class HistoryView:
    """What the template draws."""

    span: str
    #: What the chart's values are: ``KV pool (GB)`` or ``caps``.
    measure: str
    points: tuple[Point, ...]
    ticks: tuple[Tick, ...]
    #: The polyline's points (``x,y x,y``), through the releases that have a value.
    line: str
    steps: tuple[Step, ...]
    #: The verdict line's words (how many releases, how many steps changed).
    summary: str
    size: tuple[int, int] = (WIDTH, HEIGHT)


def history_view(history: History, span: str, summary: str) -> HistoryView:
    """The chart's points and axis, and the marked steps."""
    pooled = any(stop.pool is not None for stop in history.stops)
    values = [_value(stop, pooled) for stop in history.stops]
    known = [v for v in values if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    if high - low < 1e-9:
        low, high = low - 1.0, high + 1.0
    pad = (high - low) * 0.1
    low, high = (max(0.0, low - pad) if low >= 0 else low - pad), high + pad
    count = len(history.stops)
    step = (WIDTH - LEFT - RIGHT) / max(1, count - 1)
    marked = {change.new for change in history.changes if change.changes}

    def y_of(value: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (value - low) / (high - low))

    points = tuple(
        Point(label(stop), LEFT + index * step if count > 1 else (LEFT + WIDTH - RIGHT) / 2,
              None if value is None else y_of(value), _text(stop, value, pooled), index in marked,
              value is not None and _differs(values[:index], value, pooled))
        for index, (stop, value) in enumerate(zip(history.stops, values, strict=True))
    )  # fmt: skip
    ticks = tuple(Tick(y_of(v), _figure(v, pooled)) for v in (low, (low + high) / 2, high))
    line = " ".join(f"{p.x:.1f},{p.y:.1f}" for p in points if p.y is not None)
    steps = tuple(_step(history, change) for change in history.changes if change.changes)
    measure = "KV pool (GB)" if pooled else "caps"
    return HistoryView(span, measure, points, ticks, line, steps, summary)


def _differs(before: list[float | None], value: float, pooled: bool) -> bool:
    """Whether *value* is the first known one, or shown differently from the last known one before it."""
    known = [v for v in before if v is not None]
    return not known or _figure(known[-1], pooled) != _figure(value, pooled)


def _value(stop: Stop, pooled: bool) -> float | None:
    if pooled:
        return stop.pool.explanation.kv_budget_gb if stop.pool is not None else None
    return float(len(stop.caps.caps)) if stop.caps is not None else None


def _text(stop: Stop, value: float | None, pooled: bool) -> str:
    if value is not None:
        return _figure(value, pooled)
    if stop.error:
        return f"not read: {stop.error}"
    if stop.pool is not None and stop.pool.explanation.missing:
        return "needs " + ", ".join(sorted(stop.pool.explanation.missing))
    return "not read"


def _figure(value: float, pooled: bool) -> str:
    return f"{value:.2f} GB" if pooled else f"{value:.0f} caps"


def _step(history: History, change: Change) -> Step:
    old, new = history.stops[change.old], history.stops[change.new]
    pool = pool_sentence(old.label, new.label, change.diff.pool) if change.diff.pool is not None else ""
    return Step(label(old), label(new), change_summary(change), pool, new.subject)
