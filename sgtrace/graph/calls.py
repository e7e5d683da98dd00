"""Where a parameter's value comes from: its default, and the arguments of the calls that reach it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from sgtrace.graph.points import Edge, Point, Scope, call_site, scope_of
from sgtrace.index.project import Module, Project, call_pattern, contains
from sgtrace.records import CallSite, Expr, Function, Param

if TYPE_CHECKING:
    from sgtrace.graph.slicer import Slicer

#: How many modules mentioning a callee's name are searched for its calls.
MAX_CALLER_MODULES = 300


def feed_parameter(slicer: Slicer, scope: Scope, param: Param, index: int, target: Point) -> None:
    """Feed a parameter node from its default and from each call's matching argument."""
    if param.default:
        point = Point("const", " ".join(param.default.split()), scope.path, scope.function.line)
        slicer.edge(point, target, Edge("default"))
    bound = scope.self_name is not None or scope.function.qualname.endswith("__init__")
    if scope.caller is not None:  # entered from one call on the way back: only its argument counts
        caller, call, line = scope.caller
        _feed_argument(slicer, caller, call, line, param, index - (1 if bound else 0), target)
        return
    for caller, site in call_sites(slicer, scope):
        _feed_argument(slicer, caller, site.call, site.line, param, index - (1 if bound else 0), target)


def _feed_argument(
    slicer: Slicer, caller: Scope, call: Expr, line: int, param: Param, position: int, target: Point
) -> None:
    """Feed *target* from what *call* passes for *param*, its edges marked as entering at that call."""
    argument = _argument(call, param, position, slicer.project, caller, line)
    if argument is not None:
        site = call_site(caller, call, line)
        slicer.entering(site, target, lambda: slicer.feed(argument, caller, line, target, "param"))


def call_sites(slicer: Slicer, scope: Scope) -> list[tuple[Scope, CallSite]]:
    """Every call in the tree (tests left out) that may run the function of *scope*; remembered."""
    memo = (scope.module.source.module, scope.function.qualname)
    if memo not in slicer.call_sites:
        short = scope.function.qualname.rsplit(".", 1)[-1]
        names = [scope.cls.rsplit(".", 1)[-1]] if short == "__init__" and scope.cls else [short]
        found = []
        for caller, site in _call_sites(slicer, names):
            callees = slicer.types.callees(site.call, caller, site.line)
            if any(m.source.module == memo[0] and f.qualname == memo[1] for m, f in callees):
                found.append((caller, site))
        slicer.call_sites[memo] = found
    return slicer.call_sites[memo]


def _call_sites(slicer: Slicer, names: list[str]) -> Iterator[tuple[Scope, CallSite]]:
    """Calls whose callee is spelled with one of *names*, in functions that mention it."""
    project = slicer.project
    for name in names:
        project.prefetch(project.callers_of(name)[:MAX_CALLER_MODULES])
        for module_name in project.callers_of(name)[:MAX_CALLER_MODULES]:
            module = project.module(module_name)
            if module is None:
                continue
            for function in functions_matching(module, call_pattern(name)):
                caller = scope_of(module, function)
                for site in project.body(module, function).calls:
                    callee = site.call.base
                    if callee is not None and callee.text.rsplit(".", 1)[-1] == name:
                        yield caller, site


def functions_matching(module: Module, pattern: str) -> Iterator[Function]:
    """The module's functions whose source matches *pattern*."""
    if not module.matches(pattern):
        return
    for function in module.outline.functions:
        if contains(module, function, pattern):
            yield function


def _argument(
    call: Expr, param: Param, position: int, project: Project | None = None, scope: Scope | None = None, line: int = 0
) -> Expr | None:
    """The argument a call passes for *param* (at *position* among the positional ones)."""
    values = keyword_values(call, param.name, project, scope, line)
    if values:
        return values[0]
    if param.kind == "positional" and 0 <= position < len(call.args):
        argument = call.args[position]
        if argument.kind != "starred" and not any(a.kind == "starred" for a in call.args[:position]):
            return argument
    return None


def keyword_values(call: Expr, name: str, project: Project | None, scope: Scope | None, line: int) -> list[Expr]:
    """What a call passes as keyword *name*: ``name=v``, or a key of a dict literal splatted with ``**``.

    A splatted name is looked up among the dict literals assigned to it earlier in the same function.
    """
    found = [value for keyword, value in call.keywords if keyword == name]
    for keyword, splat in call.keywords:
        if keyword == "**":
            for literal in _dict_literals(splat, project, scope, line):
                found.extend(value for key, value in literal.keywords if key == name)
    return found


def _dict_literals(value: Expr, project: Project | None, scope: Scope | None, line: int) -> list[Expr]:
    if value.kind == "dict":
        return [value]
    if value.kind != "name" or project is None or scope is None:
        return []
    assignments = project.body(scope.module, scope.function).assignments
    return [
        a.value
        for a in assignments
        if a.target.kind == "name" and a.target.name == value.name and a.line < line and a.value.kind == "dict"
    ]
