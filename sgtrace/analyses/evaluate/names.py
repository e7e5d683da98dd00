"""Names and attributes: the run's facts, a body's locals, a module's constants, a class's attributes."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from typing import Any

from sgtrace.analyses.evaluate.facts import CONFIG_KEY, Dtype
from sgtrace.analyses.evaluate.memo import Memo, _Return, _Scope
from sgtrace.analyses.evaluate.objects import _BUILTIN_TYPES, ClassRef, Instance, Member, _member
from sgtrace.analyses.evaluate.source import MAX_DEPTH
from sgtrace.analyses.evaluate.syntax import _SELF, _default_of, _parameters, _targets, chain_of
from sgtrace.analyses.evaluate.values import _CHANGES, Known, Same, Unknown, Value, _force, _Lazy, _why


def _bound_receiver(env: Mapping[str, Value | _Lazy] | None, name: str) -> bool:
    """Whether ``self``/``cls`` is bound to a decided class or enum member (a method run on one), whose
    attributes are its own, not the tree's writes of them."""
    value = env.get(name) if env is not None and name in _SELF else None
    return isinstance(value, Known) and isinstance(value.value, (ClassRef, Member, Instance))


class Names(Memo):
    """Reads names and attributes."""

    def _name(self, name: str, scope: _Scope) -> Value:
        if name in ("True", "False", "None"):
            return Known({"True": True, "False": False, "None": None}[name])
        if name in self.facts.forced:
            return self.facts.named(name) or Unknown((name,))
        if scope.env is not None and name in scope.env:
            return _force(scope.env[name])
        if scope.env is None and scope.function is not None:
            env = self._locals_at(scope)
            if name in env:
                return _force(env[name])
        given = self.facts.named(name)
        if given is not None:
            return given
        return self._global(name, scope.path, scope.depth, scope.function)

    def _locals_at(self, scope: _Scope) -> dict[str, Value | _Lazy]:
        """The function's names as they stand when *scope*'s line runs: its body run up to that line, its
        parameters from the facts (remembered per function and line)."""
        assert scope.function is not None
        key = (id(scope.function), scope.line)
        if self._kept(self._locals, key):
            return self._locals[key]
        if key in self._busy:
            return {}
        self._busy.add(key)
        refused = self.code.refused
        try:
            env: dict[str, Value | _Lazy] = {
                name: self.facts.named(name) or self._passed_in(scope, name) for name in _parameters(scope.function)
            }
            inner = _Scope(scope.path, scope.function, scope.cls, scope.line, env, scope.depth + 1)
            try:
                self._run(scope.function.body, inner, until=scope.line)  # type: ignore[attr-defined]
            except _Return:
                pass
        finally:
            self._busy.discard(key)
        self._keep(self._locals, key, inner.env or {}, refused, True)
        return self._locals[key]

    def _passed_in(self, scope: _Scope, name: str) -> Value | _Lazy:
        """A parameter no fact names: for an optional one, what the calls the run may make pass (when read)."""
        function = scope.function
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or name in ("self", "cls"):
            return Unknown((name,))
        found = _default_of(function, name)
        if found is None or found[0] is None:
            return Unknown((name,))
        return _Lazy(lambda: self._parameter(scope.path, function, scope.cls, name, scope.depth), self.code)

    def _global(self, name: str, path: str, depth: int, function: ast.AST | None = None) -> Value:
        """A module-level name: the module's own constants, else what it (or *function*'s body) imports from the
        tree."""
        env = self._module(path)
        if name in env:
            return _force(env[name])
        imported = self.code.imported(path, name, function)
        if imported is not None and depth < MAX_DEPTH * 4:
            there, original = imported
            return self._global(original, there, depth + 1)
        tree = self.code.tree(path)
        for node in tree.body if tree else ():
            if isinstance(node, ast.ClassDef) and node.name == name:
                return Known(ClassRef(path, node), (f"{path}:{node.lineno}",))
        return Unknown((name,))

    def _module(self, path: str) -> dict[str, Value | _Lazy]:
        """The module's top level run for its constants: assignments, ``if``, and appends to its lists."""
        if self._kept(self._module_env, path):
            return self._module_env[path]
        env: dict[str, Value | _Lazy] = {}
        self._module_env[path] = env
        tree = self.code.tree(path)
        if tree is None and self.code.refused_now(path):
            self._stale[(id(self._module_env), path)] = self.code.questions
        if tree is not None:
            scope = _Scope(path, None, None, 0, env, 0)
            try:
                self._run([s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))], scope, top=True)
            except _Return:
                pass
            self._registered(path, tree, env)
        return env

    def _registered(self, path: str, tree: ast.Module, env: dict[str, Value | _Lazy]) -> None:
        """A registry: a module's list that a function of the module appends its parameter to
        (``def register(spec): _REGISTRY.append(spec)``) holds, after its own items, what every call of that
        function at the top level of a module of the tree passes (in the order of their paths)."""
        for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            for name, parameter in self.code.appends(function):
                before = _force(env[name]) if name in env else None
                if not (isinstance(before, Known) and isinstance(before.value, list)):
                    continue
                passed = self._registrations(function.name, parameters.index(parameter), parameter)
                if isinstance(passed, Unknown):
                    env[name] = passed
                else:
                    env[name] = Known([*before.value, *passed.value], (*before.why, *passed.why))

    def _registrations(self, function: str, index: int, parameter: str) -> Value:
        """What the calls of *function* at the top level of the tree's modules pass for its parameter."""
        paths = self.code.naming(function)
        if paths is None:
            return Unknown((f"the calls of {function}()",))
        items: list[Any] = []
        why: list[str] = []
        for there in sorted(paths):
            module = self.code.tree(there)
            for statement in module.body if module else ():
                call = statement.value if isinstance(statement, ast.Expr) else None
                if not (isinstance(call, ast.Call) and chain_of(call.func)[-1:] == [function]):
                    continue
                keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
                argument = call.args[index] if len(call.args) > index else keyword
                if argument is None:
                    continue
                value = self.node_at(argument, there, statement.lineno)
                if isinstance(value, Unknown):
                    return value
                items.append(value.value)
                why.append(f"{there}:{statement.lineno}")
        return Known(items, tuple(why))

    def _attribute(self, node: ast.Attribute, scope: _Scope) -> Value:
        """``x.name``: from a known object, the facts, the model's config, else the tree's writes of it. Undecided,
        on a local that holds one value, it is that value's attribute: the same at every read until a statement
        may change the object (see the module doc), unless the tree defines a function of that name."""
        value = self._read_attribute(node, scope)
        if isinstance(value, Known) or value.same is not None or not isinstance(node.value, ast.Name):
            return value
        if node.value.id in _SELF or scope.function is None:
            return value
        receiver = self.expr(node.value, scope)
        if not isinstance(receiver, Unknown) or receiver.same is None or self.code.defined_anywhere(node.attr):
            return value
        env = scope.env if scope.env is not None else self._locals_at(scope)
        changed = _force(env.get(_CHANGES, Known(0)))
        if isinstance(changed, Unknown):  # branches that changed it differently: a value of its own
            return dataclasses.replace(value, same=Same())
        return dataclasses.replace(value, same=(receiver.same, node.attr, changed.value))

    def _read_attribute(self, node: ast.Attribute, scope: _Scope) -> Value:
        chain = chain_of(node)
        if chain and chain[-1] in self.profile.words.model_config:
            # no model known: what the operator can give is its config (a log's weights line names its architecture)
            return Known(self.facts.model) if self.facts.model is not None else Unknown((f"{CONFIG_KEY}architectures",))
        if len(chain) == 2 and chain[0] in self.profile.words.tensor_modules and chain[1] in self.profile.words.dtypes:
            return Known(Dtype(chain[0], chain[1], self.profile.words.dtypes[chain[1]]), (f"{chain[0]}.{chain[1]}",))
        given = self.facts.named(node.attr)
        if isinstance(node.value, ast.Name) and node.value.id == "self" and scope.env is not None:
            if f"self.{node.attr}" in scope.env and node.attr not in self.facts.forced:
                return _force(scope.env[f"self.{node.attr}"])
        bound = isinstance(node.value, ast.Name) and _bound_receiver(scope.env, node.value.id)
        if bound or not (isinstance(node.value, ast.Name) and node.value.id in _SELF):
            receiver = self.expr(node.value, scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ClassRef):
                return self._class_attribute(receiver.value, node.attr)
            if isinstance(receiver, Known) and isinstance(receiver.value, Instance):
                found = self._field(receiver, node.attr)
                if isinstance(found, Known) or not receiver.value.plain:
                    return found  # an ordinary object that does not decide it: read as if it were not known
            elif isinstance(receiver, Known):
                return _member(receiver, node.attr)
        # --set overrides what the code computes, except a server argument's value: a class that computes its own
        # attribute of that name computes it from the argument
        overrides = node.attr in self.facts.forced and node.attr not in self.facts.defaults
        if given is not None and (overrides or not self._computes(node.attr, chain, scope)):
            return given
        return self._written(node.attr, chain, scope)

    def _flows(
        self, writes: list[tuple[str, ast.ClassDef, ast.stmt]], attr: str, scope: _Scope, values: list[Value]
    ) -> list[tuple[str, ast.ClassDef, ast.stmt]]:
        """Several writes of *attr* in one method are one value: what the method's flow leaves it (an
        ``if``/``elif`` chain picks one); that value goes to *values*, the other writes are returned."""
        by_function: dict[int, list[tuple[str, ast.ClassDef, ast.stmt]]] = {}
        for write in writes:
            function, _ = self.code.enclosing(write[0], write[2].lineno)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and write[2] not in write[1].body:
                by_function.setdefault(id(function), []).append(write)
        rest = list(writes)
        for group in by_function.values():
            if len(group) < 2:
                continue
            path, cls, first = group[0]
            function, _ = self.code.enclosing(path, first.lineno)
            assert function is not None
            end = (getattr(function, "end_lineno", None) or first.lineno) + 1
            env = self._locals_at(_Scope(path, function, cls, end, None, scope.depth + 1))
            found = _force(env.get(f"self.{attr}", Unknown((attr,))))
            values.append(_why(found, (f"{path}:{first.lineno}",)))
            rest = [w for w in rest if w not in group]
        return rest

    def _field(self, receiver: Known, name: str) -> Value:
        """A field of an object of a dataclass of the tree: what its construction gave, else the class's default
        (``field(default=...)``, ``field(default_factory=list)``, a literal)."""
        instance = receiver.value
        assert isinstance(instance, Instance)
        if instance.plain:  # an ordinary class's attribute: its writes of it
            at = _Scope(instance.ref.path, None, instance.ref.node, instance.ref.node.lineno)
            return _why(self._written(name, ["self", name], at), receiver.why)
        given = instance.given(name)
        if given is not None:
            return _why(given, receiver.why)
        for item in instance.ref.node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            if item.target.id != name or item.value is None:
                continue
            value = item.value
            if isinstance(value, ast.Call) and chain_of(value.func)[-1:] == ["field"]:
                keywords = {k.arg: k.value for k in value.keywords}
                factory = chain_of(keywords["default_factory"]) if "default_factory" in keywords else []
                if factory in (["list"], ["dict"], ["set"], ["tuple"]):
                    return Known(_BUILTIN_TYPES[factory[0]](), receiver.why)
                if "default" not in keywords:
                    return Unknown((f"{instance.ref.node.name}.{name}",))
                value = keywords["default"]
            return _why(self.node_at(value, instance.ref.path, item.lineno), receiver.why)
        return Unknown((f"{instance.ref.node.name}.{name}",))

    def _class_attribute(self, ref: ClassRef, name: str) -> Value:
        """A class attribute of the tree: an enum's member (a literal's value or ``auto()``), or a literal."""
        enum = any((chain_of(b)[-1:] or [""])[0].endswith(("Enum", "Flag")) for b in ref.node.bases)
        for item in ref.node.body:
            if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
                if not any(isinstance(t, ast.Name) and t.id == name for t in _targets(item)):
                    continue
                where = (f"{ref.path}:{item.lineno}",)
                literal = self.node_at(item.value, ref.path, item.lineno)
                if enum:
                    value = literal.value if isinstance(literal, Known) else None
                    mixed = any(
                        chain_of(b)[-1:] in (["str"], ["int"], ["StrEnum"], ["IntEnum"]) for b in ref.node.bases
                    )
                    return Known(Member(ref.node.name, name, value, mixed), where)
                return _why(literal, where)
        return Unknown((f"{ref.node.name}.{name}",))
