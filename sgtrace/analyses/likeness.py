"""How alike two caps are, by what they do rather than where they are: the measure ``diff`` pairs them by.

A cap is reduced to a :class:`Shape` through the standard library's ``ast``:
formatting goes (the statement is parsed and unparsed), receivers go
(``self.server_args.page_size`` and ``get_schedule().page_size`` are both
``page_size``; ``self._x`` is ``x``), and for its *form* every variable is
numbered by first appearance (``self.x = min(self.x, y)`` and ``t = min(t, u)``
are both ``v0 = min(v0, v1)``); the names of called functions stay. The guard
and the exits are read with the same numbering, so a condition on the same
variable reads alike after a rename.

:func:`similarity` weighs four parts (docs/diff.md gives the figures measured
on real releases that chose the weights and :data:`THRESHOLD`):

- the form of the code (difflib's ratio of the two token sequences),
- the words of the names the code uses (Jaccard of their ``_``-separated parts:
  what the names say, which the form forgets; ``v0 = v1`` is every copy),
  leaving out the words of the attribute analysed, which nearly every cap holds,
- the conditions (ratio of their forms),
- the knobs (Jaccard of their last names).

A part neither cap has anything for (no condition on either, no knob on either)
counts :data:`NEITHER`: it is no evidence either way.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from difflib import SequenceMatcher

from sgtrace.model import Cap

#: Weights of form, words, conditions and knobs in :func:`similarity` (they sum to 1).
WEIGHTS = (0.3, 0.3, 0.2, 0.2)
#: What a part counts when neither cap has anything for it.
NEITHER = 0.5
#: Two caps of one category pair when their similarity reaches this (see docs/diff.md for the measurements).
THRESHOLD = 0.6


@dataclass(frozen=True, slots=True)
class Shape:
    """A cap reduced to what pairing compares."""

    #: Tokens of the statement without receivers, names kept.
    tokens: tuple[str, ...]
    #: The same tokens with each variable numbered by first appearance (``v0``, ``v1``...).
    form: tuple[str, ...]
    #: The ``_``-separated parts of the names the statement uses.
    words: frozenset[str]
    #: Tokens of the guard and the exits, in the statement's numbering.
    conditions: tuple[str, ...]
    #: The same tokens with their names.
    condition_tokens: tuple[str, ...]
    #: The knobs' last names.
    knobs: frozenset[str]
    #: Variable name -> its number in ``form`` (what a rename maps).
    variables: tuple[str, ...]


class _Strip(ast.NodeTransformer):
    """``a.b.c`` -> ``c`` and ``_c`` -> ``c``: receivers and privacy marks say where, not what."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return ast.copy_location(ast.Name(id=node.attr.lstrip("_") or node.attr, ctx=node.ctx), node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=node.id.lstrip("_") or node.id, ctx=node.ctx), node)


def _stripped(code: str) -> tuple[str, frozenset[str]]:
    """*code* unparsed without receivers, and the names it calls; the words themselves if it does not parse."""
    text = code.strip()
    try:
        tree = _Strip().visit(ast.parse(text if not text.endswith(":") else text + " pass"))
    except SyntaxError:
        return " ".join(re.findall(r"\w+|[^\s\w]", text)), frozenset()
    called = frozenset(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return ast.unparse(tree), called


def _tokens(text: str) -> list[str]:
    try:
        found = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.string.strip()]
    except (tokenize.TokenError, SyntaxError):
        found = re.findall(r"\w+|[^\s\w]", text)
    return found


def _is_variable(token: str, called: frozenset[str]) -> bool:
    return token.isidentifier() and not keyword.iskeyword(token) and token not in called


def _number(tokens: list[str], called: frozenset[str], numbers: dict[str, int]) -> tuple[str, ...]:
    """*tokens* with each variable replaced by ``v<n>``, *numbers* growing as new ones appear."""
    form = []
    for token in tokens:
        if _is_variable(token, called):
            form.append(f"v{numbers.setdefault(token, len(numbers))}")
        else:
            form.append(token)
    return tuple(form)


def tokens(code: str) -> tuple[str, ...]:
    """The tokens of *code* without receivers, names kept (layout and ``self.``/``x.y.`` aside)."""
    return tuple(_tokens(_stripped(code)[0]))


def shape(cap: Cap, attribute: str = "") -> Shape:
    """The cap as pairing sees it; the words of *attribute* are left out of its words."""
    text, called = _stripped(cap.code)
    tokens = _tokens(text)
    numbers: dict[str, int] = {}
    form = _number(tokens, called, numbers)
    conditions: list[str] = []
    named: list[str] = []
    for condition in cap.conditions:
        condition_text, condition_called = _stripped(condition)
        found = _tokens(condition_text)
        conditions += [*(["and"] if conditions else []), *_number(found, condition_called, numbers)]
        named += [*(["and"] if named else []), *found]
    names = [t for t in tokens if t.isidentifier() and not keyword.iskeyword(t)]
    common = _words([attribute])
    words = _words(names) - common
    knobs = frozenset(re.split(r"[.)]", knob)[-1].lstrip("_") for knob in cap.knobs)
    variables = tuple(sorted(numbers, key=numbers.__getitem__))
    return Shape(tuple(tokens), form, words, tuple(conditions), tuple(named), knobs, variables)


def _words(names: list[str]) -> frozenset[str]:
    return frozenset(w for name in names for w in name.lower().split("_") if w)


def parts(old: Shape, new: Shape) -> tuple[float, float, float, float]:
    """(form, words, conditions, knobs) similarities, each in [0, 1]."""
    return (
        _ratio(old.form, new.form),
        _jaccard(old.words, new.words),
        _ratio(old.conditions, new.conditions),
        _jaccard(old.knobs, new.knobs),
    )


def similarity(old: Shape, new: Shape) -> float:
    """The weighted sum of :func:`parts` (:data:`WEIGHTS`), in [0, 1]."""
    return sum(weight * part for weight, part in zip(WEIGHTS, parts(old, new), strict=True))


def renames(old: Shape, new: Shape) -> tuple[tuple[str, str], ...]:
    """(old name, new name) for each variable numbered alike in two shapes of one form whose names differ."""
    return tuple((a, b) for a, b in zip(old.variables, new.variables, strict=False) if a != b)


def _ratio(left: tuple[str, ...], right: tuple[str, ...]) -> float:
    if not left and not right:
        return NEITHER
    return SequenceMatcher(None, left, right, autojunk=False).ratio()


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left and not right:
        return NEITHER
    return len(left & right) / len(left | right)
