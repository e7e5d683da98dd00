"""Where a class field's value comes from: constructor arguments and ``replace()`` calls.

Covers dataclasses, msgspec Structs, NamedTuples and attrs classes alike: a
class-body field is set by the keyword of its name, or by the positional
argument at its index, of any call that constructs the class;
``dataclasses.replace(obj, name=v)`` / ``msgspec.structs.replace`` set it too.
(Its default is the slicer's to add: it is in the class body.)
"""

from __future__ import annotations

from collections.abc import Iterator

from sgtrace.graph.calls import Argument, functions_matching, keyword_values
from sgtrace.graph.points import scope_of
from sgtrace.graph.types import Types
from sgtrace.index.project import Module, Project, call_pattern, is_test_module
from sgtrace.records import Field, Function

_REPLACE = ("replace", "_replace", "evolve")


def field_values(project: Project, types: Types, klass: str, field: Field) -> Iterator[Argument]:
    """What the tree's constructor and replace() calls pass for *field* of *klass* (tests left out).

    Yielded one call at a time, so that a caller reads each before the next module is searched.
    """
    definition = project.class_def(klass)
    position = [f.name for f in definition[1].fields].index(field.name) if definition else -1
    field_bytes = field.name.encode("utf-8")
    for name in (klass.rsplit(".", 1)[-1], *_REPLACE):
        pattern = rf"\b{name}\s*\(" if name not in _REPLACE else rf"\b{field.name}\s*="
        modules = tuple(m for m in project.matching(pattern) if not is_test_module(m))
        if name in _REPLACE:
            callers = set(project.callers_of(name))
            modules = tuple(m for m in modules if m in callers)
        project.prefetch(modules)
        for module_name in modules:
            caller = project.module(module_name)
            if caller is None:
                continue
            for function in functions_matching(caller, call_pattern(name)):
                if name in _REPLACE and caller.data.find(field_bytes, function.start, function.end) < 0:
                    continue
                yield from _from_calls(project, types, caller, function, klass, field, position, name)


def _from_calls(
    project: Project,
    types: Types,
    module: Module,
    function: Function,
    klass: str,
    field: Field,
    position: int,
    name: str,
) -> Iterator[Argument]:
    scope = scope_of(module, function)
    for site in project.body(module, function).calls:
        callee = site.call.base
        if callee is None or callee.text.rsplit(".", 1)[-1] != name:
            continue
        values = keyword_values(site.call, field.name, project, scope, site.line)
        if name in _REPLACE:
            if not site.call.args or klass not in types.of(site.call.args[0], scope, site.line):
                continue
        else:
            if klass not in types.class_refs(callee, scope, site.line):
                continue
            if not values and 0 <= position < len(site.call.args):
                values = [site.call.args[position]]
        for value in values:
            yield Argument(scope, site.call, site.line, value)
