"""Values: known (with the reasons that decided them), unknown (with what would decide them), one undecided
value (Same), values worked out when first read, and the arithmetic on them as the program would run it."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Known:
    """A decided value and what decided it (facts and places, e.g. ``architectures (the log)``, ``path:line``)."""

    value: Any
    why: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Unknown:
    """An undecided value and the facts that would decide it. *cycle*: the value is the attribute of that name
    read again while its own value is being worked out (a property that hands the read on, ``return
    self.full_kv_pool.post_capture_active``): among the tree's writes of that attribute it adds no value of its
    own."""

    needs: tuple[str, ...]
    cycle: str = ""
    #: Which value it is, when that is known (:class:`Same`, or (its object's, an attribute, the object's changes so
    #: far)): two with equal *same* are one value, whatever it is.
    same: object = field(default=None, compare=False)


class Same:
    """The identity of one undecided value: what a name was bound to in one run of its function."""

    __slots__ = ("number",)
    _numbers = itertools.count(1)

    def __init__(self) -> None:
        self.number = next(Same._numbers)

    def __repr__(self) -> str:  # in the keys of remembered calls: one value, one key
        return f"<value {self.number}>"


Value = Known | Unknown


class Asked(Protocol):
    """What a value worked out when first read asks of the code it reads (:class:`Code`): the questions asked so
    far and the parses refused."""

    questions: int
    refused: int


class _Lazy:
    """A value worked out when first read (an assignment's, as the names stood when it ran)."""

    __slots__ = ("_compute", "_value", "_code", "_again")

    def __init__(self, compute: Callable[[], Value], code: Asked | None = None) -> None:
        self._compute: Callable[[], Value] | None = compute
        self._value: Value = Unknown(("a value being worked out",))
        self._code = code
        #: (the question, the computation) of an Unknown worked out without a file the limit refused: worked out
        #: again when a later question reads it.
        self._again: tuple[int, Callable[[], Value]] | None = None

    def force(self) -> Value:
        code = self._code
        if self._again is not None and code is not None and self._again[0] < code.questions:
            self._compute, self._again = self._again[1], None
        if self._compute is not None:
            compute, self._compute = self._compute, None
            refused = code.refused if code is not None else 0
            self._value = compute()
            if code is not None and isinstance(self._value, Unknown) and code.refused != refused:
                self._again = (code.questions, compute)
        return self._value


def _force(value: Value | _Lazy) -> Value:
    return value.force() if isinstance(value, _Lazy) else value


def _needs(values: Iterable[Value]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for v in values if isinstance(v, Unknown) for n in v.needs)) or ("a branch",)


def _choose(test: _Lazy, values: Sequence[Value | _Lazy]) -> Value:
    """The value of the branch *test* takes, once it is read; both merged when the test is undecided."""
    decided = test.force()
    if isinstance(decided, Known):
        return _why(_force(values[0 if decided.value else 1]), decided.why)
    return _merge(values, decided)


def _merge(lazy: Sequence[Value | _Lazy], test: Value) -> Value:
    values = [_force(v) for v in lazy]
    first = values[0]
    return first if all(_same(first, v) for v in values) else Unknown(_needs([test, *values]))


def _item(value: Value | _Lazy, index: int) -> Value:
    return _apply(operator.getitem, _force(value), Known(index))


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
}  # fmt: skip


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip


#: Values the evaluator builds no further than this (a string or list made huge by a loop).
_MAX_SIZE = 100_000


def _apply(function: Callable[[Any, Any], Any], left: Value, right: Value) -> Value:
    if isinstance(left, Unknown) or isinstance(right, Unknown):
        needs = [
            *(left.needs if isinstance(left, Unknown) else ()),
            *(right.needs if isinstance(right, Unknown) else ()),
        ]
        return Unknown(tuple(dict.fromkeys(needs)))
    if _too_large(function, left.value, right.value):
        return Unknown(("a value too large to follow",))
    result = _as_run(function, left.value, right.value)
    if isinstance(result, (str, list, tuple, set, dict)) and len(result) > _MAX_SIZE:
        return Unknown(("a value too large to follow",))
    return Known(result, tuple(dict.fromkeys((*left.why, *right.why))))


