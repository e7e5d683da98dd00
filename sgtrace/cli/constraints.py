"""Options that cannot be given together, or only with another: usage errors, said in each option's help.

click has no groups of exclusive options; a command says its own with :func:`constraints`, placed just
under ``@cli.command`` so that it sees every option. An option is *given* when it is on the command
line with a value other than its default (a configured default never conflicts); ``name=value`` names
one value of an option (``fmt=json``: ``--format json``), ``-`` standard input.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
from click.core import ParameterSource

#: ``(a, b)``: the option (or ``option=value``) *a* with *b*.
Pair = tuple[str, str]


def constraints(conflicts: Sequence[Pair] = (), needs: Sequence[Pair] = ()) -> Callable[[Any], Any]:
    """Refuse *conflicts* (both given) and *needs* (the first given without the second) as usage errors."""

    def decorate(function: Any) -> Any:
        params = {p.name: p for p in getattr(function, "__click_params__", []) if isinstance(p, click.Option)}
        _note(params, conflicts, needs)

        @functools.wraps(function)
        def checked(**kwargs: Any) -> Any:
            ctx = click.get_current_context()
            for first, second in conflicts:
                if _given(ctx, first) and _given(ctx, second):
                    spelled = f"{_spell(params, first)} and {_spell(params, second)}"
                    raise click.UsageError(f"{spelled} cannot be used together", ctx)
            for first, second in needs:
                if _given(ctx, first) and not _set(ctx, second):
                    raise click.UsageError(f"{_spell(params, first)} needs {_spell(params, second)}", ctx)
            return function(**kwargs)

        return checked

    return decorate


def _note(params: dict[str, click.Option], conflicts: Sequence[Pair], needs: Sequence[Pair]) -> None:
    """Say the constraints in each option's help: ``[not with --a, --b; needs --c]``."""
    excluded: dict[str, dict[str, list[str]]] = {}  # option -> its value ("" for any) -> what it excludes
    for first, second in [*conflicts, *((b, a) for a, b in conflicts)]:
        name, _, value = first.partition("=")
        excluded.setdefault(name, {}).setdefault(value, []).append(_spell(params, second))
    needed = {_name(first): _spell(params, second) for first, second in needs}
    for name in sorted({*excluded, *needed}):
        said = [f"{value + ': ' if value else ''}not with {', '.join(others)}" for value, others in
                excluded.get(name, {}).items()]  # fmt: skip
        said += [f"needs {needed[name]}"] if name in needed else []
        option = params[name]
        option.help = f"{option.help or ''} [{'; '.join(said)}]".strip()


def _name(spec: str) -> str:
    return spec.partition("=")[0]


def _spell(params: dict[str, click.Option], spec: str) -> str:
    """``--want-kv-gb``, ``--format json``: how the command line spells *spec*."""
    name, _, value = spec.partition("=")
    longest = max(params[name].opts, key=len)
    return f"{longest} {value}" if value else longest


def _given(ctx: click.Context, spec: str) -> bool:
    """Whether *spec* is on the command line (not a default, nor a configured one)."""
    return ctx.get_parameter_source(_name(spec)) == ParameterSource.COMMANDLINE and _set(ctx, spec)


def _set(ctx: click.Context, spec: str) -> bool:
    """Whether the option of *spec* has a value (the one *spec* names, if it names one), wherever it came from."""
    name, _, wanted = spec.partition("=")
    value = ctx.params.get(name)
    if wanted == "-":
        return _stdin(value)
    if wanted:
        return str(value) == wanted
    return not (value is None or value is False or value == ())  # 0 is a value (--upstream 0)


def _stdin(value: Any) -> bool:
    """Whether an opened click.File is standard input (``-``)."""
    stdin = sys.stdin
    return value is not None and (value is stdin or value is getattr(stdin, "buffer", None) or
                                  getattr(value, "name", None) in ("<stdin>", "-"))  # fmt: skip
