"""Just enough type inference to know which class an attribute is read from.

Sources, in order: the ``self`` of a method (its class and the classes that
inherit it, or the class its annotation pins); annotations of parameters,
attributes (class fields and annotated writes on ``self``) and returns
(``Optional[X]``, ``"X"``, ``X | None``, ``Union[...]``); constructor calls,
where what is called may be a class, a ``type[X]``/``Type[X]`` parameter,
attribute or return (X or any subclass), a local or attribute bound to a
class, an entry of a dict registry of classes, or a ``functools.partial`` of a
factory; ``@property`` methods; factories with annotated returns. A call on a
receiver typed as a base class dispatches to every override below it. A
receiver that stays unknown is answered by :meth:`Types.guess` (the classes
defining the method), which callers mark approximate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from sgtrace.graph.points import Scope, scope_of
from sgtrace.index.project import Module, Project, contains, is_test_module, write_pattern
from sgtrace.records import Assignment, Expr, Function

_WRAPPERS = re.compile(r"^(?:typing\.)?(?:Optional|Union|Type|type|ClassVar|Final|Annotated)\[(.*)\]$")
_CLASS_OF = re.compile(r"(?:^|[\[|,\s])(?:typing\.)?(?:Type|type)\[")
_PARTIAL = frozenset({"partial", "functools.partial"})
_MAX_DEPTH = 14
#: A method defined by more classes than this is too common to guess a receiver from.
MAX_GUESSES = 8
#: A method named by a string (``run_workers("name")``) is looked up among at most this many definitions.
MAX_NAMED = 40


def annotation_names(text: str) -> list[str]:
    """Class names an annotation can denote: ``Optional["A"] | B`` -> [A, B]."""
    text = text.strip().strip("'\"").strip()
    found: list[str] = []
    for part in re.split(r"[|,]", _unwrap(text)):
        part = _unwrap(part.strip().strip("'\""))
        found.extend(p.strip().strip("'\"") for p in re.split(r"[|,]", part))
    return [p.split("[", 1)[0] for p in found if p and p not in ("None", "...") and (p[0].isalpha() or p[0] == "_")]


def _unwrap(text: str) -> str:
    """``Optional[Type["X"]]`` -> ``"X"``: wrappers peeled off, outermost first."""
    match = _WRAPPERS.match(text)
    while match:
        text = match.group(1).strip().strip("'\"").strip()
        match = _WRAPPERS.match(text)
    return text


def is_class_annotation(text: str) -> bool:
    """Whether an annotation denotes classes rather than instances: ``type[X]``, ``Optional[Type[X]]``."""
    return bool(_CLASS_OF.search(text.strip().strip("'\"")))


class Types:
    """Answers "which classes of the tree can this expression be an instance of?"."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._attribute_memo: dict[tuple[str, str], frozenset[str]] = {}
        self._class_attribute_memo: dict[tuple[str, str], frozenset[str]] = {}
        self._guesses: dict[str, list[tuple[Module, Function]]] = {}

    def classes(self, module: Module, annotation: str) -> frozenset[str]:
        """Classes of the tree an annotation written in *module* denotes."""
        found = set()
        for name in annotation_names(annotation):
            qualified = self.project.resolve(module.source.module, name)
            if self.project.class_def(qualified) is not None:
                found.add(qualified)
        return frozenset(found)

    def self_types(self, scope: Scope) -> frozenset[str]:
        """What ``self`` may be in a method: the pinned class, or the class and its subclasses."""
        if scope.cls is None:
            return frozenset()
        pinned = self.classes(scope.module, scope.function.params[0].annotation)
        base = pinned or frozenset({scope.cls})
        found = set(base)
        for cls in base:
            found |= self.project.subclasses(cls)
        return frozenset(found)

    def of(self, value: Expr, scope: Scope, line: int, depth: int = 0) -> frozenset[str]:
        """Classes *value* may be an instance of (empty when unknown)."""
        if depth > _MAX_DEPTH:
            return frozenset()
        if value.kind == "name":
            return self._name(value.name, scope, line, depth)
        if value.kind == "attr" and value.base is not None:
            owners = self.of(value.base, scope, line, depth + 1)
            return self.attribute(owners, value.name, depth + 1)
        if value.kind == "call" and value.base is not None:
            return self.call_result(value, scope, line, depth + 1)
        if value.kind == "op" and value.name == "ifexp":
            return frozenset().union(*(self.of(a, scope, line, depth + 1) for a in value.args))
        return frozenset()

    def _name(self, name: str, scope: Scope, line: int, depth: int) -> frozenset[str]:
        if name == scope.self_name:
            return self.self_types(scope)
        for param in scope.function.params:
            if param.name == name and param.annotation:
                return self.classes(scope.module, param.annotation)
        found: set[str] = set()
        for assignment in self.project.assigned(scope.module, scope.function, name):
            if assignment.line < line and not assignment.target.path:
                found |= self.of(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)

    def class_refs(self, value: Expr, scope: Scope, line: int, depth: int = 0) -> frozenset[str]:
        """Classes an expression may *be* (not an instance of): ``Cls``, a local bound to a class,
        a ``type[X]`` parameter, attribute or return (X and its subclasses), a registry entry."""
        if depth > _MAX_DEPTH:
            return frozenset()
        if value.kind in ("name", "attr"):
            qualified = self.project.resolve(scope.module.source.module, value.text)
            if self.project.class_def(qualified) is not None:
                return frozenset({qualified})
        if value.kind == "name":
            return self._class_name(value, scope, line, depth)
        if value.kind == "attr" and value.base is not None:
            owners = self.of(value.base, scope, line, depth + 1)
            return self.class_attribute(owners, value.name, depth + 1) if owners else frozenset()
        if value.kind == "subscript" and value.base is not None:
            return self._registry(value.base, scope, line, depth + 1)
        if value.kind == "call" and value.base is not None:
            return self._class_call(value, scope, line, depth + 1)
        if value.kind == "op" and value.name == "ifexp":
            return frozenset().union(*(self.class_refs(a, scope, line, depth + 1) for a in value.args))
        return frozenset()

    def _class_name(self, value: Expr, scope: Scope, line: int, depth: int) -> frozenset[str]:
        for param in scope.function.params:
            if param.name == value.name:
                return self.subclass_closure(scope.module, param.annotation) if param.annotation else frozenset()
        found: set[str] = set()
        for assignment in self.project.assigned(scope.module, scope.function, value.name):
            if assignment.line < line:
                found |= self.class_refs(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)

    def subclass_closure(self, module: Module, annotation: str) -> frozenset[str]:
        """For a ``type[X]`` annotation, X and every subclass of it in the tree; else nothing."""
        if not is_class_annotation(annotation):
            return frozenset()
        found: set[str] = set()
        for cls in self.classes(module, annotation):
            found |= {cls, *self.project.subclasses(cls)}
        return frozenset(found)

    def _class_call(self, call: Expr, scope: Scope, line: int, depth: int) -> frozenset[str]:
        """Classes a call returns (not instances): ``partial(Cls, ...)``, a ``-> type[X]`` function."""
        assert call.base is not None
        if call.base.text in _PARTIAL:
            return self.class_refs(call.args[0], scope, line, depth + 1) if call.args else frozenset()
        found: set[str] = set()
        for module, function in self.callees(call, scope, line, depth + 1):
            if function.returns:
                found |= self.subclass_closure(module, function.returns)
        return frozenset(found)

    def _registry(self, base: Expr, scope: Scope, line: int, depth: int) -> frozenset[str]:
        """The classes a dict (or list) registry holds: ``WORKERS[key]`` with ``WORKERS = {"a": A}``."""
        literals: list[Expr] = []
        if base.kind == "name":
            literals = [a.value for a in self.project.assigned(scope.module, scope.function, base.name)]
            if not literals:
                found = self.project.global_value(scope.module.source.module, base.name)
                literals = [found] if found is not None else []
        found_classes: set[str] = set()
        for literal in literals:
            if literal.kind in ("dict", "tuple"):
                entries = [*literal.args, *(v for _, v in literal.keywords)]
                for entry in entries:
                    found_classes |= self.class_refs(entry, scope, line, depth + 1)
        return frozenset(found_classes)

    def class_attribute(self, owners: frozenset[str], name: str, depth: int) -> frozenset[str]:
        """Classes an attribute of *owners* is bound to: a ``type[X]`` field, a field or write of a class."""
        return _per_owner(owners, name, self._class_attribute_memo, lambda o: self._class_attribute(o, name, depth))

    def _class_attribute(self, owner: str, name: str, depth: int) -> frozenset[str]:
        found: set[str] = set()
        for klass, module, cls in self.project.mro_definitions(owner):
            for field in cls.fields:
                if field.name == name:
                    found |= self.subclass_closure(module, field.annotation) if field.annotation else frozenset()
                    if field.value and not found:
                        qualified = self.project.resolve(module.source.module, field.value)
                        found |= {qualified} if self.project.class_def(qualified) is not None else set()
            for method_module, method in self.project.methods(klass):
                if contains(method_module, method, write_pattern(name)):
                    found |= self._class_written(method_module, method, name, depth)
        return frozenset(found)

    def _class_written(self, module: Module, method: Function, name: str, depth: int) -> frozenset[str]:
        """Classes ``self.name = <a class>`` binds in one method."""
        found: set[str] = set()
        for scope, assignment in self._self_writes(module, method, name):
            if assignment.annotation:
                found |= self.subclass_closure(module, assignment.annotation)
            found |= self.class_refs(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)

    def _self_writes(self, module: Module, method: Function, name: str) -> Iterator[tuple[Scope, Assignment]]:
        """The assignments ``self.name = ...`` of one method (none outside a class)."""
        scope = scope_of(module, method)
        if scope.self_name is None:
            return
        for assignment in self.project.body(module, method).assignments:
            target = assignment.target
            if target.kind == "attr" and target.name == name and _is_name(target.base, scope.self_name):
                yield scope, assignment

    def call_result(self, call: Expr, scope: Scope, line: int, depth: int) -> frozenset[str]:
        """Classes a call returns an instance of: constructors and annotated returns."""
        assert call.base is not None
        constructed = self.class_refs(call.base, scope, line, depth)
        if constructed:
            return constructed
        found: set[str] = set()
        for module, function in self.callees(call, scope, line, depth):
            found |= self.returned(module, function, depth + 1)
        return frozenset(found)

    def returned(self, module: Module, function: Function, depth: int) -> frozenset[str]:
        """Classes a function returns instances of (annotation first, else its return statements)."""
        if function.returns:
            return self.classes(module, function.returns)
        if depth > _MAX_DEPTH:
            return frozenset()
        inner = scope_of(module, function)
        body = self.project.body(module, function)
        found: set[str] = set()
        for ret in body.returns:
            found |= self.of(ret.value, inner, ret.line, depth + 1)
        return frozenset(found)

    def callees(self, call: Expr, scope: Scope, line: int, depth: int = 0) -> list[tuple[Module, Function]]:
        """Functions of the tree a call may run: module functions, methods by MRO and overrides."""
        callee = call.base
        if callee is None:
            return []
        if callee.kind == "attr" and callee.base is not None:
            if _is_super(callee.base):
                return self._super_method(scope, callee.name)
            owners = self.of(callee.base, scope, line, depth + 1)
            if owners:
                return self.dispatch(owners, callee.name)
        if callee.kind in ("name", "attr"):
            qualified = self.project.resolve(scope.module.source.module, callee.text)
            found = self.project.function(qualified)
            if found is not None:
                return [found]
            classes = self.class_refs(callee, scope, line, depth + 1)
            if classes:
                return self.dispatch(classes, "__init__", overrides=False)
            wrapped = self._partial_of(callee, scope, line)
            if wrapped is not None and depth <= _MAX_DEPTH:
                return self.callees(Expr("call", wrapped.text, "", wrapped), scope, line, depth + 1)
        return []

    def _partial_of(self, callee: Expr, scope: Scope, line: int) -> Expr | None:
        """What a local bound to ``functools.partial(f, ...)`` wraps: ``f``."""
        if callee.kind != "name":
            return None
        for assignment in self.project.assigned(scope.module, scope.function, callee.name):
            value = assignment.value
            if assignment.line < line:
                if value.kind == "call" and value.base is not None and value.base.text in _PARTIAL and value.args:
                    return value.args[0]
        return None

    def guess(self, call: Expr) -> list[tuple[Module, Function]]:
        """The methods named like *call*'s that the tree's classes define, when there are a few.

        For a receiver whose type stays unknown; every answer is approximate.
        """
        callee = call.base
        if callee is None or callee.kind != "attr" or callee.name.startswith("__"):
            return []
        return self.definers(callee.name, MAX_GUESSES)

    def definers(self, name: str, limit: int) -> list[tuple[Module, Function]]:
        """The methods called *name* that the tree's classes define (tests left out); none past *limit*."""
        memo = f"{name}/{limit}"
        if memo not in self._guesses:
            found: list[tuple[Module, Function]] = []
            modules = [m for m in self.project.matching(rf"def\s+{re.escape(name)}\s*\(") if not is_test_module(m)]
            if len(modules) <= limit:
                self.project.prefetch(modules)
            for module_name in modules if len(modules) <= limit else ():
                module = self.project.module(module_name)
                if module is not None:
                    found.extend((module, f) for f in module.outline.functions if _is_method_named(module, f, name))
            self._guesses[memo] = found if len(found) <= limit else []
        return self._guesses[memo]

    def dispatch(self, owners: frozenset[str], name: str, overrides: bool = True) -> list[tuple[Module, Function]]:
        """The method *name* as each owner's MRO finds it, and (class-hierarchy analysis) overrides below."""
        found: dict[tuple[str, str], tuple[Module, Function]] = {}
        for owner in sorted(owners):
            classes = [owner, *sorted(self.project.subclasses(owner))] if overrides else [owner]
            for cls in classes:
                method = self.lookup(cls, name)
                if method is not None:
                    found[(method[0].source.module, method[1].qualname)] = method
        return list(found.values())

    def lookup(self, cls: str, name: str) -> tuple[Module, Function] | None:
        """The first definition of method *name* along the MRO of *cls*."""
        for klass in self.project.mro(cls):
            for module, method in self.project.methods(klass):
                if method.qualname.rsplit(".", 1)[-1] == name:
                    return module, method
        return None

    def _super_method(self, scope: Scope, name: str) -> list[tuple[Module, Function]]:
        if scope.cls is None:
            return []
        mro = self.project.mro(scope.cls)
        for klass in mro[1:]:
            for module, method in self.project.methods(klass):
                if method.qualname.rsplit(".", 1)[-1] == name:
                    return [(module, method)]
        return []

    def attribute(self, owners: frozenset[str], name: str, depth: int) -> frozenset[str]:
        """Classes an attribute of instances of *owners* holds: annotations, properties, constructor writes."""
        return _per_owner(owners, name, self._attribute_memo, lambda o: self._attribute(o, name, depth))

    def _attribute(self, owner: str, name: str, depth: int) -> frozenset[str]:
        found: set[str] = set()
        for klass, module, cls in self.project.mro_definitions(owner):
            for field in cls.fields:
                if field.name == name and field.annotation:
                    found |= self.classes(module, field.annotation)
            for method_module, method in self.project.methods(klass):
                short = method.qualname.rsplit(".", 1)[-1]
                if short == name and "property" in method.decorators:
                    found |= self.returned(method_module, method, depth + 1)
                elif contains(method_module, method, write_pattern(name)):
                    found |= self._written(method_module, method, name, depth)
        return frozenset(found)

    def _written(self, module: Module, method: Function, name: str, depth: int) -> frozenset[str]:
        """Classes of the instances ``self.name = ...`` holds after one method."""
        found: set[str] = set()
        for scope, assignment in self._self_writes(module, method, name):
            if assignment.annotation:
                found |= self.classes(module, assignment.annotation)
            found |= self.of(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)


def _is_method_named(module: Module, function: Function, name: str) -> bool:
    parent, _, short = function.qualname.rpartition(".")
    return short == name and bool(parent) and any(c.qualname == parent for c in module.outline.classes)


def _is_super(value: Expr) -> bool:
    return value.kind == "call" and value.base is not None and value.base.text == "super"


def _is_name(value: Expr | None, name: str) -> bool:
    return value is not None and value.kind == "name" and value.name == name


def _per_owner(
    owners: frozenset[str],
    name: str,
    memo: dict[tuple[str, str], frozenset[str]],
    compute: Callable[[str], frozenset[str]],
) -> frozenset[str]:
    """The union over *owners* of ``compute(owner)``, remembered per (owner, name); a cycle gives nothing."""
    found: set[str] = set()
    for owner in owners:
        if (owner, name) not in memo:
            memo[(owner, name)] = frozenset()  # cycles
            memo[(owner, name)] = compute(owner)
        found |= memo[(owner, name)]
    return frozenset(found)