def _too_large(function: Callable[[Any, Any], Any], left: Any, right: Any) -> bool:
    """Whether an operation would build a value too large to follow (before it is built)."""
    sized = (str, bytes, list, tuple)
    if function is operator.mul:
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, sized) and isinstance(times, int) and len(seq) * max(times, 0) > _MAX_SIZE:
                return True
    if function in (operator.pow, operator.lshift) and isinstance(right, int) and not isinstance(right, bool):
        return abs(right) > 4096 and isinstance(left, int) and abs(left) > 1
    return False


def _and(left: Value, right: Value) -> Value:
    if isinstance(left, Known) and not left.value:
        return left
    if isinstance(right, Known) and not right.value:
        return right
    if isinstance(left, Unknown) or isinstance(right, Unknown):
        return _apply(lambda a, b: a and b, left, right)
    return Known(True, tuple(dict.fromkeys((*left.why, *right.why))))


def _why(value: Value, why: tuple[str, ...]) -> Value:
    return Known(value.value, tuple(dict.fromkeys((*why, *value.why)))) if isinstance(value, Known) else value


def _agreed(values: Sequence[Value]) -> Known:
    """The value several writes agree on, with the reasons of them all: the facts that decided them first (an
    environment default, a server argument), then the places (``path:line``)."""
    first = values[0]
    assert isinstance(first, Known)
    why = list(dict.fromkeys(w for v in values if isinstance(v, Known) for w in v.why))
    facts = [w for w in why if not _PLACE.search(w)]
    return Known(first.value, tuple([*facts, *(w for w in why if w not in facts)][:MAX_WHY]))


#: A reason that is a place of the code (``path:line``, ``f() at path:line``), not a fact.
_PLACE = re.compile(r":\d+\Z")


#: Reasons kept for a value several writes agree on.
MAX_WHY = 16


#: Where a run of a function keeps the last statement that may have changed an object its locals hold (a number
#: of its own for each such statement run: the same number, no change between).
_CHANGES = "\0changes"


_CHANGED = itertools.count(1)


#: Comparisons an undecided value decides with itself (NaN aside): what they give.
_IDENTITY: dict[type, bool] = {ast.Eq: True, ast.Is: True, ast.NotEq: False, ast.IsNot: False}


def _one_value(lazy: _Lazy) -> Value:
    """A name's value: undecided, it is still one value (every read of the name until it is bound again)."""
    value = lazy.force()
    return dataclasses.replace(value, same=Same()) if isinstance(value, Unknown) and value.same is None else value


def _one(left: Unknown, right: Unknown) -> bool:
    return left.same is not None and left.same == right.same


def _same(one: Value, other: Value) -> bool:
    if isinstance(one, Known) and isinstance(other, Known):
        try:
            return bool(one.value == other.value) and type(one.value) is type(other.value)
        except (TypeError, ValueError):
            return False
    return False


def _truthy(value: Value, needs: list[str]) -> bool:
    if isinstance(value, Unknown):
        needs += value.needs
        return False
    return bool(value.value)


def _unknown_op(left: Any, right: Any) -> Any:
    raise _Raises("an operator the evaluator does not follow")


class _Raises(Exception):
    """An operation on the program's values fails as it would when the program runs (``None + 1``,
    ``{}["k"]``, ``int("x")``): the value is unknown. Raised only by :func:`_as_run`, so that an exception of
    the evaluator's own is never taken for one."""


#: What an operation on the program's values may raise, as the program would.
_PROGRAM_ERRORS = (TypeError, ValueError, ArithmeticError, LookupError, AttributeError)


def _as_run(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """*function* applied to values of the program, its failure as the program's (``_Raises``)."""
    try:
        return function(*args, **kwargs)
    except _PROGRAM_ERRORS as exc:
        raise _Raises(f"{type(exc).__name__}: {exc}") from None


def _no_method(*args: Any) -> Any:
    raise _Raises("no such method")
