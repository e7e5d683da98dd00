"""Whether a run went through a function: the calls the graph recorded, evaluated in three values.

The graph stage (:mod:`sgtrace.graph.reach`) records, for each function that
may hold a cap, the calls that may run it with their conditions, up to the
functions nothing in the tree calls. A function is reached when the run is
known to have gone through it (it holds the pool's base write), or when it is
an entry point, or when some call of it is under conditions that hold and in
a function that is reached -- and, for a call that may run several overrides,
when an instance of its class is built on a reached path. Each condition is
true, false or unknown (an input nothing supplies); so is the answer: reached,
not reached (every path has a false condition, which is named), or unknown
(naming the inputs that would decide it).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

#: (path, qualname) of a function.
Key = tuple[str, str]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Call:
    """A call that may run a function: where it is and the conditions it runs under."""

    #: File of the calling function.
    path: str
    #: Its qualname (``Class.method`` or ``func``).
    function: str
    #: 1-based line of the call's statement.
    line: int
    #: Enclosing conditions, outermost first.
    guard: tuple[str, ...]
    #: The classes one of which must be built for the call to run this function ((): any receiver does).
    instances: tuple[str, ...] = ()


@dataclass(frozen=True)
class Paths:
    """The calls that may run each function the graph stage searched, and where classes are built."""

    #: Function -> the calls that may run it (searched functions only; () for an entry point).
    callers: Mapping[Key, tuple[Call, ...]] = field(default_factory=dict)
    #: Class -> the calls that build it (searched classes only).
    built: Mapping[str, tuple[Call, ...]] = field(default_factory=dict)
    #: Dotted names of the conditions that are literal constants of the tree (``DisaggregationMode.DECODE``).
    constants: Mapping[str, Any] = field(default_factory=dict)

    def conditions(self) -> Iterable[str]:
        """Every condition on the recorded calls."""
        for calls in (*self.callers.values(), *self.built.values()):
            for call in calls:
                yield from call.guard


@dataclass(frozen=True)
class Verdict:
    """Reached (True), not reached (False) or unknown (None), with what decides it."""

    #: The answer.
    value: bool | None
    #: The false conditions, each with where it is ("" for the write's own guard; for not reached).
    false: tuple[tuple[str, str], ...] = ()
    #: The inputs that would decide it, each with the condition that needs it and where (for unknown).
    needs: tuple[tuple[str, str, str], ...] = ()
    #: Other reasons it is unknown (callers not searched).
    notes: tuple[str, ...] = ()
    #: Whether a call back into a function being evaluated was met (the answer is not final for it).
    cyclic: bool = False


#: (a condition, the file and line where it is) -> True/False, or None with the input it needs (a name, or the
#: condition if none is named).
Holds = Callable[[str, str, int], tuple[bool | None, str]]
REACHED = Verdict(True)


def read_paths(data: Any) -> Paths | None:
    """The graph attribute ``reach`` as :class:`Paths`; None for a graph without it (or with foreign data)."""
    if not isinstance(data, dict):
        return None
    try:
        callers = {
            (str(f["path"]), str(f["function"])): tuple(_call(row) for row in f["callers"])
            for f in data["functions"]
            if f["searched"]
        }
        built = {str(c["class"]): tuple(_call(row) for row in c["built"]) for c in data["classes"] if c["searched"]}
        constants = {str(k): ast.literal_eval(str(v)) for k, v in data["constants"].items()}
    except (KeyError, TypeError, ValueError, SyntaxError, IndexError):
        return None
    return Paths(callers, built, constants)


def _call(row: list[Any]) -> Call:
    path, _, function, line, guard, instances = row
    return Call(str(path), str(function), int(line), tuple(map(str, guard)), tuple(map(str, instances)))


def condition(text: str, where: str, holds: Holds, at: tuple[str, int] = ("", 0)) -> Verdict:
    """One condition, at *where* (a call: ``Class.method, path:line``; "" for the write's own) and *at* (its file
    and line), as a verdict."""
    value, needed = holds(text, *at)
    shown = _bare(text)
    if value is None:
        return Verdict(None, needs=((needed, shown, where),))
    # a decided condition's *needed* says what decided it, when the release's code worked it out
    return REACHED if value else Verdict(False, false=((f"{shown} is false: {needed}" if needed else shown, where),))


def _bare(text: str) -> str:
    """*text* without parentheses around the whole of it (``( a == b )`` -> ``a == b``), for reading."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        try:
            ast.parse(text[1:-1].strip(), mode="eval")
        except SyntaxError:
            break
        text = text[1:-1].strip()
    return text


