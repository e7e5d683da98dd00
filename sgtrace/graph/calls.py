"""Which calls may run a function, and what each passes for a parameter."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sgtrace.graph.points import Scope, scope_of
from sgtrace.graph.types import Types
from sgtrace.index.project import Module, Project, call_pattern, contains
from sgtrace.records import CallSite, Expr, Function, Param

#: How many modules mentioning a callee's name are searched for its calls.
MAX_CALLER_MODULES = 300


@dataclass(frozen=True, slots=True)
class Argument:
    """What one call passes for a parameter (or a class field, see :mod:`sgtrace.graph.fields`)."""

    #: The function the call is in.
    caller: Scope
    #: The call.
    call: Expr
    #: Its 1-based line.
    line: int
    #: The argument expression (a keyword's value, or the positional one at the parameter's index).
    value: Expr


class CallIndex:
    """The calls of a tree that may run each function (remembered), and what they pass for a parameter.

    The slicer asks it for the arguments that feed a parameter and adds the edges itself; the reach
    search asks it for the callers of a function. Both share one memo when built on one index.
    """

    def __init__(self, project: Project, types: Types) -> None:
        self.project = project
        self.types = types
        #: (module, qualname) -> the calls that may run that function.
        self._sites: dict[tuple[str, str], list[tuple[Scope, CallSite]]] = {}

    def sites(self, scope: Scope) -> list[tuple[Scope, CallSite]]:
        """Every call in the tree (tests left out) that may run the function of *scope*; remembered."""
        memo = (scope.module.source.module, scope.function.qualname)
        if memo not in self._sites:
            short = scope.function.qualname.rsplit(".", 1)[-1]
            names = [scope.cls.rsplit(".", 1)[-1]] if short == "__init__" and scope.cls else [short]
            found = []
            for caller, site in self._spelled(names):
                callees = self.types.callees(site.call, caller, site.line)
                if any(m.source.module == memo[0] and f.qualname == memo[1] for m, f in callees):
                    found.append((caller, site))
            self._sites[memo] = found
        return self._sites[memo]

    def arguments(self, scope: Scope, param: Param, index: int) -> Iterator[Argument]:
        """What the calls that may run *scope*'s function pass for *param* (the *index*-th parameter).

        A scope entered from one call on the way back from a return takes that call's argument only.
        Yielded one call at a time, in the order of :meth:`sites`, so that a caller reads each before
        asking for the next.
        """
        bound = scope.self_name is not None or scope.function.qualname.endswith("__init__")
        position = index - (1 if bound else 0)
        if scope.caller is not None:  # entered from one call on the way back: only its argument counts
            calls: Iterable[tuple[Scope, Expr, int]] = [scope.caller]
        else:
            calls = ((caller, site.call, site.line) for caller, site in self.sites(scope))
        for caller, call, line in calls:
            value = _argument(call, param, position, self.project, caller, line)
            if value is not None:
                yield Argument(caller, call, line, value)

    def _spelled(self, names: list[str]) -> Iterator[tuple[Scope, CallSite]]:
        """Calls whose callee is spelled with one of *names*, in functions that mention it."""
        project = self.project
        for name in names:
            callers = project.callers_of(name)[:MAX_CALLER_MODULES]
            project.prefetch(callers)
            for module_name in callers:
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
    assignments = project.assigned(scope.module, scope.function, value.name)
    return [a.value for a in assignments if a.line < line and a.value.kind == "dict"]
