"""The release's bytes per token for the run's model, and the tokens the predicted budget gives.

The budget formula ends in a value of bytes or GB (``rest_memory``); somewhere after it the release divides that
value by the size one token takes (``int(rest_memory * (1 << 30)) // cell_size``). That place is found by
following the value from the formula's last statement: on in its function, out through a ``return`` into the
statement of each caller that binds the call's result, and into the functions it is passed to (a method of
``self``, of an object the evaluator decides, a function of the module or imported). The first division of the
followed value by something not a constant is the one; its divisor is evaluated by the release's code
(:mod:`sgtrace.analyses.evaluate`) and the value's reassignments on the way are applied (an overhead subtracted
first), so the tokens are the release's own arithmetic.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sgtrace.analyses.evaluate import ClassRef, Code, Instance, Known, chain_of, method_of
from sgtrace.analyses.explain import Cell, Explanation, Missing, Resolve, evaluate

#: Calls and returns followed from the formula's last statement to the division.
MAX_HOPS = 4
#: Callers of a function followed at each return.
MAX_CALLERS = 8

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class _Place:
    """A value followed: the name it has in a function, from a line on, and what it holds (None: not known)."""

    path: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    line: int
    name: str
    value: Any


def cell_of(code: Code, result: Explanation, resolve: Resolve) -> Cell | None:
    """The cell the release divides the predicted budget by, evaluated for the run (see the module doc); None
    where no division follows the formula or its size is not decided."""
    if not result.sized_at or result.kv_budget_gb is None:
        return None
    path, line = result.sized_at[-1]
    target = next((s.target for s in result.steps if (s.path, s.line) == (path, line)), "")
    function, _ = code.enclosing(path, line)
    if not target or not isinstance(function, _FUNCTIONS):
        return None
    for place in _followed(code, resolve, _Place(path, function, line, target, result.kv_budget_gb), 0, set()):
        found, cell = _divided(code, resolve, place)
        if found:
            return cell
    return None


def _later(place: _Place) -> list[ast.stmt]:
    """The statements of the place's function after its line, in order."""
    kinds = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)
    found = [s for s in ast.walk(place.function) if isinstance(s, kinds) and s.lineno > place.line]
    return sorted(found, key=lambda s: (s.lineno, s.col_offset))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _lookup(place: _Place, resolve: Resolve, line: int) -> Any:
    """A name's value for :func:`~sgtrace.analyses.explain.evaluate`: the followed value, else the release's code
    evaluated at *line* (Missing when it is not decided)."""

    def lookup(name: str) -> Any:
        if name == place.name:
            if place.value is None:
                raise Missing(name)
            return place.value
        value = resolve(name, place.path, line)
        if isinstance(value, Known):
            return value.value
        raise Missing(name)

    return lookup


