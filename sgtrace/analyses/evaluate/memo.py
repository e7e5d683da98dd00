"""What every room of the evaluator shares: the scope a body runs in, the memo, and what the rooms ask of
one another."""

from __future__ import annotations

import abc
import ast
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.evaluate.facts import Facts, Profile, _typed
from sgtrace.analyses.evaluate.objects import ClassRef
from sgtrace.analyses.evaluate.source import Code
from sgtrace.analyses.evaluate.values import Unknown, Value, _Lazy


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


@dataclass
class _Scope:
    path: str
    function: ast.AST | None
    cls: ast.ClassDef | None
    line: int
    #: While a body runs: its names' values so far; None when names are read as they stand at *line*.
    env: dict[str, Value | _Lazy] | None = None
    depth: int = 0
    #: Values an earlier ``return`` under an undecided condition may have given.
    returned: list[Value] = field(default_factory=list)
    #: What decided the conditions taken so far (facts and places).
    decided: list[str] = field(default_factory=list)


class Memo:
    """The state the rooms share: the code, the facts, the profile and what was worked out (the memo)."""

    def __init__(self, code: Code, facts: Facts, profile: Profile | None = None) -> None:
        self.code = code
        self.profile = profile or Profile()
        if facts.model is not None and self.profile.words.dtypes:
            values = _typed(facts.model.values, self.profile.words)
            facts = dataclasses.replace(facts, model=dataclasses.replace(facts.model, values=values))
        self.facts = facts
        self._attributes: dict[tuple[str, str], Value] = {}
        self._module_env: dict[str, dict[str, Value | _Lazy]] = {}
        self._calls: dict[tuple[int, str], Value] = {}
        self._locals: dict[tuple[int, int], dict[str, Value | _Lazy]] = {}
        self._busy: set[object] = set()
        self._owned_writes: dict[tuple[str, str, str], tuple[list[tuple[str, ast.ClassDef, ast.stmt]], bool]] = {}
        self._callers: dict[tuple[str, int, str], list[Value] | None] = {}
        #: Memo entries worked out without a file the limit refused: (memo, key) -> the question; a later
        #: question works them out again.
        self._stale: dict[tuple[int, object], int] = {}
        code.evaluators.add(self)

    def forget(self) -> None:
        """Drop what was worked out (the values still to work out hold this evaluator, in a cycle, and the
        syntax they were to read): asked again, it is worked out again."""
        for memo in (self._attributes, self._module_env, self._calls, self._locals, self._busy, self._owned_writes,
                     self._callers, self._stale):  # fmt: skip
            memo.clear()

    def _kept(self, memo: dict[Any, Any], key: object) -> bool:
        """Whether *memo* holds a value for *key* this question may use."""
        if key not in memo:
            return False
        asked = self._stale.get((id(memo), key))
        if asked is not None and asked < self.code.questions:
            del memo[key], self._stale[(id(memo), key)]
            return False
        return True

    def _cut_short(self, value: Unknown) -> Unknown:
        """*value*, for a value read while it is being worked out: what is worked out from it is undecided for
        this question only (a later one works it out again, from outside the cycle)."""
        self.code.refused += 1
        return value

    def _keep(self, memo: dict[Any, Any], key: object, value: Any, refused: int, undecided: bool) -> None:
        """*value* into *memo*; an undecided one worked out while the limit refused a file, as stale."""
        memo[key] = value
        if undecided and self.code.refused != refused:
            self._stale[(id(memo), key)] = self.code.questions

    # -- what the rooms ask of one another (each defined in its room) --------------------------------
    @abc.abstractmethod
    def expr(self, node: ast.expr, scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _name(self, name: str, scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _attribute(self, node: ast.Attribute, scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _class_attribute(self, ref: ClassRef, name: str) -> Value: ...

    @abc.abstractmethod
    def _flows(
        self, writes: list[tuple[str, ast.ClassDef, ast.stmt]], attr: str, scope: _Scope, values: list[Value]
    ) -> list[tuple[str, ast.ClassDef, ast.stmt]]: ...

    @abc.abstractmethod
    def _written(self, attr: str, chain: Sequence[str], scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _computes(self, attr: str, chain: Sequence[str], scope: _Scope) -> bool: ...

    @abc.abstractmethod
    def _parameter(
        self,
        path: str,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        owner: ast.ClassDef | None,
        name: str,
        depth: int,
    ) -> Value: ...

    @abc.abstractmethod
    def _call(self, node: ast.Call, scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _body(
        self, function: ast.AST, path: str, cls: ast.ClassDef | None, bound: dict[str, Value], depth: int
    ) -> Value: ...

    @abc.abstractmethod
    def _generated(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, scope: _Scope, lazy: bool) -> Value: ...

    @abc.abstractmethod
    def _environ(self, name: Value, default: Value | None, node: ast.expr) -> Value: ...

    @abc.abstractmethod
    def _env_var(self, name: str) -> Value | None: ...

    @abc.abstractmethod
    def _getenv(self, node: ast.Call, scope: _Scope) -> Value: ...

    @abc.abstractmethod
    def _run(self, body: Sequence[ast.stmt], scope: _Scope, top: bool = False, until: int | None = None) -> bool: ...

    @abc.abstractmethod
    def node_at(self, node: ast.expr, path: str, line: int) -> Value: ...
