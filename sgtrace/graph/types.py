"""Just enough type inference to know which class an attribute is read from.

Sources, in order: the ``self`` of a method (its class and the classes that
inherit it, or the class its annotation pins); annotations of parameters,
attributes and returns (``Optional[X]``, ``"X"``, ``X | None``); constructor
calls; ``@property`` methods; factories with annotated returns. A call on a
receiver typed as a base class dispatches to every override below it.
"""

from __future__ import annotations

import re

from sgtrace.graph.points import Scope, scope_of
from sgtrace.project import Module, Project, contains, write_pattern
from sgtrace.records import Expr, Function

_WRAPPERS = re.compile(r"^(?:typing\.)?(?:Optional|Union|Type|type|ClassVar|Final|Annotated)\[(.*)\]$")
_MAX_DEPTH = 6


def annotation_names(text: str) -> list[str]:
    """Class names an annotation can denote: ``Optional["A"] | B`` -> [A, B]."""
    text = text.strip().strip("'\"").strip()
    match = _WRAPPERS.match(text)
    if match:
        text = match.group(1)
    parts = [p.strip().strip("'\"") for p in re.split(r"[|,]", text)]
    return [p.split("[", 1)[0] for p in parts if p and p not in ("None", "...") and (p[0].isalpha() or p[0] == "_")]


class Types:
    """Answers "which classes of the tree can this expression be an instance of?"."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._attribute_memo: dict[tuple[str, str], frozenset[str]] = {}

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
        body = self.project.body(scope.module, scope.function)
        found: set[str] = set()
        for assignment in body.assignments:
            target = assignment.target
            if target.kind == "name" and target.name == name and assignment.line < line and not target.path:
                found |= self.of(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)

    def class_refs(self, value: Expr, scope: Scope, line: int, depth: int = 0) -> frozenset[str]:
        """Classes an expression may *be* (not an instance of): ``Cls``, a local bound to a class."""
        if depth > _MAX_DEPTH:
            return frozenset()
        if value.kind in ("name", "attr"):
            qualified = self.project.resolve(scope.module.source.module, value.text)
            if self.project.class_def(qualified) is not None:
                return frozenset({qualified})
        if value.kind == "name":
            body = self.project.body(scope.module, scope.function)
            found: set[str] = set()
            for assignment in body.assignments:
                target = assignment.target
                if target.kind == "name" and target.name == value.name and assignment.line < line:
                    found |= self.class_refs(assignment.value, scope, assignment.line, depth + 1)
            return frozenset(found)
        return frozenset()

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
            return self.dispatch(classes, "__init__", overrides=False)
        return []

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
        found: set[str] = set()
        for owner in owners:
            memo = (owner, name)
            if memo not in self._attribute_memo:
                self._attribute_memo[memo] = frozenset()  # cycles
                self._attribute_memo[memo] = self._attribute(owner, name, depth)
            found |= self._attribute_memo[memo]
        return frozenset(found)

    def _attribute(self, owner: str, name: str, depth: int) -> frozenset[str]:
        found: set[str] = set()
        for klass in self.project.mro(owner):
            definition = self.project.class_def(klass)
            if definition is None:
                continue
            module, cls = definition
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
        scope = scope_of(module, method)
        if scope.self_name is None:
            return frozenset()
        found: set[str] = set()
        for assignment in self.project.body(module, method).assignments:
            target = assignment.target
            if target.kind == "attr" and target.name == name and _is_name(target.base, scope.self_name):
                found |= self.of(assignment.value, scope, assignment.line, depth + 1)
        return frozenset(found)


def _is_super(value: Expr) -> bool:
    return value.kind == "call" and value.base is not None and value.base.text == "super"


def _is_name(value: Expr | None, name: str) -> bool:
    return value is not None and value.kind == "name" and value.name == name
