"""The search for the writes of an attribute: which classes own it, what their constructors are passed,
what the callers of a function pass for a parameter."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from sgtrace.analyses.evaluate.memo import Memo, _Scope
from sgtrace.analyses.evaluate.source import MAX_DEPTH
from sgtrace.analyses.evaluate.syntax import (
    _annotated,
    _default_of,
    _expression,
    _parameters,
    _takes_self,
    _targets,
    chain_of,
)
from sgtrace.analyses.evaluate.values import Known, Unknown, Value, _agreed, _item, _same, _why

#: Functions gone up from a call to decide that the run never makes it (every call of each is decided not to run).
MAX_UP = 3


#: Writes of one attribute weighed before it is given up as unknown.
MAX_WRITES = 12


def _parameter_of(statement: ast.stmt, function: ast.AST | None) -> tuple[ast.AST, str, ast.expr | None] | None:
    """(the ``__init__``, the parameter, its default) when *statement* is ``self.x = <a parameter>`` there."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name != "__init__":
        return None
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or not isinstance(statement.value, ast.Name):
        return None
    found = _default_of(function, statement.value.id)
    return (function, statement.value.id, found[0]) if found is not None else None


def _passed(
    call: ast.Call, init: ast.FunctionDef | ast.AsyncFunctionDef | None, name: str, bound: bool = True
) -> ast.expr | bool | None:
    """What a construction passes for parameter *name* of *init* (the class's ``__init__``; any function, with
    *bound* False for one called without ``self``): the argument (a keyword, or the positional one at its
    place), a Starred ``*args``/``**kwargs`` through which it passes it, None when it passes nothing for it,
    True when that cannot be told."""
    keyword = next((k for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword.value
    mapping = next((k.value for k in call.keywords if k.arg is None), None)
    if init is None:
        return True if mapping is not None or call.args else None
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1 if bound else 0 :]  # without self
    if name in positional:
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return argument if index <= positional.index(name) else None
            if index == positional.index(name):
                return argument
    elif name not in {a.arg for a in init.args.kwonlyargs}:  # only through the __init__'s *args or **kwargs
        if init.args.vararg is not None and (
            len(call.args) > len(positional) or any(isinstance(a, ast.Starred) for a in call.args)
        ):
            return True
        if init.args.kwarg is None:
            return None
    return ast.Starred(mapping, ast.Load()) if mapping is not None else None


def _held(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, key: str) -> list[ast.expr] | None:
    """The values local dict *name* of *function* may hold under *key*, when the function builds it as a literal
    (``dict(k=v)``, ``{"k": v}``) and fills it only under literal keys (``name["k"] = v``, ``name.update(k=v)``,
    ``name.setdefault("k", v)``); None when it is a parameter or built or filled any other way."""
    if name in _parameters(function):
        return None
    values: list[ast.expr] = []
    built = False
    for node in ast.walk(function):
        for target in _targets(node) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else []:
            assert isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            mine = chain_of(target.value) == [name] if isinstance(target, ast.Subscript) else False
            if isinstance(target, ast.Name) and target.id == name or mine and isinstance(node, ast.AugAssign):
                entries = _literal_entries(node.value) if not isinstance(node, ast.AugAssign) else None
                if entries is None:
                    return None
                values += [value for k, value in entries if k == key]
                built = True
            elif mine:
                assert isinstance(target, ast.Subscript)
                if not (isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                    return None
                values += [node.value] if target.slice.value == key and node.value is not None else []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and chain_of(node.func.value) == [name]:
            method = node.func.attr
            if method == "update" and not node.args and all(k.arg is not None for k in node.keywords):
                values += [k.value for k in node.keywords if k.arg == key]
            elif method == "setdefault" and len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
                values += [node.args[1]] if node.args[0].value == key else []
            elif method not in ("get", "pop", "items", "keys", "values", "copy"):
                return None
    return values if built else None


def _literal_entries(node: ast.expr | None) -> list[tuple[str, ast.expr]] | None:
    """The (key, value) entries of ``dict(k=v, ...)`` or ``{"k": v, ...}``; None for any other expression."""
    if isinstance(node, ast.Call) and chain_of(node.func) == ["dict"] and not node.args:
        if any(k.arg is None for k in node.keywords):
            return None
        return [(k.arg, k.value) for k in node.keywords if k.arg is not None]
    if isinstance(node, ast.Dict):
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in node.keys]
        if any(k is None for k in keys):
            return None
        return [(str(k), value) for k, value in zip(keys, node.values, strict=True)]
    return None


def _kept_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether *name* is a named parameter of *function* that the function never assigns again."""
    if _default_of(function, name) is None:
        return False
    return not any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    )


def _unpacked(statement: ast.stmt, attr: str) -> int | None:
    """The position of ``self.attr`` in the tuple an assignment unpacks (``a, self.attr = f()``), if it is one."""
    for target in _targets(statement):
        if isinstance(target, (ast.Tuple, ast.List)):
            for position, element in enumerate(target.elts):
                if isinstance(element, ast.Attribute) and chain_of(element) == ["self", attr]:
                    return position
    return None


def _owner_classes(owner: str, scope: _Scope) -> list[str]:
    """The classes whose writes an attribute read on *owner* means: for ``self`` the reading class and its bases;
    else the class the owner's name spells (``model_config``: ``ModelConfig``) and the one its annotation names
    (``kvc: KVCacheConfigurator``); none without an owner."""
    if owner == "self":
        if scope.cls is None:
            return []
        return list(dict.fromkeys([scope.cls.name, *(chain_of(b)[-1] for b in scope.cls.bases if chain_of(b))]))
    if not owner:
        return []
    spelt = "".join(word.capitalize() for word in owner.split("_"))
    return list(dict.fromkeys([spelt, *_annotated(scope.function, owner)]))


class Writes(Memo):
    """Finds the writes of an attribute in the tree and what they write."""

    def _written(self, attr: str, chain: Sequence[str], scope: _Scope) -> Value:
        """The value the tree's writes of attribute *attr* agree on (preferring the reading class's own)."""
        owner = chain[-2] if len(chain) >= 2 else ""
        key = (owner if owner != "self" else f"self:{scope.cls.name if scope.cls else ''}", attr)
        if self._kept(self._attributes, key):
            return self._attributes[key]
        if key in self._busy:
            return self._cut_short(Unknown((attr,), cycle=attr))
        self._busy.add(key)
        refused = self.code.refused
        try:
            found = self._writes(attr, owner, scope)
        finally:
            self._busy.discard(key)
        self._keep(self._attributes, key, found, refused, isinstance(found, Unknown))
        return found

    def _owned(
        self, attr: str, owner: str, scope: _Scope, own_only: bool = False
    ) -> tuple[list[tuple[str, ast.ClassDef, ast.stmt]], bool]:
        """The tree's writes of *attr* that the read means (the reading class's own, its family's, or the class
        *owner* names; else all of them), and whether they are its owner's (not all of them); ([], False) for a
        word too common to follow. *own_only*: the owner's alone, reading only the files that name its class or
        family (cheap: asked of every attribute a fact names)."""
        who = owner if owner != "self" else f"self:{scope.cls.name if scope.cls else ''}"
        key = ("owned" if not own_only else "own", who, attr)
        if self._kept(self._owned_writes, key):
            return self._owned_writes[key]
        refused = self.code.refused
        paths = self.code.naming(attr)
        if paths is None and owner == "self" and scope.cls is not None:
            paths = [scope.path]  # a word too common to follow: the reading class's own writes, in its file
        elif paths is None and owner:  # ... or those of the class the owner's name spells (model_config: ModelConfig)
            classes = _owner_classes(owner, scope)
            paths = [
                p for name in classes for p, node in self.code.definitions(name, True) if isinstance(node, ast.ClassDef)
            ]
            paths = paths or None
        writes: list[tuple[str, ast.ClassDef, ast.stmt]] = []
        if paths is not None:
            # only the files whose text writes it are parsed (an assignment to it, a field with a default or
            # without, a property)
            paths = [path for path in paths if self.code.writes_word(path, attr)]
            # the files that may hold the owner's class first; the others only when those hold none of its writes
            words = [name.encode() for name in _owner_classes(owner, scope)]
            first = [path for path in paths if any(word in self.code.text(path) for word in words)]
            writes = [(path, cls, item) for path in first for cls, item in self.code.writes(path, attr)]
            read = first
            if not own_only and not self._mine(writes, owner, scope):
                read = paths
                writes += [
                    (path, cls, item)
                    for path in paths
                    if path not in first
                    for cls, item in self.code.writes(path, attr)
                ]
            if not own_only and any(self.code.refused_now(path) for path in read):
                writes = []  # the limit refused a file that writes it: whether the writes agree is not known
        mine = self._mine(writes, owner, scope)
        self._keep(self._owned_writes, key, (mine if own_only else mine or writes, bool(mine)), refused, True)
        return self._owned_writes[key]

    @staticmethod
    def _mine(
        writes: list[tuple[str, ast.ClassDef, ast.stmt]], owner: str, scope: _Scope
    ) -> list[tuple[str, ast.ClassDef, ast.stmt]]:
        """The writes of the owner's class: the reading class's own, else its family's (``self``); the class the
        owner's name spells or its annotation names."""
        if owner == "self" and scope.cls is not None:
            own = [w for w in writes if w[1].name == scope.cls.name]
            family = set(_owner_classes(owner, scope))
            related = [
                w
                for w in writes
                if w[1].name in family or family & {chain_of(b)[-1] for b in w[1].bases if chain_of(b)}
            ]
            return own or related
        named = {name.lower() for name in _owner_classes(owner, scope)}
        return [w for w in writes if w[1].name.lower() in named]

    def _computes(self, attr: str, chain: Sequence[str], scope: _Scope) -> bool:
        """Whether the object an attribute is read on computes it itself (one of its class's writes is no copy of
        a parameter or of a server argument of that name): then the run's argument of that name is not its value
        (a runner's ``kv_cache_dtype`` is a tensor type, the server's argument a word)."""
        owner = chain[-2] if len(chain) >= 2 else ""
        if not owner or owner in self.profile.words.arguments:
            return False
        writes, mine = self._owned(attr, owner, scope, own_only=True)
        if not mine:
            return False
        for _, _, item in writes:
            if not isinstance(item, (ast.Assign, ast.AnnAssign)) or item.value is None:
                return True  # a property
            value = item.value
            copied = chain_of(value)
            if copied[-1:] == [attr] and (len(copied) == 1 or copied[-2] in self.profile.words.arguments):
                continue
            if isinstance(value, ast.Call) and chain_of(value.func)[-1:] == ["field"]:
                continue
            return True
        return False

    def _writes(self, attr: str, owner: str, scope: _Scope) -> Value:
        writes, _ = self._owned(attr, owner, scope)
        if not writes or len(writes) > MAX_WRITES:
            return Unknown((attr,))
        values: list[Value] = []
        writes = self._flows(writes, attr, scope, values)
        for path, cls, item in writes:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a property
                value = self._body(item, path, cls, {}, scope.depth + 1)
            elif not isinstance(item, (ast.Assign, ast.AnnAssign)):
                continue
            elif item.value is None:  # a field without a default: what its constructions pass
                values.extend(self._constructed(cls.name, attr))
                continue
            elif isinstance(item.value, ast.Call) and chain_of(item.value.func)[-1:] == ["field"]:  # a dataclass field
                default = next((k.value for k in item.value.keywords if k.arg == "default"), None)
                if default is None:
                    continue  # set elsewhere (__post_init__) or by a factory: its other writes say
                value = self.node_at(default, path, item.lineno)
            elif (parameter := _parameter_of(item, self.code.enclosing(path, item.lineno)[0])) is not None:
                # self.x = x in __init__: what the constructions pass for x, else its default
                function, name, default = parameter
                value = self.node_at(default, path, item.lineno) if default is not None else Unknown((name,))
                values.extend(self._constructed(cls.name, name))
            elif (position := _unpacked(item, attr)) is not None:  # a, self.x = f(): the item x takes
                value = _item(self.node_at(item.value, path, item.lineno), position)
            else:
                value = self.node_at(item.value, path, item.lineno) if item.value is not None else Unknown((attr,))
            if isinstance(value, Known):
                value = Known(value.value, (*value.why, f"{path}:{item.lineno}"))
            values.append(value)
            if isinstance(item, ast.AnnAssign) and item in cls.body:  # a field: what its constructions pass too
                values.extend(self._constructed(cls.name, attr))
        # a write that reads the attribute again (a property handing it on) is one of the others' values
        values = [v for v in values if not (isinstance(v, Unknown) and v.cycle == attr)]
        if not values:
            return Unknown((attr,))
        first = values[0]
        if all(_same(first, v) for v in values):
            return _agreed(values) if len(values) > 1 else first
        return next((v for v in values if isinstance(v, Unknown)), Unknown((attr,)))

    def _constructed(self, cls: str, attr: str, depth: int = 0) -> list[Value]:
        """What the tree's constructions of class *cls* (and its subclasses' ``super().__init__``) pass for its
        field or parameter *attr*. Where the class's own ``__init__`` is known, a positional argument is matched
        to its parameter, and a construction that does not pass it passes nothing (the default is its writer's
        to give); a subclass's ``__init__`` that hands on a parameter of its own (``x=x``) or its ``*args`` and
        ``**kwargs`` passes what the subclass's constructions pass. An Unknown for a construction whose arguments
        cannot be told apart, and for a class built in too many files."""
        paths = self.code.naming(cls)
        if paths is None or depth > MAX_DEPTH:
            return [Unknown((attr,))]
        init = self._init_of(cls)
        found: list[Value] = []
        word = re.escape(cls.encode())
        direct = re.compile(rb"\b" + word + rb"\s*\(")
        built = re.compile(rb"\b" + word + rb"\s*\(|__init__\s*\(")
        for path in paths:
            # a file's ``__init__(...)`` calls are read only where it defines a subclass of the class
            pattern = built if self.code.subclasses_word(path, cls) else direct
            calls = self.code.calls(path, pattern)
            if self.code.unread(path, pattern):
                found.append(Unknown((attr,)))  # the limit refused a file that may build it
            for node in calls:
                called = chain_of(node.func)
                if called[-1:] != [cls] and not self._subclass_call(path, node, cls):
                    continue
                passed = _passed(node, init, attr)
                if passed is None:
                    continue
                if isinstance(passed, ast.expr):
                    found.extend(self._handed_on(path, node, passed, attr, depth))
                else:
                    found.append(Unknown((attr,)))
        return found

    def _init_of(self, cls: str) -> ast.FunctionDef | None:
        """The ``__init__`` class *cls* defines itself, when one class of that name is in the tree."""
        ref = self.code.class_named(cls)
        if ref is None:
            return None
        return next((n for n in ref.node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)

    def _handed_on(self, path: str, call: ast.Call, passed: ast.expr, attr: str, depth: int) -> list[Value]:
        """The values *passed* stands for. In a class's ``__init__``, a parameter of its own (``x=x``) stands for
        what that class's constructions pass for it (or its default), its ``*args``/``**kwargs`` for what they
        pass for *attr*; else the expression's value."""
        function, owner = self.code.enclosing(path, call.lineno)
        if isinstance(function, ast.FunctionDef) and function.name == "__init__" and owner is not None:
            rest = {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
            if isinstance(passed, ast.Starred) and isinstance(passed.value, ast.Name) and passed.value.id in rest:
                return self._constructed(owner.name, attr, depth + 1)
            parameter = _default_of(function, passed.id) if isinstance(passed, ast.Name) else None
            if isinstance(passed, ast.Name) and parameter is not None:
                (default,) = parameter
                values = self._constructed(owner.name, passed.id, depth + 1)
                if default is not None:
                    values.append(self.node_at(default, path, function.lineno))
                return values or [Unknown((passed.id,))]
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and depth <= MAX_DEPTH:
            if isinstance(passed, ast.Starred) and isinstance(passed.value, ast.Name):
                held = _held(function, passed.value.id, attr)
                if held is not None:  # a dict the function builds: what it holds under that key, if anything
                    return [v for entry in held for v in self._handed_on(path, call, entry, attr, depth + 1)]
            elif isinstance(passed, ast.Name) and _kept_parameter(function, passed.id):
                # a parameter the function hands on untouched: what its callers pass for it, else its default
                (default,) = _default_of(function, passed.id) or (None,)
                called = self._called(path, function, owner, passed.id, depth + 1)
                if called is None:
                    return [Unknown((passed.id,))]
                defaults = [self.node_at(default, path, function.lineno)] if default is not None else []
                return [*called, *defaults] or [Unknown((passed.id,))]
        if isinstance(passed, ast.Starred):
            return [Unknown((attr,))]
        return [self.node_at(passed, path, call.lineno)]

    def _called(
        self, path: str, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str,
        depth: int,
    ) -> list[Value] | None:  # fmt: skip
        """What the tree's calls of *function* pass for its parameter *name* (a call that passes nothing gives
        none: the default is the caller's to add); None when no call of it is found (it may be handed on by
        reference) or its name is too common to follow."""
        key = (path, function.lineno, name)
        if self._kept(self._callers, key):
            found = self._callers[key]
            return list(found) if found is not None else None
        if key in self._busy:
            return [self._cut_short(Unknown((name,), cycle=name))]
        self._busy.add(key)
        refused = self.code.refused
        try:
            found = self._calls_of(function, owner, name, depth)
        finally:
            self._busy.discard(key)
        undecided = found is None or any(isinstance(v, Unknown) for v in found)
        self._keep(self._callers, key, found, refused, undecided)
        return list(found) if found is not None else None

    def _calls_of(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str, depth: int
    ) -> list[Value] | None:
        sites = self._call_sites(function, owner)
        if not sites:
            return None
        found: list[Value] = []
        for where, node in sites:
            if node is None:
                found.append(Unknown((name,)))  # the limit refused a file that may call it
                continue
            passed = _passed(node, function, name, _takes_self(function, owner))
            if isinstance(passed, ast.expr):
                found.extend(self._handed_on(where, node, passed, name, depth))
            elif passed:
                found.append(Unknown((name,)))
        return found

    def _call_sites(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None
    ) -> list[tuple[str, ast.Call | None]] | None:
        """The tree's calls of *function* by its name, (path, call); (path, None) for a file that may call it
        but the limit refused to parse; None when its name is too common to follow."""
        paths = self.code.naming(function.name)
        if paths is None:
            return None
        pattern = re.compile(rb"\b" + re.escape(function.name.encode()) + rb"\s*\(")
        found: list[tuple[str, ast.Call | None]] = []
        for where in paths:
            calls = self.code.calls(where, pattern)
            if self.code.unread(where, pattern):
                found.append((where, None))
            found += [(where, node) for node in calls if chain_of(node.func)[-1:] == [function.name]]
        return found

    def _never_runs(self, path: str, call: ast.Call, depth: int) -> bool:
        """Whether the run never makes *call*: a condition it is under is false for the run, or none of the calls
        of its function runs (a few functions up; a call back into one adds no way in)."""
        key = ("runs", path, call.lineno, call.col_offset)
        if key in self._busy:
            return True
        self._busy.add(key)
        try:
            for text in self.code.guards(path, call.lineno):
                node = _expression(text)
                value = node if isinstance(node, Unknown) else self.node_at(node, path, call.lineno)
                if isinstance(value, Known) and not value.value:
                    return True
            function, owner = self.code.enclosing(path, call.lineno)
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or depth >= MAX_UP:
                return False
            sites = self._call_sites(function, owner)
            if not sites or any(node is None for _, node in sites):
                return False
            return all(self._never_runs(where, node, depth + 1) for where, node in sites if node is not None)
        finally:
            self._busy.discard(key)

    def _parameter(
        self, path: str, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, name: str,
        depth: int,
    ) -> Value:  # fmt: skip
        """An optional parameter no fact names: its default, when no call of its function that the run may make
        passes it (what a call passes is not weighed: only whether it passes it)."""
        found = _default_of(function, name)
        if found is None or found[0] is None or depth > MAX_DEPTH:
            return Unknown((name,))
        key = ("parameter", path, function.lineno, name)
        if key in self._busy:
            return self._cut_short(Unknown((name,), cycle=name))
        self._busy.add(key)
        try:
            sites = self._call_sites(function, owner)
            unrun = 0
            for where, node in sites or ():
                if node is None:
                    return Unknown((name,))  # a file that may call it was not read
                if _passed(node, function, name, _takes_self(function, owner)) is not None:
                    if not self._never_runs(where, node, 0):
                        return Unknown((name,))
                    unrun += 1
        finally:
            self._busy.discard(key)
        if not sites:
            return Unknown((name,))  # no call of it found: it may be handed on by reference
        default = self.node_at(found[0], path, function.lineno)
        unrun_text = f" ({unrun} that pass it do not run)" if unrun else ""
        why = f"{name} passed by no call the run makes{unrun_text}: its default, {path}:{function.lineno}"
        return _why(default, (why,))

    def _subclass_call(self, path: str, call: ast.Call, cls: str) -> bool:
        """Whether *call* (``super().__init__(...)``, ``Base.__init__(self, ...)``) is in a subclass of *cls*."""
        _, owner = self.code.enclosing(path, call.lineno)
        return owner is not None and cls in {chain_of(b)[-1] for b in owner.bases if chain_of(b)}
