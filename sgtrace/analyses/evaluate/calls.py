"""Calls: pure built-ins, classes built, methods of decided values, functions of the tree run with their
arguments."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, ItemsView, KeysView, Mapping, Sequence, ValuesView
from typing import Any

from sgtrace.analyses.evaluate.facts import CLASS_ASSUMED, LOADED_ASSUMED, Dtype, ModelConfig, _config, model_type_of
from sgtrace.analyses.evaluate.memo import Memo, _Return, _Scope
from sgtrace.analyses.evaluate.objects import _BUILTIN_TYPES, ClassRef, Instance, Member, _member
from sgtrace.analyses.evaluate.source import MAX_DEPTH, method_of
from sgtrace.analyses.evaluate.syntax import _SELF, _annotated, _kind, _takes_self, _targets, _text, chain_of
from sgtrace.analyses.evaluate.values import Known, Unknown, Value, _as_run, _force, _Lazy, _why

_PURE: dict[str, Callable[..., Any]] = {
    "int": int, "float": float, "bool": bool, "str": str, "min": min, "max": max, "abs": abs, "round": round,
    "len": len, "sum": sum, "sorted": sorted, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset,
    "any": any, "all": all, "ceil": math.ceil, "floor": math.floor,
}  # fmt: skip


_MODULES = {"math"}


#: Methods of a decided built-in value that only read it (``class_name.startswith("Llava")``), by its type.
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({
        "startswith", "endswith", "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit",
        "replace", "count", "find", "isdigit", "isalpha", "isalnum", "removeprefix", "removesuffix",
    }),
    dict: frozenset({"get", "keys", "values", "items"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}  # fmt: skip


def _union(node: ast.expr) -> list[str]:
    """The class names of ``A | B`` or ``(A, B)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(node.left) + _union(node.right)
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _union(element)]
    chain = chain_of(node)
    return chain[-1:] if chain else [_text(node)]


def _record_class(node: ast.ClassDef) -> bool:
    """Whether a class is a record of fields built by keyword: a dataclass, a ``msgspec.Struct``."""
    decorators = [(chain_of(d if not isinstance(d, ast.Call) else d.func)[-1:] or [""])[0] for d in node.decorator_list]
    return "dataclass" in decorators or any(chain_of(b)[-1:] == ["Struct"] for b in node.bases)


def _bound(env: Mapping[str, Value | _Lazy] | None, name: str) -> bool:
    """Whether *name* holds a decided value in the running body (a parameter or a local); an undecided parameter
    is still known by its annotation."""
    return env is not None and name in env and isinstance(_force(env[name]), Known)


