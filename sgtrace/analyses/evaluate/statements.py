"""Statements, run by one table keyed by statement type (:data:`STATEMENTS`)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence
from typing import Any

from sgtrace.analyses.evaluate.memo import Memo, _Return, _Scope
from sgtrace.analyses.evaluate.syntax import _holds, _targets, _text, chain_of, handler_of
from sgtrace.analyses.evaluate.values import (
    _BINARY,
    _CHANGED,
    _CHANGES,
    Known,
    Unknown,
    Value,
    _apply,
    _as_run,
    _choose,
    _force,
    _item,
    _Lazy,
    _merge,
    _needs,
    _no_method,
    _one_value,
    _Raises,
    _same,
    _unknown_op,
)

#: Items a ``for`` statement's body is run for at most.
MAX_LOOP = 256


def _stored(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)} | {
            n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    if isinstance(node, ast.While):
        return {
            n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return {
            n.id for i in node.items if i.optional_vars for n in ast.walk(i.optional_vars) if isinstance(n, ast.Name)
        }
    if isinstance(node, ast.NamedExpr):
        return {node.target.id}
    return set()


class Statements(Memo):
    """Runs a body's statements."""

    def _run(self, body: Sequence[ast.stmt], scope: _Scope, top: bool = False, until: int | None = None) -> bool:
        """Run *body* in *scope*'s env, up to the statement holding line *until* (True once there); raises
        _Return with the value a ``return`` gives (Unknown when an earlier ``return`` may have been taken)."""
        env = scope.env
        assert env is not None
        for statement in body:
            end = statement.end_lineno or statement.lineno
            if until is not None and statement.lineno > until:
                return True
            scope.line = statement.lineno
            if until is not None and statement.lineno <= until <= end:
                return self._into(statement, scope, top, until)
            if self.code.changes(statement):  # an object a local holds may change: its attributes are read anew
                env[_CHANGES] = Known(next(_CHANGED))
            handler = STATEMENTS.get(type(statement)) or handler_of(STATEMENTS, type(statement))
            if handler is not None:
                handler(self, statement, scope, top)
        return False

    def _return(self, statement: ast.Return, scope: _Scope, top: bool) -> None:
        value = self.expr(statement.value, scope) if statement.value else Known(None)
        earlier = scope.returned
        if earlier:
            value = value if all(_same(value, e) for e in earlier) else Unknown(_needs(earlier))
        raise _Return(value)

    def _assign(self, statement: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope, top: bool) -> None:
        self._store(statement, scope)

    def _inner(self, statement: ast.With | ast.AsyncWith | ast.Try, scope: _Scope, top: bool) -> None:
        """A ``with``'s body, a ``try``'s (its handlers, ``else`` and ``finally`` are not run)."""
        self._run(statement.body, scope, top)

    def _expr_statement(self, statement: ast.Expr, scope: _Scope, top: bool) -> None:
        if top:
            self._mutate(statement.value, scope)
        elif isinstance(statement.value, ast.NamedExpr):
            self.expr(statement.value, scope)

    def _raise(self, statement: ast.Raise, scope: _Scope, top: bool) -> None:
        if not top:
            raise _Return(Unknown(("an exception",)) if not scope.returned else Unknown(_needs(scope.returned)))

    def _for(self, statement: ast.For, scope: _Scope, top: bool) -> None:
        if not top and not self._loop(statement, scope):
            self._unrolled(statement, scope, top)

    def _unrolled(self, statement: ast.For | ast.While | ast.AsyncFor, scope: _Scope, top: bool) -> None:
        """A loop not run: the names it binds are undecided, and a ``return`` in it may have been taken."""
        if top:
            return
        assert scope.env is not None
        for name in _stored(statement):
            scope.env[name] = Unknown((name,))
        if any(isinstance(n, ast.Return) for n in ast.walk(statement)):
            scope.returned.append(Unknown((_text(statement.iter) if isinstance(statement, ast.For) else "a loop",)))

    def _loop(self, statement: ast.For, scope: _Scope) -> bool:
        """A ``for`` over a decided sequence of at most MAX_LOOP items, with no ``break`` or ``continue``: its body
        run for each item (a ``return`` in it returns); False (not run) otherwise."""
        if any(isinstance(n, (ast.Break, ast.Continue)) for s in statement.body for n in ast.walk(s)):
            return False
        names = [statement.target] if isinstance(statement.target, ast.Name) else getattr(statement.target, "elts", [])
        if not names or not all(isinstance(n, ast.Name) for n in names):
            return False
        iterable = self.expr(statement.iter, scope)
        if not isinstance(iterable, Known) or not isinstance(iterable.value, (list, tuple, set, frozenset, dict, str)):
            return False
        items = list(iterable.value)
        if len(items) > MAX_LOOP:
            return False
        env = scope.env
        assert env is not None
        scope.decided.extend(iterable.why)
        for item in items:
            if isinstance(statement.target, ast.Name):
                env[statement.target.id] = Known(item, iterable.why)
            elif isinstance(item, (list, tuple)) and len(item) == len(names):
                for name, part in zip(names, item, strict=True):
                    env[name.id] = Known(part, iterable.why)
            else:
                return False
            self._run(statement.body, scope)
        self._run(statement.orelse, scope)
        return True

    def _into(self, statement: ast.stmt, scope: _Scope, top: bool, until: int) -> bool:
        """Run into the part of compound *statement* that holds line *until* (the read is on that way)."""
        assert scope.env is not None
        parts: list[Sequence[ast.stmt]] = []
        if isinstance(statement, ast.If):
            parts = [statement.body, statement.orelse]  # the read is on that branch: its test need not be known
        elif isinstance(statement, (ast.For, ast.While, ast.AsyncFor)):
            for name in _stored(statement):
                scope.env[name] = Unknown((name,))
            parts = [statement.body, statement.orelse]
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            parts = [statement.body]
        elif isinstance(statement, ast.Try):
            parts = [statement.body, *[h.body for h in statement.handlers], statement.orelse, statement.finalbody]
        for part in parts:
            if _holds(part, until):
                return self._run(part, scope, top, until)
        return True

    def _store(self, statement: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope) -> None:
        env = scope.env
        assert env is not None
        if statement.value is None:
            return
        value = self._later(statement.value, scope)
        if isinstance(statement, ast.AugAssign):
            if isinstance(statement.target, ast.Name):
                name = statement.target.id
                before = env.get(name) or self._name(name, scope)
                op = _BINARY.get(type(statement.op), _unknown_op)
                env[name] = _Lazy(lambda: _apply(op, _force(before), _force(value)), self.code)
            return
        for target in _targets(statement):
            if isinstance(target, ast.Name):
                env[target.id] = _Lazy(functools.partial(_one_value, value), self.code)
            elif isinstance(target, ast.Attribute) and chain_of(target) == ["self", target.attr]:
                env[f"self.{target.attr}"] = value  # the instance's attribute, as the function's flow sets it
            elif isinstance(target, (ast.Tuple, ast.List)):
                for i, element in enumerate(target.elts):
                    if isinstance(element, ast.Name):
                        env[element.id] = _Lazy(functools.partial(_item, value, i), self.code)
                    elif isinstance(element, ast.Attribute) and chain_of(element) == ["self", element.attr]:
                        env[f"self.{element.attr}"] = _Lazy(functools.partial(_item, value, i), self.code)

    def _later(self, node: ast.expr, scope: _Scope) -> _Lazy:
        """*node*'s value as the names stand now, worked out when first read."""
        at = _Scope(scope.path, scope.function, scope.cls, scope.line, dict(scope.env or {}), scope.depth)
        return _Lazy(lambda: self.expr(node, at), self.code)

    def _if(self, statement: ast.If, scope: _Scope, top: bool) -> None:
        env = scope.env
        assert env is not None
        if not top and not self.code.exits(statement):
            # no way out of the function in it: its test is worked out only if a name it decides is read
            test_later = self._later(statement.test, scope)
            ran = []
            for body in (statement.body, statement.orelse):
                inner = _Scope(scope.path, scope.function, scope.cls, scope.line, dict(env), scope.depth)
                self._run(body, inner, top)
                ran.append(inner.env or {})
            for name in {n for b in ran for n in b}:
                values = [b.get(name, env.get(name, Unknown((name,)))) for b in ran]
                if not all(v is values[0] for v in values):
                    env[name] = _Lazy(functools.partial(_choose, test_later, values), self.code)
            return
        test = self.expr(statement.test, scope)
        if isinstance(test, Known):
            scope.decided.extend(test.why)
            self._run(statement.body if test.value else statement.orelse, scope, top)
            return
        branches: list[dict[str, Value | _Lazy]] = []
        returned: list[Value] = []
        for body in (statement.body, statement.orelse):
            inner = _Scope(
                scope.path, scope.function, scope.cls, scope.line, dict(env), scope.depth, list(scope.returned)
            )
            try:
                self._run(body, inner, top)
                branches.append(inner.env or {})
            except _Return as done:
                returned.append(done.value)
        if len(returned) == 2:
            raise _Return(returned[0] if _same(*returned) else Unknown(_needs([test, *returned])))
        if returned:
            scope.returned.append(Unknown(test.needs) if not isinstance(returned[0], Unknown) else returned[0])
            scope.returned.append(returned[0])
        for name in {n for b in branches for n in b}:
            values = [b.get(name, env.get(name, Unknown((name,)))) for b in branches]
            if all(v is values[0] for v in values):
                env[name] = values[0]
            else:
                env[name] = _Lazy(functools.partial(_merge, values, test), self.code)

    def _mutate(self, node: ast.expr, scope: _Scope) -> None:
        """A module's own ``NAME.append(x)``/``extend``/``add``/``update`` on a constant it holds."""
        env = scope.env
        assert env is not None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return
        receiver = node.func.value
        if not isinstance(receiver, ast.Name) or receiver.id not in env:
            return
        method = node.func.attr
        if method not in ("append", "extend", "add", "update", "insert"):
            return
        before = _force(env[receiver.id])
        args = [self.expr(a, scope) for a in node.args]
        if isinstance(before, Unknown) or any(isinstance(a, Unknown) for a in args):
            env[receiver.id] = Unknown((receiver.id,))
            return
        try:
            copy = _as_run(type(before.value), before.value)
            _as_run(getattr(copy, method, _no_method), *(a.value for a in args if isinstance(a, Known)))
        except _Raises:  # the program would fail here: what the name holds after it is not known
            env[receiver.id] = Unknown((receiver.id,))
            return
        env[receiver.id] = Known(copy, before.why)


#: Statement type -> its handler, given the statement, the scope and whether the body is a module's (``top``: an
#: expression statement is a change to what it names, such as the module's own appends; a ``raise`` or a loop is
#: passed over). A statement of a type not here (nor a subclass of one) is passed over. Adding a construct is one
#: entry and its handler.
STATEMENTS: dict[type, Callable[[Statements, Any, _Scope, bool], None]] = {
    ast.Return: Statements._return,
    ast.Assign: Statements._assign,
    ast.AnnAssign: Statements._assign,
    ast.AugAssign: Statements._assign,
    ast.If: Statements._if,
    ast.With: Statements._inner,
    ast.AsyncWith: Statements._inner,
    ast.Try: Statements._inner,
    ast.Expr: Statements._expr_statement,
    ast.Raise: Statements._raise,
    ast.For: Statements._for,
    ast.While: Statements._unrolled,
    ast.AsyncFor: Statements._unrolled,
}
