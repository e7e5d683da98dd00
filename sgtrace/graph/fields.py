"""Where a class field's value comes from: its default, constructor arguments, ``replace()`` calls.

Covers dataclasses, msgspec Structs, NamedTuples and attrs classes alike: a
class-body field is set by the keyword of its name, or by the positional
argument at its index, of any call that constructs the class;
``dataclasses.replace(obj, name=v)`` / ``msgspec.structs.replace`` set it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sgtrace.graph.calls import functions_matching, keyword_values
from sgtrace.graph.points import Edge, Point, scope_of
from sgtrace.index.project import Module, call_pattern, is_test_module
from sgtrace.records import Field, Function

if TYPE_CHECKING:
    from sgtrace.graph.slicer import Slicer

_REPLACE = ("replace", "_replace", "evolve")


def feed_field(slicer: Slicer, module: Module, klass: str, field: Field) -> None:
    """Feed a field node from its default and every constructor or replace() argument for it."""
    target = slicer.field_point(module, klass, field.name, field.line)
    if field.value:
        value = " ".join(field.value.split())
        slicer.edge(Point("const", value, module.source.path, field.line), target, Edge("default"))
    definition = slicer.project.class_def(klass)
    position = [f.name for f in definition[1].fields].index(field.name) if definition else -1
    field_bytes = field.name.encode("utf-8")
    for name in (klass.rsplit(".", 1)[-1], *_REPLACE):
        pattern = rf"\b{name}\s*\(" if name not in _REPLACE else rf"\b{field.name}\s*="
        modules = tuple(m for m in slicer.project.matching(pattern) if not is_test_module(m))
        if name in _REPLACE:
            modules = tuple(m for m in modules if m in set(slicer.project.callers_of(name)))
        slicer.project.prefetch(modules)
        for module_name in modules:
            caller = slicer.project.module(module_name)
            if caller is None:
                continue
            for function in functions_matching(caller, call_pattern(name)):
                if name in _REPLACE and caller.data.find(field_bytes, function.start, function.end) < 0:
                    continue
                _feed_from_calls(slicer, caller, function, klass, field, position, name, target)


def _feed_from_calls(
    slicer: Slicer,
    module: Module,
    function: Function,
    klass: str,
    field: Field,
    position: int,
    name: str,
    target: Point,
) -> None:
    scope = scope_of(module, function)
    for site in slicer.project.body(module, function).calls:
        callee = site.call.base
        if callee is None or callee.text.rsplit(".", 1)[-1] != name:
            continue
        values = keyword_values(site.call, field.name, slicer.project, scope, site.line)
        if name in _REPLACE:
            if not site.call.args or klass not in slicer.types.of(site.call.args[0], scope, site.line):
                continue
        else:
            if klass not in slicer.types.class_refs(callee, scope, site.line):
                continue
            if not values and 0 <= position < len(site.call.args):
                values = [site.call.args[position]]
        for value in values:
            slicer.feed(value, scope, site.line, target, "field")