class Calls(Memo):
    """Works out what a call returns."""

    def _call(self, node: ast.Call, scope: _Scope) -> Value:
        func = node.func
        chain = chain_of(func)
        name = chain[-1] if chain else ""
        observed = self.profile.observe(name, scope.path, scope.line) if name else None
        if observed is not None:
            return observed
        if chain[:-1] and chain[-1] == "get" and not node.args and len(chain) >= 2:
            registry = self._env_var(chain[-2])
            if registry is not None:
                return registry
        if chain[-2:] in (["os", "getenv"], ["environ", "get"]) or chain == ["getenv"]:
            return self._getenv(node, scope)
        if name == "getattr" and len(node.args) in (2, 3):
            return self._getattr(node, scope)
        if name in self.profile.words.element_size and len(node.args) == 1 and not node.keywords:
            dtype = self.expr(node.args[0], scope)
            if isinstance(dtype, Known) and isinstance(dtype.value, Dtype):
                return Known(dtype.value.size, dtype.why)
            return dtype if isinstance(dtype, Unknown) else Unknown((_text(node),))
        if name == "hasattr" and len(node.args) == 2:
            receiver, key = self.expr(node.args[0], scope), self.expr(node.args[1], scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig) and isinstance(key, Known):
                return receiver.value.has(key.value)
        if name == "isinstance" and len(node.args) == 2:
            decided = self._isinstance(node, scope)
            if decided is not None:
                return decided
        if name == "get_text_config" and not node.args and isinstance(func, ast.Attribute):
            receiver = self.expr(func.value, scope)
            if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig):
                text = receiver.value.values.get("text_config")
                return Known(_config(text, receiver.value) if isinstance(text, dict) else receiver.value, receiver.why)
        if name in ("isinstance", "hasattr", "callable", "id", "type"):
            first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
            subject = self.expr(first, scope) if first is not None else None
            # an undecided object: what decides it decides this too (the model's config for isinstance(config, ...))
            return Unknown(subject.needs if isinstance(subject, Unknown) and subject.needs else (_text(node),))
        if isinstance(func, ast.Name) and func.id in _PURE or (chain[:1] and chain[0] in _MODULES and name in _PURE):
            return self._pure(_PURE[name], node, scope)
        if isinstance(func, ast.Attribute):
            method = self._on_receiver(func, node, scope)
            if method is not None:
                return method
        if isinstance(func, ast.Name):
            built = self._built(func, node, scope)
            if built is not None:
                return built
        target = self._callee(func, chain, scope)
        if target is None:
            return Unknown((_text(node),))
        path, function, cls = target
        if scope.depth >= MAX_DEPTH * 4:
            return Unknown((_text(node),))
        bound = self._bind(function, node, scope, method=_takes_self(function, cls))
        if isinstance(bound, Unknown):
            return bound
        return self._body(function, path, cls, bound, scope.depth + 1)

    def _built(self, func: ast.Name, node: ast.Call, scope: _Scope) -> Value | None:
        """An object of a dataclass of the tree, built with keywords (and positional arguments in the order of
        its fields); None when the name is no such class."""
        if self.code.naming(func.id) is None or not self._declares(func.id):
            return None
        ref = self._name(func.id, scope)
        if not (isinstance(ref, Known) and isinstance(ref.value, ClassRef)):
            return None
        if not _record_class(ref.value.node):
            if not self._plain_class(ref.value):
                return None
            where = (*ref.why, f"{func.id}(...) at {scope.path}:{node.lineno}")
            return Known(Instance(ref.value, (), plain=True), where)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return Unknown((_text(node),))
        names = [
            i.target.id for i in ref.value.node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)
        ]
        given = [*zip(names, node.args, strict=False), *((k.arg, k.value) for k in node.keywords if k.arg)]
        fields = tuple((name, self.expr(value, scope)) for name, value in given)
        return Known(Instance(ref.value, fields), (*ref.why, f"{func.id}(...) at {scope.path}:{node.lineno}"))

    def _plain_class(self, ref: ClassRef) -> bool:
        """Whether objects of *ref* can stand for themselves: an ordinary class of the tree that says nothing of
        its truth or construction (no ``__bool__``, ``__len__``, ``__new__``), each base a class of the tree that
        does neither, or ``object``/``ABC``."""
        seen: set[str] = set()
        pending = [ref]
        while pending:
            cls = pending.pop()
            if cls.node.name in seen:
                continue
            seen.add(cls.node.name)
            names = {n.name for n in cls.node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if names & {"__bool__", "__len__", "__new__", "__call__"} or cls.node.keywords:
                return False
            for base in cls.node.bases:
                spelt = chain_of(base)
                if spelt[-1:] in (["object"], ["ABC"]):
                    continue
                found = self.code.class_named(spelt[-1]) if spelt else None
                if found is None or len(seen) > MAX_DEPTH:
                    return False
                pending.append(found)
        return True

    def _family(self, ref: ClassRef) -> tuple[set[str], bool]:
        """The names of *ref*'s class and its bases, and whether every base was found in the tree."""
        names: set[str] = set()
        whole, pending = True, [ref.node]
        while pending and len(names) <= MAX_DEPTH:
            node = pending.pop()
            names.add(node.name)
            for base in node.bases:
                spelt = chain_of(base)
                if spelt[-1:] in (["object"], ["ABC"]):
                    continue
                found = self.code.class_named(spelt[-1]) if spelt else None
                if found is not None:
                    pending.append(found.node)
                else:
                    whole = False
                    names.update(spelt[-1:])
        return names, whole and not pending

    def _on_receiver(self, func: ast.Attribute, node: ast.Call, scope: _Scope) -> Value | None:
        """A method called on a decided receiver (evaluated once): a reading method of a built-in value
        (``_METHODS``), else a method of a class of the tree (see ``_on_decided``; not on ``self``/``cls``,
        whose methods ``_callee`` finds); None when it is neither."""
        on_self = isinstance(func.value, ast.Name) and func.value.id in _SELF
        if on_self and not any(func.attr in names for names in _METHODS.values()):
            return None
        receiver = self.expr(func.value, scope)
        if not isinstance(receiver, Known):
            return None
        if func.attr in _METHODS.get(type(receiver.value), ()):
            return self._method(receiver, func.attr, node, scope)
        return None if on_self else self._on_decided(receiver, func.attr, node, scope)

    def _on_decided(self, receiver: Known, name: str, node: ast.Call, scope: _Scope) -> Value | None:
        """A method of a class of the tree called on a decided *receiver*: a class the code names (a classmethod or
        staticmethod: ``SpeculativeAlgorithm.from_string(name)``), or a member of an enum of the tree
        (``algorithm.is_none()``, run with ``self`` the member); None when the receiver is neither."""
        if isinstance(receiver.value, Instance):
            found = method_of(self.code, receiver.value.ref, name)
            if found is None or _kind(found[1]) != "instance":
                return None
            bound = self._bind(found[1], node, scope, method=True)
            if isinstance(bound, Unknown):
                return bound
            first = [*found[1].args.posonlyargs, *found[1].args.args][:1]
            if first:
                bound[first[0].arg] = receiver
            return self._body(found[1], found[0], found[2], bound, scope.depth + 1)
        if isinstance(receiver.value, ClassRef):
            ref: ClassRef | None = receiver.value
        elif isinstance(receiver.value, Member):
            ref = self.code.class_named(receiver.value.enum)
        else:
            return None
        if ref is None:
            return None
        path, cls = ref.path, ref.node
        method = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if method is None:
            return None
        kind = _kind(method)
        if kind == "instance" and isinstance(receiver.value, ClassRef):
            return None  # an instance method called on its class: its first argument is the instance
        bound = self._bind(method, node, scope, method=kind != "static")
        if isinstance(bound, Unknown):
            return bound
        first = [*method.args.posonlyargs, *method.args.args][:1]
        if kind != "static" and first:
            bound[first[0].arg] = receiver if kind == "instance" else Known(ClassRef(path, cls), receiver.why)
        return self._body(method, path, cls, bound, scope.depth + 1)

    def _method(self, receiver: Known, name: str, node: ast.Call, scope: _Scope) -> Value:
        """A reading method of a decided built-in value (see ``_METHODS``) with the call's arguments."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return Unknown((_text(node),))
        evaluated = self._arguments(node, scope)
        if isinstance(evaluated, Unknown):
            return evaluated
        args, kwargs = evaluated
        try:
            result = getattr(receiver.value, name)(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
        except (TypeError, ValueError, AttributeError):
            return Unknown((_text(node),))
        if isinstance(result, (KeysView, ValuesView, ItemsView)):
            result = list(result)
        return Known(result, tuple(dict.fromkeys(w for v in (receiver, *args, *kwargs.values()) for w in v.why)))

    def _arguments(self, node: ast.Call, scope: _Scope) -> tuple[list[Known], dict[str, Known]] | Unknown:
        """The call's arguments, evaluated (a starred one as the value it spreads; keywords by name), or what the
        undecided ones need."""
        args = [self.expr(a.value if isinstance(a, ast.Starred) else a, scope) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords if k.arg}
        unknown = [v for v in [*args, *kwargs.values()] if isinstance(v, Unknown)]
        if unknown:
            return Unknown(tuple(dict.fromkeys(n for u in unknown for n in u.needs)))
        return [a for a in args if isinstance(a, Known)], {k: v for k, v in kwargs.items() if isinstance(v, Known)}

    def _pure(self, function: Callable[..., Any], node: ast.Call, scope: _Scope) -> Value:
        if node.keywords and function not in (min, max, round, sorted):
            return Unknown((_text(node),))
        if len(node.args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            items = self._generated(node.args[0], scope, function in (any, all))
            if isinstance(items, Unknown):
                return items
            return Known(_as_run(function, items.value), items.why)
        evaluated = self._arguments(node, scope)
        if isinstance(evaluated, Unknown):
            return evaluated
        args, kwargs = evaluated
        values = []
        for a, v in zip(node.args, args, strict=True):
            values.extend(_as_run(list, v.value)) if isinstance(a, ast.Starred) else values.append(v.value)
        result = _as_run(function, *values, **{k: v.value for k, v in kwargs.items()})
        return Known(result, tuple(dict.fromkeys(w for v in args for w in v.why)))

    def _isinstance(self, node: ast.Call, scope: _Scope) -> Value | None:
        """``isinstance(config, A | B)`` for the model's config: a configuration class of the tree is known by
        its ``model_type`` (as Hugging Face tells them apart); None when it is not about the model's config."""
        receiver = self.expr(node.args[0], scope)
        classes = _union(node.args[1])
        if isinstance(node.args[1], ast.Attribute):  # a class held by an object (spec.config_class)
            held = self.expr(node.args[1], scope)
            if isinstance(held, Known) and isinstance(held.value, ClassRef):
                classes = [held.value.node.name]
            elif isinstance(held, Unknown):
                return held
        if isinstance(receiver, Known) and receiver.value is None:
            if classes and not {"object", "NoneType", "type(None)"} & set(classes):
                return Known(False, receiver.why)  # None is an instance of no class the code names
        if isinstance(receiver, Known) and classes and set(classes) <= {*_BUILTIN_TYPES, "dtype"}:
            return self._builtin_instance(receiver, classes)
        if isinstance(receiver, Known) and isinstance(receiver.value, Instance):
            family, whole = self._family(receiver.value.ref)
            if family & set(classes) or whole:
                return Known(bool(family & set(classes)), receiver.why)
            return Unknown((_text(node),))
        if not (isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig)):
            return None
        model_type = receiver.value.get("model_type")
        if isinstance(model_type, Unknown):
            return model_type
        needs: list[str] = []
        spelt: list[str] = []
        for name in classes:
            declared, named = self._model_type(name), tuple[str, ...]()
            if declared is None and name.endswith("Config") and self._declares(name):
                # a subclass of a configuration outside the tree: its type by Hugging Face's naming, said so
                declared = model_type_of([name.removesuffix("Config")])
                named = (f"{name}.model_type assumed {declared!r} from its name ({CLASS_ASSUMED})",)
            if declared is None:
                needs.append(f"isinstance(config, {name})")
            elif declared == model_type.value:
                return Known(True, (*model_type.why, f"{name}.model_type", *named))
            spelt.extend(named)
        if needs:
            return Unknown(tuple(needs))
        return Known(False, (*model_type.why, f"not {' | '.join(classes)}", *spelt))

    @staticmethod
    def _builtin_instance(receiver: Known, classes: Sequence[str]) -> Value | None:
        """``isinstance(x, str)`` (or ``int``, ``dict``..., or the tensor library's ``dtype``) for a decided value:
        a model config is a configuration object, not a dict; None for a value of no such kind."""
        value = receiver.value
        if isinstance(value, (ModelConfig, Dtype)):
            kinds: tuple[str, ...] = ("dtype",) if isinstance(value, Dtype) else ()
        elif type(value) in _BUILTIN_TYPES.values():
            kinds = tuple(name for name, kind in _BUILTIN_TYPES.items() if isinstance(value, kind))
        else:
            return None
        return Known(bool(set(kinds) & set(classes)), receiver.why)

    def _declares(self, name: str) -> bool:
        """Whether a class of the tree is named *name*."""
        return any(isinstance(node, ast.ClassDef) for _, node in self.code.definitions(name))

    def _model_type(self, name: str) -> str | None:
        """The ``model_type`` a configuration class of the tree declares (None: not found, or no literal)."""
        for _, node in self.code.definitions(name):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (
                        isinstance(item, (ast.Assign, ast.AnnAssign))
                        and any(isinstance(t, ast.Name) and t.id == "model_type" for t in _targets(item))
                        and isinstance(item.value, ast.Constant)
                        and isinstance(item.value.value, str)
                    ):
                        return item.value.value
        return None

    def _getattr(self, node: ast.Call, scope: _Scope) -> Value:
        name = self.expr(node.args[1], scope)
        if isinstance(name, Unknown) or not isinstance(name.value, str):
            return Unknown((_text(node),))
        receiver = self.expr(node.args[0], scope)
        default = self.expr(node.args[2], scope) if len(node.args) == 3 else None
        if isinstance(receiver, Known) and isinstance(receiver.value, ModelConfig):
            if default is None or isinstance(default, Unknown):
                return receiver.value.get(name.value)
            return receiver.value.get(name.value, default.value)
        if isinstance(receiver, Known):
            member = _member(receiver, name.value)
            if receiver.value is None and isinstance(default, Known):
                return _why(default, receiver.why)  # None has no attribute of a name the code asks for
            return member
        if isinstance(default, Known) and (chain_of(node.args[0])[-1:] or [""])[0] in self.profile.words.loaded_model:
            return self._loaded(name.value, default)
        attribute = ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Load())
        return self._attribute(attribute, scope)

    def _loaded(self, name: str, default: Known) -> Value:
        """An attribute of the loaded model asked for with a default: the default, assumed and said so, where the
        run has one pipeline stage (the model holds every layer); unknown otherwise."""
        argument, value = self.profile.words.loaded_when
        stages = self.facts.named(argument) if argument else None
        if stages is None and argument:
            return Unknown((argument,))
        if isinstance(stages, Unknown) or (isinstance(stages, Known) and stages.value != value):
            return Unknown((f"the loaded model's {name}",))
        why = stages.why if isinstance(stages, Known) else ()
        return Known(default.value, (*why, f"the loaded model's {name} assumed its default ({LOADED_ASSUMED})"))

    def _callee(
        self, func: ast.expr, chain: Sequence[str], scope: _Scope
    ) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The tree's function a call runs, when the name says which: a module function, or a method of self."""
        if isinstance(func, ast.Name):
            local = self.code.function_in(scope.path, func.id)
            if local is not None:
                return scope.path, local, None
            imported = self.code.imported(scope.path, func.id, scope.function)
            return self._function_in(*imported) if imported is not None else None
        if len(chain) == 2 and chain[0] not in _SELF and not _bound(scope.env, chain[0]):
            module = self.code.module_named(scope.path, chain[0], scope.function)
            if module is not None:  # module.function(...)
                return self._function_in(module, chain[1])
            method = self._annotated_method(chain[0], chain[1], scope)
            if method is not None:  # kvc.method(...), kvc a parameter annotated with a class of the tree
                return method
        if len(chain) == 2 and chain[0] in ("self", "cls") and scope.cls is not None:
            for node in scope.cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == chain[1]:
                    return scope.path, node, scope.cls
            found = [(p, d) for p, d in self.code.definitions(chain[1]) if isinstance(d, ast.FunctionDef)]
            found = [(p, d) for p, d in found if self.code._class_of(p, d) is not None]
            if len(found) == 1:
                path, node = found[0]
                return path, node, self.code._class_of(path, node)
        return None

    def _annotated_method(
        self, receiver: str, name: str, scope: _Scope
    ) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The method *name* of the class a parameter *receiver* of the running function is annotated with (run as
        that class's methods are: its ``self.x`` are the class's writes of x)."""
        for cls in _annotated(scope.function, receiver):
            ref = self.code.class_named(cls, True)
            if ref is None:
                continue
            method = next((n for n in ref.node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
            if method is not None and _kind(method) == "instance":
                return ref.path, method, ref.node
        return None

    def _function_in(self, path: str, name: str) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
        """The module-level function *name* of the file *path*, as :meth:`_callee` gives it."""
        function = self.code.function_in(path, name)
        return (path, function, None) if function is not None else None

    def _bind(self, function: ast.AST, call: ast.Call, scope: _Scope, method: bool) -> dict[str, Value] | Unknown:
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args][1 if method else 0 :]
        bound: dict[str, Value] = {}
        for parameter, argument in zip(positional, call.args, strict=False):
            if isinstance(argument, ast.Starred):
                return Unknown((_text(call),))
            bound[parameter.arg] = self.expr(argument, scope)
        for keyword in call.keywords:
            if keyword.arg is None:
                return Unknown((_text(call),))
            bound[keyword.arg] = self.expr(keyword.value, scope)
        defaults = dict(zip([p.arg for p in positional][-len(arguments.defaults) :], arguments.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d})
        for name in [p.arg for p in positional] + [p.arg for p in arguments.kwonlyargs]:
            if name not in bound:
                bound[name] = self.expr(defaults[name], scope) if name in defaults else Unknown((name,))
        return bound

    def _body(
        self, function: ast.AST, path: str, cls: ast.ClassDef | None, bound: dict[str, Value], depth: int
    ) -> Value:
        """What *function* returns with parameters *bound* (remembered for known, hashable arguments)."""
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        try:
            key = (id(function), repr(sorted((k, v) for k, v in bound.items())))
        except TypeError:
            key = (id(function), "")
        if self._kept(self._calls, key):
            return self._calls[key]
        if key in self._busy:
            return self._cut_short(Unknown((f"{function.name}()",), cycle=function.name))
        if depth > MAX_DEPTH * 4:
            return Unknown((f"{function.name}()",))
        self._busy.add(key)
        refused = self.code.refused
        try:
            scope = _Scope(path, function, cls, function.lineno, dict(bound), depth)
            try:
                self._run(function.body, scope)
                result: Value = Known(None, (f"{path}:{function.lineno}",))
            except _Return as done:
                result = done.value
            if isinstance(result, Known):
                why = (*scope.decided, *result.why, f"{function.name}() at {path}:{function.lineno}")
                result = Known(result.value, tuple(dict.fromkeys(why)))
        finally:
            self._busy.discard(key)
        self._keep(self._calls, key, result, refused, isinstance(result, Unknown))
        return result