def both(verdicts: Iterable[Verdict]) -> Verdict:
    """All of them: false if one is, true if all are, else unknown."""
    return _combine(list(verdicts), all_of=True)


def either(verdicts: Iterable[Verdict]) -> Verdict:
    """One of them: true if one is, false if all are, else unknown."""
    return _combine(list(verdicts), all_of=False)


def _combine(verdicts: list[Verdict], all_of: bool) -> Verdict:
    """Three-valued and/or. *cyclic* is kept where the answer may rest on a call back into a function."""
    if all_of:
        false = [v for v in verdicts if v.value is False]
        if false:
            return Verdict(False, _unique(f for v in false for f in v.false), cyclic=all(v.cyclic for v in false))
    elif any(v.value is True for v in verdicts):
        return REACHED
    cyclic = any(v.cyclic for v in verdicts)
    unknown = [v for v in verdicts if v.value is None]
    if unknown:
        needs = _unique(n for v in unknown for n in v.needs)
        return Verdict(None, needs=needs, notes=_unique(n for v in unknown for n in v.notes), cyclic=cyclic)
    return Verdict(all_of, _unique(f for v in verdicts for f in v.false), cyclic=cyclic)


def _unique(items: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(items))


class Reach:
    """Evaluates :class:`Paths` with one run's conditions; remembers what it found."""

    def __init__(self, paths: Paths, holds: Holds, base: frozenset[Key]) -> None:
        self.paths = paths
        self.holds = holds
        #: Functions the run is known to have gone through.
        self.base = base
        self._memo: dict[Key | str, Verdict] = {}

    def function(self, key: Key, stack: tuple[Key | str, ...] = ()) -> Verdict:
        """Whether the run went through the function *key*."""
        if key in self.base:
            return REACHED
        if key in stack:
            return Verdict(False, cyclic=True)  # a call back into it adds no way in
        if key in self._memo:
            return self._memo[key]
        if key not in self.paths.callers:
            return Verdict(None, notes=(f"the callers of {key[1]} were not followed",))
        calls = self.paths.callers[key]
        verdict = either(self.call(c, (*stack, key)) for c in calls) if calls else REACHED
        return self._final(key, verdict, stack)

    def call(self, call: Call, stack: tuple[Key | str, ...]) -> Verdict:
        """Whether *call* runs: its conditions hold, its function is reached, its receiver's class is built."""
        where = f"{call.function}, {call.path}:{call.line}"
        parts = [condition(text, where, self.holds, (call.path, call.line)) for text in call.guard]
        if not any(p.value is False for p in parts):  # a false condition decides it: no need to go up
            parts.append(self.function((call.path, call.function), stack))
            if call.instances:
                parts.append(either(self.built(c, stack) for c in call.instances))
        return both(parts)

    def built(self, cls: str, stack: tuple[Key | str, ...]) -> Verdict:
        """Whether an instance of *cls* is built on a reached path."""
        if cls in stack:
            return Verdict(False, cyclic=True)
        if cls in self._memo:
            return self._memo[cls]
        if cls not in self.paths.built:
            return Verdict(None, notes=(f"where {cls.rsplit('.', 1)[-1]} is built was not followed",))
        calls = self.paths.built[cls]
        if not calls:  # built by a factory or outside the tree, if at all: which override runs is not known
            return Verdict(None, notes=(f"no call of the tree builds {cls.rsplit('.', 1)[-1]}",))
        return self._final(cls, either(self.call(c, (*stack, cls)) for c in calls), stack)

    def _final(self, key: Key | str, verdict: Verdict, stack: tuple[Key | str, ...]) -> Verdict:
        if not stack and verdict.value is False and not verdict.false:  # only ever called from within a cycle
            verdict = Verdict(None, notes=("it is only called from functions it calls",))
        if not verdict.cyclic:
            self._memo[key] = verdict
        return verdict