def _divided(code: Code, resolve: Resolve, place: _Place) -> tuple[bool, Cell | None]:
    """(whether the place's function divides the value by a size, the cell when its size is decided)."""
    value = place.value
    for statement in _later(place):
        if not _runs(code, resolve, place, statement):
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Div))):
                continue
            if place.name not in _names(node.left) or isinstance(node.right, ast.Constant):
                continue  # not the value, or a change of unit
            size = resolve(ast.unparse(node.right), place.path, statement.lineno)
            per_token = size.value if isinstance(size, Known) else None
            if not isinstance(per_token, int) or isinstance(per_token, bool) or per_token <= 0:
                return True, None
            at = _Place(place.path, place.function, place.line, place.name, value)
            try:
                left = evaluate(node.left, _lookup(at, resolve, statement.lineno))
                tokens = int(left // per_token if isinstance(node.op, ast.FloorDiv) else left / per_token)
            except (Missing, TypeError, ValueError, ArithmeticError):
                tokens = None
            source = code.text(place.path).decode("utf-8", "replace")
            text = ast.get_source_segment(source, statement) or ast.unparse(statement)
            return True, Cell(per_token, tokens, place.path, statement.lineno, " ".join(text.split()), size.why)
        value = _rebound(code, resolve, dataclasses.replace(place, value=value), statement)
    return False, None


def _runs(code: Code, resolve: Resolve, place: _Place, statement: ast.stmt) -> bool:
    """Whether *statement* may run: False when a condition it runs under is decided false for the run."""
    for test in code.guards(place.path, statement.lineno):
        decided = resolve(test, place.path, statement.lineno)
        if isinstance(decided, Known) and not decided.value:
            return False
    return True


def _rebound(code: Code, resolve: Resolve, place: _Place, statement: ast.stmt) -> Any:
    """The followed value after *statement*: what it binds to the name when it does and runs (``available =
    max(available - overhead, 0)``; None when that is not decided), else the value as it was. A statement under a
    condition the run decides false does not run."""
    name = place.name
    if isinstance(statement, ast.Assign):
        rebinds = any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        rebinds = isinstance(statement.target, ast.Name) and statement.target.id == name
    else:
        rebinds = False
    if not rebinds or getattr(statement, "value", None) is None:
        return place.value
    if not _runs(code, resolve, place, statement):
        return place.value
    assert isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None
    expression: ast.expr = statement.value
    if isinstance(statement, ast.AugAssign):
        expression = ast.BinOp(ast.Name(name, ast.Load()), statement.op, statement.value)
    try:
        return evaluate(expression, _lookup(place, resolve, statement.lineno))
    except (Missing, TypeError, ValueError, ArithmeticError):
        return None


def _followed(
    code: Code, resolve: Resolve, place: _Place, hops: int, seen: set[tuple[str, int, str]]
) -> Iterator[_Place]:
    """*place*, then the places its value goes to: the callers' bindings of what its function returns, and the
    parameters of the functions it is passed to (at most MAX_HOPS away)."""
    key = (place.path, place.function.lineno, place.name)
    if key in seen:
        return
    seen.add(key)
    yield place
    if hops >= MAX_HOPS:
        return
    for statement in _later(place):
        if not _runs(code, resolve, place, statement):
            continue
        if isinstance(statement, ast.Return) and statement.value is not None and place.name in _names(statement.value):
            try:
                value = evaluate(statement.value, _lookup(place, resolve, statement.lineno))
            except (Missing, TypeError, ValueError, ArithmeticError):
                value = None
            for caller in _callers(code, place.function.name):
                yield from _followed(code, resolve, _Place(*caller, value), hops + 1, seen)
            continue
        for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)):
            parameter = _parameter(code, resolve, place, statement.lineno, call)
            if parameter is not None:
                path, function, name = parameter
                into = _Place(path, function, function.lineno, name, place.value)
                yield from _followed(code, resolve, into, hops + 1, seen)
        place = dataclasses.replace(place, value=_rebound(code, resolve, place, statement))


def _callers(code: Code, name: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int, str]]:
    """(path, function, line, name) of each statement ``name = f(...)`` (or ``self.f(...)``) of the tree."""
    called = re.compile(rb"\b" + re.escape(name.encode()) + rb"\s*\(")
    count = 0
    for path in code.naming(name) or ():
        for call in code.calls(path, called):
            if chain_of(call.func)[-1:] != [name]:
                continue
            function, _ = code.enclosing(path, call.lineno)
            if not isinstance(function, _FUNCTIONS):
                continue
            for statement in ast.walk(function):
                if isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1:
                    target = statement.targets[0]
                    if isinstance(target, ast.Name):
                        count += 1
                        yield path, function, statement.lineno, target.id
            if count >= MAX_CALLERS:
                return


def _parameter(
    code: Code, resolve: Resolve, place: _Place, line: int, call: ast.Call
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, str] | None:
    """The function of the tree *call* runs and the name of its parameter that receives the followed value."""
    position = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == place.name), None)
    keyword = next((k.arg for k in call.keywords if isinstance(k.value, ast.Name) and k.value.id == place.name), None)
    if position is None and keyword is None:
        return None
    callee = _callee(code, resolve, place, line, call)
    if callee is None:
        return None
    path, function, method = callee
    if keyword is not None:
        return path, function, keyword
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)][1 if method else 0 :]
    assert position is not None
    return (path, function, positional[position]) if position < len(positional) else None


def _callee(
    code: Code, resolve: Resolve, place: _Place, line: int, call: ast.Call
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool] | None:
    """(path, function, whether it is a method) a call runs: a function of the module or imported, a method of
    ``self``'s class, or of an object the evaluator decides."""
    chain = chain_of(call.func)
    if isinstance(call.func, ast.Name):
        local = code.function_in(place.path, call.func.id)
        if local is not None:
            return place.path, local, False
        imported = code.imported(place.path, call.func.id, place.function)
        found = code.function_in(*imported) if imported is not None else None
        return (imported[0], found, False) if imported is not None and found is not None else None
    if len(chain) != 2 or not isinstance(call.func, ast.Attribute):
        return None
    if chain[0] == "self":
        _, cls = code.enclosing(place.path, line)
        ref = ClassRef(place.path, cls) if cls is not None else None
    else:
        receiver = resolve(chain[0], place.path, line)
        held = receiver.value if isinstance(receiver, Known) else None
        ref = held.ref if isinstance(held, Instance) else held if isinstance(held, ClassRef) else None
    method = method_of(code, ref, chain[1]) if ref is not None else None
    return (method[0], method[1], True) if method is not None else None
