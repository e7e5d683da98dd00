"""Expressions, dispatched by node type (:data:`EXPRESSIONS`)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from sgtrace.analyses.evaluate.memo import Memo, _Scope
from sgtrace.analyses.evaluate.objects import ClassRef, Member
from sgtrace.analyses.evaluate.syntax import _text, chain_of, handler_of
from sgtrace.analyses.evaluate.values import (
    _BINARY,
    _COMPARE,
    _IDENTITY,
    Known,
    Unknown,
    Value,
    _and,
    _apply,
    _as_run,
    _one,
    _Raises,
    _same,
    _truthy,
    _why,
)

#: Items ``any()`` and the like walk at most.
MAX_ITEMS = 2_000


class Expressions(Memo):
    """Evaluates an expression, by its node type."""

    def expr(self, node: ast.expr, scope: _Scope) -> Value:
        """*node*'s value. An operation on the program's values that fails as it would when the program runs
        (``_Raises``), or code nested past Python's recursion limit, is unknown; any other exception is the
        evaluator's own error and goes up (an internal error for the user, a failure under the tests)."""
        try:
            return self._expr(node, scope)
        except (_Raises, RecursionError):
            return Unknown((_text(node),))

    def _expr(self, node: ast.expr, scope: _Scope) -> Value:
        handler = EXPRESSIONS.get(type(node)) or handler_of(EXPRESSIONS, type(node))
        return handler(self, node, scope) if handler is not None else Unknown((_text(node),))

    def _constant(self, node: ast.Constant, scope: _Scope) -> Value:
        return Known(node.value)

    def _binary(self, node: ast.BinOp, scope: _Scope) -> Value:
        if type(node.op) not in _BINARY:
            return Unknown((_text(node),))
        return _apply(_BINARY[type(node.op)], self.expr(node.left, scope), self.expr(node.right, scope))

    def _unary(self, node: ast.UnaryOp, scope: _Scope) -> Value:
        operand = self.expr(node.operand, scope)
        if isinstance(operand, Unknown):
            return operand
        return Known(_as_run(_UNARY[type(node.op)], operand.value), operand.why)

    def _if_else(self, node: ast.IfExp, scope: _Scope) -> Value:
        test = self.expr(node.test, scope)
        if isinstance(test, Unknown):
            body, orelse = self.expr(node.body, scope), self.expr(node.orelse, scope)
            return body if _same(body, orelse) else test
        return _why(self.expr(node.body if test.value else node.orelse, scope), test.why)

    def _subscript(self, node: ast.Subscript, scope: _Scope) -> Value:
        if chain_of(node.value)[-2:] == ["os", "environ"]:  # os.environ["NAME"]: unset, a KeyError
            return self._environ(self.expr(node.slice, scope), None, node)
        value, index = self.expr(node.value, scope), self.expr(node.slice, scope)
        if isinstance(value, Known) and isinstance(value.value, ClassRef) and isinstance(index, Known):
            if not isinstance(index.value, str):
                return Unknown((_text(node),))
            member = self._class_attribute(value.value, index.value)  # an enum's member by its name
            return (
                member if isinstance(member, Unknown) or isinstance(member.value, Member) else Unknown((_text(node),))
            )
        return _apply(lambda v, i: v[i], value, index)

    def _named(self, node: ast.NamedExpr, scope: _Scope) -> Value:
        value = self.expr(node.value, scope)
        if scope.env is not None:
            scope.env[node.target.id] = value
        return value

    def _bool(self, node: ast.BoolOp, scope: _Scope) -> Value:
        """``and``/``or`` in three values: a known operand that decides it does, even after an unknown one."""
        deciding = isinstance(node.op, ast.Or)
        needs: list[str] = []
        why: list[str] = []
        last: Value = Known(not deciding)
        for operand in node.values:
            value = self.expr(operand, scope)
            if isinstance(value, Unknown):
                needs += value.needs
                last = value
                continue
            if bool(value.value) is deciding:
                return Known(value.value, value.why)
            why += value.why
            last = value
        if needs:
            return Unknown(tuple(dict.fromkeys(needs)))
        return Known(last.value if isinstance(last, Known) else not deciding, tuple(dict.fromkeys(why)))

    def _compare(self, node: ast.Compare, scope: _Scope) -> Value:
        left = self.expr(node.left, scope)
        result: Value = Known(True)
        left_node = node.left
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.expr(right_node, scope)
            step = _apply(_COMPARE[type(op)], left, right)
            if isinstance(left, Unknown) and isinstance(right, Unknown) and _one(left, right) and type(op) in _IDENTITY:
                step = Known(
                    _IDENTITY[type(op)],
                    (f"{_text(left_node)} holding {_text(right_node)} unchanged, whatever its value",),
                )
            left_node = right_node
            if isinstance(step, Known) and not step.value:
                return step
            result = _and(result, step)
            left = right
        return result

    def _collection(self, node: ast.List | ast.Tuple | ast.Set, scope: _Scope) -> Value:
        items: list[Any] = []
        why: list[str] = []
        for element in node.elts:
            spread = isinstance(element, ast.Starred)
            value = self.expr(element.value if isinstance(element, ast.Starred) else element, scope)
            if isinstance(value, Unknown):
                return Unknown(value.needs)  # not the value read again: a collection holding it
            items.extend(_as_run(list, value.value)) if spread else items.append(value.value)
            why += value.why
        made: Any = items if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else None
        made = _as_run(set, items) if made is None else made
        return Known(made, tuple(dict.fromkeys(why)))

    def _dict(self, node: ast.Dict, scope: _Scope) -> Value:
        made: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.expr(value_node, scope)
            if isinstance(value, Unknown):
                return Unknown(value.needs)
            if key_node is None:
                _as_run(made.update, value.value)
                continue
            key = self.expr(key_node, scope)
            if isinstance(key, Unknown):
                return key
            _as_run(made.__setitem__, key.value, value.value)
        return Known(made)

    def _generated(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, scope: _Scope, lazy: bool) -> Value:
        """The items of a one-``for`` comprehension over a known sequence (conditions known per item)."""
        if len(node.generators) != 1 or not isinstance(node.generators[0].target, ast.Name):
            return Unknown((_text(node),))
        generator = node.generators[0]
        assert isinstance(generator.target, ast.Name)
        iterable = self.expr(generator.iter, scope)
        if isinstance(iterable, Unknown):
            return iterable
        items = _as_run(list, iterable.value)[:MAX_ITEMS]
        out = []
        needs: list[str] = []
        env = dict(scope.env or {})
        inner = _Scope(scope.path, scope.function, scope.cls, scope.line, env, scope.depth)
        target = generator.target.id
        for item in items:
            env[target] = Known(item)
            if not all(_truthy(self.expr(c, inner), needs) for c in generator.ifs):
                continue
            value = self.expr(node.elt, inner)
            if isinstance(value, Unknown):
                needs += value.needs
                continue
            out.append(value.value)
            if lazy and value.value and not needs:
                break
        if needs and not (lazy and any(out)):
            return Unknown(tuple(dict.fromkeys(needs)))
        return Known(out, iterable.why)


#: The unary operators, by the operator's node type.
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.inv
}  # fmt: skip

#: Expression node type -> its handler (a node of a type not here, nor a subclass of one, is unknown). Adding a
#: construct is one entry and its handler. Another room's handler is called through ``self`` (a lambda):
#: ``Expressions._call`` would be Memo's abstract declaration of it, not the Calls room's method.
EXPRESSIONS: dict[type, Callable[[Expressions, Any, _Scope], Value]] = {
    ast.Constant: Expressions._constant,
    ast.Name: lambda self, node, scope: self._name(node.id, scope),
    ast.Attribute: lambda self, node, scope: self._attribute(node, scope),
    ast.BinOp: Expressions._binary,
    ast.UnaryOp: Expressions._unary,
    ast.BoolOp: Expressions._bool,
    ast.Compare: Expressions._compare,
    ast.IfExp: Expressions._if_else,
    ast.List: Expressions._collection,
    ast.Tuple: Expressions._collection,
    ast.Set: Expressions._collection,
    ast.Dict: Expressions._dict,
    ast.Subscript: Expressions._subscript,
    ast.Call: lambda self, node, scope: self._call(node, scope),
    ast.NamedExpr: Expressions._named,
}
