"""What a release's server arguments say, read with ``ast``: their defaults and the default reserve.

The server-arguments class is the class of the tree that declares the budget
knob as an annotated field and declares the most fields (SGLang's
``ServerArgs``; nothing is looked up by name). The reserve is the memory the
release's own default heuristic keeps out of the budget (for activations and
CUDA graphs): the body of its ``if ....<budget> is None:`` is interpreted
statement by statement with the small evaluator of ``explain`` (assignments
and ``if``; nothing runs), and the reserve is ``gpu_mem * (1 - the fraction it
picks)``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.explain import Missing, evaluate
from sgtrace.model import SourceFile
from sgtrace.parse import read_bytes

#: Files larger than this are not read for the heuristic (generated tables, not code).
_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class ReleaseArgs:
    """ServerArgs as the release declares it."""

    #: Relative path of the file read, "" if the release has none.
    path: str
    #: Field -> default, for fields with a literal default.
    defaults: dict[str, Any] = field(default_factory=dict)
    #: Fields whose annotation is numeric (int or float).
    numeric: frozenset[str] = frozenset()
    #: Every field name.
    fields: frozenset[str] = frozenset()
    #: Command-line option (``--tp-size``) -> the field it sets, as the release's ``add_argument`` calls say.
    options: dict[str, str] = field(default_factory=dict)
    #: Options that take no value -> the value they store (``store_true``: True).
    flags: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class Reserve:
    """The memory the release's default heuristic keeps for activations, with the figures it used."""

    #: GB, or None when the heuristic could not be evaluated.
    gb: float | None
    #: The default mem_fraction_static it picks.
    fraction: float | None
    #: Where the heuristic is (path:line), "" if not found.
    where: str
    #: The inputs it read, by name.
    used: dict[str, Any]
    #: What it needed and did not have ("" if nothing).
    missing: str = ""


#: A file of the tree and its bytes.
Text = tuple[SourceFile, bytes]


def mentioning(files: Sequence[SourceFile], budget: str) -> list[Text]:
    """The files that name *budget* at all, read once: what :func:`read_args` and :func:`default_reserve` search."""
    found = []
    for source in files:
        try:
            data = read_bytes(source.abspath)
        except OSError:
            continue
        if len(data) <= _MAX_BYTES and budget.encode() in data:
            found.append((source, data))
    return found


def read_args(texts: Sequence[Text], budget: str, files: Sequence[SourceFile] = ()) -> ReleaseArgs:
    """The fields of the tree's server-arguments class: the one declaring *budget* with the most fields.

    *texts* are the files that mention *budget* (see :func:`mentioning`). A release that declares its
    arguments in namespaces (one class per group, all of one base, in one folder: SGLang 0.5.2x's
    ``arg_groups/fields``) has them all read, when *files* (the tree's) are given.
    """
    best: tuple[int, str, ast.ClassDef] | None = None
    trees = []
    for source, data in texts:
        tree = _parse_if(data, f"{budget}:") or _parse_if(data, "add_argument(")
        trees += [tree] if tree is not None else []
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ClassDef) and budget in _fields(node):
                candidate = (len(_fields(node)), source.path, node)
                if best is None or (-candidate[0], candidate[1]) < (-best[0], best[1]):
                    best = candidate
    if best is None:
        return ReleaseArgs("")
    _, path, node = best
    options, flags = _options(trees)
    defaults: dict[str, Any] = {}
    numeric: set[str] = set()
    declared = set(_fields(node))
    for group in [node, *_siblings(node, path, files)]:
        declared.update(_fields(group))
        for item in group.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                if _numeric(item.annotation):
                    numeric.add(item.target.id)
                if isinstance(item.value, ast.Constant):
                    defaults.setdefault(item.target.id, item.value.value)
    return ReleaseArgs(path, defaults, frozenset(numeric), frozenset(declared), options, flags)


def _numeric(annotation: ast.expr) -> bool:
    """Whether a field's type is a number (``int``, ``Optional[float]``); of ``Annotated[T, ...]`` (``A[T, Arg(help=
    ...)]``) only T counts, not the words of its help."""
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts:
        annotation = annotation.slice.elts[0]
    return bool(re.search(r"\b(?:int|float)\b", ast.unparse(annotation)))


def _siblings(node: ast.ClassDef, path: str, files: Sequence[SourceFile]) -> list[ast.ClassDef]:
    """The other argument groups: classes of the same bases (there are some) in the files of the same folder."""
    bases = [ast.unparse(b) for b in node.bases]
    if not bases or bases == ["object"]:
        return []
    folder = path.rpartition("/")[0]
    found = []
    for source in files:
        if source.path.rpartition("/")[0] != folder or source.path == path:
            continue
        try:
            tree = _parse_if(read_bytes(source.abspath), "class ")
        except OSError:
            continue
        for other in tree.body if tree is not None else ():
            if isinstance(other, ast.ClassDef) and [ast.unparse(b) for b in other.bases] == bases:
                found.append(other)
    return found


def _options(trees: list[ast.Module]) -> tuple[dict[str, str], dict[str, bool]]:
    """``--option`` -> field of every ``add_argument`` call (through ``args.field = args.dest`` renames), and flags."""
    options: dict[str, str] = {}
    flags: dict[str, bool] = {}
    renamed: dict[str, str] = {}
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            names = [str(a.value) for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
            keywords = {k.arg: str(k.value.value) for k in node.keywords if isinstance(k.value, ast.Constant)}
            dest = keywords.get("dest") or (names[0][2:].replace("-", "_") if names else "")
            action = keywords.get("action")
            for name in names:
                options[name] = dest
                if action in ("store_true", "store_false"):
                    flags[name] = action == "store_true"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute) and _same_object(target, value):
                renamed[value.attr] = target.attr  # args.tp_size = args.tensor_parallel_size
    return {name: renamed.get(dest, dest) for name, dest in options.items()}, flags


def _same_object(one: ast.Attribute, other: ast.Attribute) -> bool:
    return isinstance(one.value, ast.Name) and isinstance(other.value, ast.Name) and one.value.id == other.value.id


def _fields(node: ast.ClassDef) -> list[str]:
    return [i.target.id for i in node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)]


def _parse_if(data: bytes, needle: str) -> ast.Module | None:
    """The file's syntax tree if its text holds *needle* (a cheap filter first); None otherwise."""
    if needle.encode() not in data:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return None


def default_reserve(texts: Sequence[Text], args: ReleaseArgs, budget: str, facts: Mapping[str, Any]) -> Reserve:
    """Evaluate the release's default *budget* heuristic with *facts* (server args, log figures)."""
    found = _heuristic(texts, args, budget)
    if found is None:
        return Reserve(None, None, "", {}, f"no default {budget} heuristic found")
    path, node = found
    defaults = args.defaults
    where = f"{path}:{node.lineno}"
    gpu_mem = facts.get("gpu_mem")
    if gpu_mem is None and isinstance(facts.get("gpu_gb"), (int, float)):
        gpu_mem = round(float(facts["gpu_gb"]) * 1024)  # the card's size, MB, as the heuristic reads it
    if gpu_mem is None and isinstance(facts.get("avail_before_weights_gb"), float):
        gpu_mem = round(float(facts["avail_before_weights_gb"]) * 1024)  # MB, as the heuristic counts
    used: dict[str, Any] = {"gpu_mem": gpu_mem}
    env: dict[str, Any] = {"gpu_mem": gpu_mem}
    unknown: dict[str, str] = {}

    def lookup(name: str) -> Any:
        if name in unknown:
            raise Missing(unknown[name])
        for source in (env, facts, defaults):
            if name in source:
                if source is not env:
                    used[name] = source[name]
                return source[name]
        raise Missing(name)

    try:
        fraction = _interpret(node.body, budget, env, unknown, lookup)
    except Missing as exc:
        return Reserve(None, None, where, used, exc.name)
    if fraction is None or not isinstance(gpu_mem, (int, float)):
        return Reserve(None, fraction, where, used, "gpu_mem" if fraction is not None else budget)
    return Reserve(gpu_mem * (1 - fraction) / 1024, fraction, where, used)


def _interpret(
    body: list[ast.stmt], budget: str, env: dict[str, Any], unknown: dict[str, str], lookup: Any
) -> float | None:
    """Run assignments and ifs of *body*; the fraction once *budget* is assigned, else None."""
    for statement in body:
        if isinstance(statement, ast.If):
            try:
                test = evaluate(statement.test, lookup)
            except (TypeError, ValueError, ArithmeticError) as exc:  # None > 80: a value the run did not give
                raise Missing(ast.unparse(statement.test)) from exc
            branch = statement.body if test else statement.orelse
            fraction = _interpret(branch, budget, env, unknown, lookup)
            if fraction is not None:
                return fraction
            continue
        name, value = _assignment(statement)
        if name is None or value is None:
            continue
        try:
            env[name] = evaluate(value, lookup)
            unknown.pop(name, None)
        except Missing as exc:
            unknown[name] = exc.name
        except (TypeError, ValueError, ArithmeticError):
            unknown[name] = ast.unparse(value)
        if name == budget:
            return float(lookup(name))
    return None


def _assignment(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    target: ast.expr | None = None
    value: ast.expr | None = None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    elif isinstance(statement, ast.AnnAssign):
        target, value = statement.target, statement.value
    elif isinstance(statement, ast.AugAssign):
        target = statement.target
        value = ast.BinOp(left=_load(target), op=statement.op, right=statement.value)
    if isinstance(target, ast.Name):
        return target.id, value
    if isinstance(target, ast.Attribute):
        return target.attr, value
    return None, None


def _load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return ast.Name(id=target.id if isinstance(target, ast.Name) else "_", ctx=ast.Load())


def _heuristic(texts: Sequence[Text], args: ReleaseArgs, budget: str) -> tuple[str, ast.If] | None:
    """The ``if X.<budget> is None:`` that picks the default: in the server-arguments file first."""
    ordered = sorted(texts, key=lambda t: (t[0].path != args.path, t[0].path))
    for source, data in ordered:
        tree = _parse_if(data, f"{budget} is None")
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.If) and _tests_unset(node.test, budget) and _assigns(node, budget):
                return source.path, node
    return None


def _tests_unset(test: ast.expr, budget: str) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.left, (ast.Attribute, ast.Name))
        and (test.left.attr if isinstance(test.left, ast.Attribute) else test.left.id) == budget
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _assigns(node: ast.If, budget: str) -> bool:
    return any(_assignment(s)[0] == budget for s in ast.walk(node) if isinstance(s, ast.stmt))
