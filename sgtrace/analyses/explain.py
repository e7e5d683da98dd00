"""Evaluate the budget formula a release's code contains, step by step, with figures from a log or --set.

The formula is the budget sites ``caps`` found: the statement where the budget
meets other quantities, and the statements that use its result. Their source
is evaluated with a small arithmetic evaluator over the standard library's
``ast`` (numbers, names, attributes, + - * / // %, int/float/min/max): no
code is run. A variable takes its value from ``--set NAME=VALUE``, else from
the log by what its name says it holds (see ROLES), else it is reported as
missing together with the log line or ``--set`` that would supply it.

Each cap's status for the run is its own guard and the calls that reach its
function (:mod:`sgtrace.analyses.reached`), evaluated in three values with the
same evaluator: applies, did not bind, not reached, unknown.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.evaluate import ASSUMED, CLASS_ASSUMED, CONFIG_KEY, LOADED_ASSUMED
from sgtrace.analyses.figures import number, written
from sgtrace.analyses.reached import Holds, Key, Paths, Reach, Verdict, both, condition
from sgtrace.model import BudgetSite, Cap
from sgtrace.run.messages import QUANTITIES, Pool, quote

#: Which log quantity a formula variable holds, by its name (the names SGLang's code gives them).
ROLES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^available_gpu_memory$|^avail"), "avail_after_weights_gb"),
    (re.compile(r"total_gpu_memory|pre_model_load_memory|min_per_gpu_memory"), "avail_before_weights_gb"),
)

#: An assumption in a decided value's reasons (:class:`sgtrace.analyses.evaluate.ModelConfig`).
_ASSUMPTION = re.compile(
    r"(?:^|; |: )(?:decided by )?([^;:]*? assumed [^;]*?) \((?:"
    + re.escape(ASSUMED)
    + "|"
    + re.escape(CLASS_ASSUMED)
    + "|"
    + re.escape(LOADED_ASSUMED)
    + r")\)"
)

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "int": int,
    "float": float,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
}


@dataclass(frozen=True, slots=True)
class Observation:
    """What a call of the release measures, as the log shows it: a quantity of the log (see ROLES)."""

    #: The log quantity.
    quantity: str
    #: The call and where it is, for the reader.
    call: str


#: (name or expression, path, line) -> its value as the release's code works it out for this run (an
#: :mod:`~sgtrace.analyses.evaluate` value): what a formula input nothing gives is asked of.
Resolve = Callable[[str, str, int], Any]


#: The fact of the memory free when the release sizes the pool, where other loads come after the target's weights.
AT_SIZING = "avail_at_sizing_gb"


_AT_SIZING_WORDS = "GPU memory free when the pool is sized (after the weights loaded before it)"


@dataclass(frozen=True)
class Reading:
    """How the release's code is read beyond the formula's statements: *resolve* for an input nothing gives,
    *guards* for the conditions a statement runs under (see :func:`explain`)."""

    resolve: Resolve | None = None
    guards: Callable[[str, int], list[str]] | None = None


class Missing(Exception):
    """A name the evaluation needs and nothing supplies."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass(frozen=True, slots=True)
class Step:
    """One statement of the formula, evaluated."""

    #: Where it is.
    path: str
    #: 1-based line.
    line: int
    #: The statement.
    code: str
    #: The name it binds ("" for a returned expression).
    target: str
    #: Its value (GB for memory), or None when it could not be evaluated.
    value: float | None
    #: What it needed and did not have.
    missing: tuple[str, ...] = ()
    #: Why it does not run for this run (a condition it is under is false, and what decided it); "" if it runs.
    skipped: str = ""
    #: The conditions it is under that the facts do not decide (it is applied, as it may run).
    when: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    """The release's own bytes per token, evaluated for the run's model, and the pool in tokens it gives."""

    #: Bytes one token takes in the pool (every layer's K and V, or MLA's latent), per GPU.
    per_token: int
    #: The predicted pool in tokens (the statement that divides the budget by the cell size), before page
    #: rounding; None when that statement could not be evaluated with the prediction.
    tokens: int | None
    #: The statement that divides, where it is.
    path: str
    line: int
    code: str
    #: The facts and places that decided the cell size.
    why: tuple[str, ...] = ()
    #: The tokens after the page rounding that applies to the run (its round caps, with the run's page size),
    #: and the page size; None where no rounding applies or it could not be evaluated.
    rounded: int | None = None
    page: int | None = None
    #: Where this release sizes the pool in another order than the log's run did (its draft's weights loaded
    #: first): the tokens the cell gives for the pool of the run's own order, to set beside the log's.
    as_run: int | None = None


@dataclass(frozen=True, slots=True)
class Share:
    """A part of the budget the release's code pays for besides the KV pool: a share it takes out of the budget
    before the pool's tokens (a Mamba / linear-attention state pool, a fixed reserve), see analyses.shares."""

    #: What the code takes out, as it spells it (``mamba_state_memory``).
    what: str
    #: The statement that takes it out, where it is.
    path: str
    line: int
    #: ``Class.method`` or ``func`` holding it ("" outside one).
    function: str
    #: The statement's status for the run: "applies" where the run's facts say it runs; else ("unknown", or "not
    #: reached" only by what was assumed of the model) the log's line of its pool says it did.
    status: str
    #: The log's pool it is, by its name or its function's (None: no pool the log prints a line of).
    pool: Pool | None
    #: The log's line of that pool and its size in GB (None: the log shows no line of it).
    shown: int | None = None
    gb: float | None = None


@dataclass(frozen=True)
class Explanation:
    """The formula evaluated, the prediction, what the log observed, and which caps applied."""

    #: Inputs used, by name.
    inputs: dict[str, Any]
    #: The formula's statements, in order.
    steps: tuple[Step, ...]
    #: The predicted KV budget in GB (the last step's value), if it could be computed.
    kv_budget_gb: float | None
    #: The KV cache size the log reports, GB.
    observed_kv_gb: float | None
    #: The tokens the log reports.
    observed_tokens: float | None
    #: Bytes per token the observation implies.
    bytes_per_token: float | None
    #: (cap, status, reason) for each cap.
    caps: tuple[tuple[Cap, str, str], ...]
    #: name -> how to supply it, for every input that was missing.
    missing: dict[str, str] = field(default_factory=dict)
    #: Inputs solved from the pool the log shows (assuming no cap bound it): name -> value.
    implied: dict[str, float] = field(default_factory=dict)
    #: Inputs the release's code worked out for this run: name -> how (the facts and places that decided it).
    worked: dict[str, str] = field(default_factory=dict)
    #: (path, line) of the statements of the prediction's chain: the run sized its pool there.
    sized_at: tuple[tuple[str, int], ...] = ()
    #: The release's cell size evaluated for the run's model, and the tokens it gives (None if not decided).
    cell: Cell | None = None
    #: (path, line, why) of each applying ``min`` cap whose other operand, evaluated for the run, is the pool's
    #: tokens: the cap that bound it.
    bound: tuple[tuple[str, int, str], ...] = ()
    #: Where the log's pool and the formula's differ: each explanation the numbers allow (analyses.causes.Cause),
    #: those the log supports first.
    causes: tuple[Any, ...] = ()
    #: What the budget pays for besides the KV pool: the shares the release's code takes out of it first.
    shares: tuple[Share, ...] = ()

    @property
    def statements(self) -> frozenset[tuple[str, int]]:
        """(path, line) of the formula's own statements: those of the chain that predicted the pool, and every
        step. None of them is a cap of the formula, nor a share of its budget."""
        return frozenset(self.sized_at) | {(step.path, step.line) for step in self.steps}

    def binding(self, cap: Cap) -> str | None:
        """Why *cap* bound the pool (see :attr:`bound`), None if it did not."""
        return next((why for path, line, why in self.bound if (path, line) == (cap.path, cap.line)), None)

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What the answer takes as given that neither the log nor the model's config shows (a config known only by
        its architecture, the loaded model's layers): each fact so taken, once, in the order first met."""
        texts = [*self.worked.values(), *(why for _, _, why in self.caps)]
        texts += ["; ".join(self.cell.why)] if self.cell is not None else []
        return tuple(dict.fromkeys(m.group(1) for text in texts for m in _ASSUMPTION.finditer(text)))

    @property
    def predicted_tokens(self) -> int | None:
        """The predicted pool in tokens, before page rounding: by the release's own cell size for the run's model
        where it was decided, else at the log's own bytes per token (its pool's bytes over its tokens); None
        without either, or where the budget pays for a share the log's pool leaves out."""
        if self.cell is not None and self.cell.tokens is not None:
            return self.cell.tokens
        if self.kv_budget_gb is None or not self.bytes_per_token or self.kv_budget_gb <= 0:
            return None
        if any(share.shown is None for share in self.shares):
            return None  # the log's bytes are the KV pool's alone, the budget pays for a share besides
        return int(self.kv_budget_gb * (1 << 30) // self.bytes_per_token)


def explain(
    sites: list[BudgetSite],
    caps: list[Cap],
    budget: str,
    facts: Mapping[str, Any],
    paths: Paths | None = None,
    resolve: Resolve | None = None,
    guards: Callable[[str, int], list[str]] | None = None,
    unreached: Callable[[str, int], str] | None = None,
) -> Explanation:
    """Evaluate *sites* (in order) with *facts* (log quantities, server args, --set values).

    A release may compute the budget on more than one path (a start-up sizing and a later resize):
    each statement that mentions the budget starts a chain, statements using a chain's results join
    it, and the prediction is the result of the first chain that could be computed whole. Each cap's
    status is its own guard and the calls that reach its function (*paths*, from the graph) evaluated
    with *facts*. An input neither an earlier statement nor *facts* give is worked out by *resolve* (the
    release's code evaluated for the run) where it can be. A statement under an ``if`` (*guards*: the
    conditions of a statement, by its place) applies only where its conditions are true or undecided, and
    only in a function the run may reach (*unreached*: why the run does not reach a place, "" if it may).
    """
    env: dict[str, Any] = {}
    worked: dict[str, str] = {}
    undecided: dict[str, tuple[str, ...]] = {}
    missing: dict[str, str] = {}
    steps: list[Step] = []
    chains: list[list[Step]] = []
    chain_of: dict[str, int] = {}
    pools: set[int] = set()  # the chains that subtract the budget's share from memory: a pool, not a headroom
    for site in sorted(sites, key=lambda s: (s.path, s.line)):
        target, value_node = _statement(site.code)
        if value_node is None:
            continue
        names = _names(value_node)
        joined = sorted({chain_of[n] for n in names if n in chain_of})
        if budget not in names and not joined:
            continue  # a reservation that does not apply to this formula's inputs
        if not joined:
            chains.append([])
        index = joined[0] if joined else len(chains) - 1
        skipped, when = _conditions(site, guards, facts, resolve)
        skipped = skipped or (unreached(site.path, site.line) if unreached is not None else "")
        if skipped:
            steps.append(Step(site.path, site.line, site.code, target, None, skipped=skipped))
            continue  # the statement does not run: what it would bind keeps its value
        if _subtracts(value_node, {budget, *chain_of}):
            pools.add(index)
        try:
            value = evaluate(value_node, _resolving(env, facts, resolve, site, worked, undecided))
            step = Step(site.path, site.line, site.code, target, float(value), when=when)
            if target:
                env[target] = value
        except Missing as exc:
            if exc.name not in chain_of:  # not a result of an earlier statement that could not be evaluated
                deciding = tuple(n for n in undecided.get(exc.name, ()) if n != exc.name)
                missing[exc.name] = _how(exc.name, budget) + _deciding(deciding)
            step = Step(site.path, site.line, site.code, target, None, (exc.name,), when=when)
        steps.append(step)
        chains[index].append(step)
        if target:
            chain_of[target] = index
    # a chain that only scales the budget (a headroom, a reserve) is no pool: never presented as one
    candidates = [chains[i] for i in sorted(pools)] if pools else chains
    complete = [chain for chain in candidates if chain and all(s.value is not None for s in chain)]
    prediction = complete[0][-1].value if complete else None
    observed_gb = number(facts.get("kv_gb"))
    tokens = number(facts.get("kv_tokens")) or number(facts.get("max_total_num_tokens"))
    per_token = observed_gb * (1 << 30) / tokens if observed_gb and tokens else None
    found = statuses(caps, facts, paths)
    inputs = {k: v for k, v in facts.items() if k in QUANTITIES or k == budget or k in env or k == AT_SIZING}
    inputs.update({name: env[name] for name in worked if name in env})
    result = Explanation(inputs, tuple(steps), prediction, observed_gb, tokens, per_token, found, missing)
    sized_at = tuple((s.path, s.line) for s in complete[0]) if complete else ()
    return dataclasses.replace(result, worked=worked, sized_at=sized_at)


#: A cap's operand is the pool's tokens when the pool is at most this far below it (rounded down to whole pages).
_PAGE_SLACK = 0.01


def bound_by(
    found: Sequence[tuple[Cap, str, str]],
    facts: Mapping[str, Any],
    tokens: float | None,
    resolve: Resolve | None = None,
) -> tuple[tuple[str, int, str], ...]:
    """(path, line, why) of the applying ``min`` caps with an operand other than the capped value that the run's
    facts give (or the release's code works out from them: a local, ``user_limit = ...max_total_tokens``) and that
    the pool's *tokens* are (to the page): ``min(self.max_total_num_tokens, max_total_tokens)`` with
    ``--max-total-tokens 20480`` and a pool of 20480 tokens."""
    if not tokens:
        return ()
    bound = []
    for cap, status, _ in found:
        if status != "applies" or cap.category != "min":
            continue
        try:
            tree = ast.parse(cap.code.strip())
        except SyntaxError:
            continue
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "min"]
        for arg in (arg for call in calls for arg in call.args if cap.target not in _names(arg)):
            try:
                value = evaluate(arg, functools.partial(fact, facts=facts))
            except Missing:
                worked = resolve(ast.unparse(arg), cap.path, cap.line) if resolve is not None else None
                value = getattr(worked, "value", None) if hasattr(worked, "why") else None
            except (TypeError, ArithmeticError):
                continue
            if isinstance(value, (int, float)) and 0 <= value - tokens <= max(1.0, value * _PAGE_SLACK):
                said = f"{ast.unparse(arg)} = {written(value)}, the pool's {written(tokens)} tokens"
                bound.append((cap.path, cap.line, said))
                break
    return tuple(bound)


def _conditions(
    site: BudgetSite, guards: Callable[[str, int], list[str]] | None, facts: Mapping[str, Any], resolve: Resolve | None
) -> tuple[str, tuple[str, ...]]:
    """(why the statement does not run, "" if it may; the conditions it is under that stay undecided)."""
    if guards is None:
        return "", ()
    undecided = []
    for text in guards(site.path, site.line):
        value, _ = truth(text, facts, {})
        why = ""
        if value is None and resolve is not None:
            found = resolve(text, site.path, site.line)
            if hasattr(found, "why"):
                value, why = bool(found.value), _decided_by(found.why)
        if value is False:
            return f"{text} is false" + (f": {why}" if why else ""), ()
        if value is None:
            undecided.append(text)
    return "", tuple(undecided)


def _resolving(
    env: dict[str, Any],
    facts: Mapping[str, Any],
    resolve: Resolve | None,
    site: BudgetSite,
    worked: dict[str, str],
    undecided: dict[str, tuple[str, ...]],
) -> Callable[[str], Any]:
    """The formula's lookup at *site*: earlier statements, the facts, and then the code worked out for the run."""

    def lookup(name: str) -> Any:
        try:
            return _lookup(name, env, facts)
        except Missing:
            if resolve is None or name in env:
                raise
        value = resolve(name, site.path, site.line)
        found = getattr(value, "value", None) if hasattr(value, "why") else None
        if isinstance(found, Observation):
            quantity = _measured(found.quantity, facts)
            if quantity not in facts:
                raise Missing(name)
            env[name] = facts[quantity]
            worked[name] = f"{found.call}: {QUANTITIES.get(quantity, _AT_SIZING_WORDS)}"
            return env[name]
        if isinstance(found, (int, float)) and not isinstance(found, bool) and hasattr(value, "why"):
            env[name] = found
            worked[name] = "; ".join(value.why) or "the release's code"
            return found
        if hasattr(value, "needs"):
            undecided[name] = tuple(value.needs)
        raise Missing(name)

    return lookup


def _deciding(needs: Sequence[str], shown: int = 4) -> str:
    """What the release's code needs to work an input out, for the missing-input hint."""
    if not needs:
        return ""
    keys = [n.removeprefix(CONFIG_KEY) for n in needs if n.startswith(CONFIG_KEY)]
    named = [n for n in needs if len(n) <= 80 and not n.startswith(CONFIG_KEY)]
    parts = named[:shown] + ([f"and {len(named) - shown} more"] if len(named) > shown else [])
    if keys:
        parts.append(f"the model's {', '.join(keys)} (--model-config config.json)")
    return f"; the release works it out from {', '.join(parts)}" if parts else ""


def _measured(quantity: str, facts: Mapping[str, Any]) -> str:
    """The fact that gives *quantity*: the free memory when the pool is sized, where the run's facts say it."""
    if quantity == "avail_after_weights_gb" and AT_SIZING in facts:
        return AT_SIZING
    return quantity


def _statement(code: str) -> tuple[str, ast.expr | None]:
    """(target, value) of ``target = value`` / ``target op= value`` / a bare expression."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return "", None
    if not tree.body:
        return "", None
    statement = tree.body[0]
    if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        name = statement.target.id
        return name, ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
    if isinstance(statement, ast.Expr):
        return "", statement.value
    return "", None


def _subtracts(node: ast.AST, derived: set[str]) -> bool:
    """Whether *node* subtracts the budget, or a value made from it, from a quantity (``avail - slack``,
    ``avail - total * (1 - f)``), as a pool's size does; ``total * (1 - f)`` only scales it."""
    for child in ast.walk(node):
        if isinstance(child, ast.BinOp) and isinstance(child.op, ast.Sub):
            if not isinstance(child.left, ast.Constant) and _names(child.right) & derived:
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found


def fact(name: str, facts: Mapping[str, Any]) -> Any:
    """A name's value among the run's *facts* (by its name, else by the quantity its name says it holds);
    Missing if none gives it."""
    return _lookup(name, {}, facts)


def _lookup(name: str, env: Mapping[str, Any], facts: Mapping[str, Any]) -> Any:
    if name in env:
        return env[name]
    if name in facts:
        return facts[name]
    for pattern, quantity in ROLES:
        if pattern.search(name) and _measured(quantity, facts) in facts:
            return facts[_measured(quantity, facts)]
    raise Missing(name)


def evaluate(node: ast.AST, lookup: Callable[[str], Any]) -> Any:
    """Arithmetic, comparisons and a few pure builtins; anything else is a Missing of its source."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str, type(None))):
        return node.value
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        try:
            return lookup(node.attr)
        except Missing:
            try:
                return lookup(ast.unparse(node))
            except Missing:
                pass
            raise
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](evaluate(node.left, lookup), evaluate(node.right, lookup))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        operand = evaluate(node.operand, lookup)
        return -operand if isinstance(node.op, ast.USub) else (not operand if isinstance(node.op, ast.Not) else operand)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](evaluate(node.left, lookup), evaluate(node.comparators[0], lookup))
    if isinstance(node, ast.IfExp):
        return evaluate(node.body if evaluate(node.test, lookup) else node.orelse, lookup)
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, lookup)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(evaluate(a, lookup) for a in node.args))
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
        return lookup(ast.unparse(node).removeprefix("self."))  # a fact of the run (see logs.run_facts)
    raise Missing(ast.unparse(node))


def _bool_op(node: ast.BoolOp, lookup: Callable[[str], Any]) -> Any:
    """``and``/``or`` in three values: an operand that decides it does, even when another one is missing."""
    deciding = not isinstance(node.op, ast.And)
    pending: Missing | None = None
    value: Any = not deciding
    for operand in node.values:
        try:
            value = evaluate(operand, lookup)
        except Missing as exc:
            pending = pending or exc
            continue
        if bool(value) is deciding:
            return value
    if pending is not None:
        raise pending
    return value


def statuses(
    caps: list[Cap],
    facts: Mapping[str, Any],
    paths: Paths | None,
    resolve: Resolve | None = None,
    through: Iterable[Key] = (),
) -> tuple[tuple[Cap, str, str], ...]:
    """Each cap with its status for this run (see :func:`_status`); a condition the facts do not decide is
    evaluated by *resolve* (the release's code, for the run) where it is. *through* are functions the run is
    known to have gone through (those that hold the statements of the formula that predicted its pool)."""
    holds = holds_for(facts, paths, resolve)
    # the log shows the pool got its value where the base write is, when one function holds it
    bases = {(cap.path, cap.function) for cap in caps if cap.category == "base" and cap.function}
    base: frozenset[Key] = frozenset(bases if len(bases) == 1 else ()) | frozenset(through)
    reach = Reach(paths, holds, base) if paths is not None else None
    return tuple((cap, *_status(cap, facts, holds, _way(cap, reach, base))) for cap in caps)


def unreached(
    facts: Mapping[str, Any], paths: Paths, resolve: Resolve | None, function_of: Callable[[str, int], Key | None]
) -> Callable[[str, int], str]:
    """Why the run does not reach a place ("" when it may): the calls into its function (*function_of*: the
    function holding a place) are all decided false with *facts*, or *resolve* where those do not decide."""
    reach = Reach(paths, holds_for(facts, paths, resolve), frozenset())

    def why(path: str, line: int) -> str:
        key = function_of(path, line)
        if key is None:
            return ""
        verdict = reach.function(key)
        return f"not reached: {_false(verdict)}" if verdict.value is False else ""

    return why


def holds_for(facts: Mapping[str, Any], paths: Paths | None, resolve: Resolve | None) -> Holds:
    """Whether a condition holds for the run: by *facts*, else by *resolve* (the release's code, for the run)."""
    constants = paths.constants if paths is not None else {}

    def holds(text: str, path: str = "", line: int = 0) -> tuple[bool | None, str]:
        value, needed = truth(text, facts, constants)
        if value is not None or resolve is None or not path:
            return value, needed
        found = resolve(text.strip(), path, line)
        if hasattr(found, "why"):
            return bool(found.value), _decided_by(found.why)
        # what the operator can give: the model's config when it decides it, else the name the condition reads
        return None, next((n for n in getattr(found, "needs", ()) if n.startswith(CONFIG_KEY)), needed)

    return holds


def _way(cap: Cap, reach: Reach | None, base: frozenset[Key]) -> Verdict:
    """Whether the run went through the cap's function."""
    key = (cap.path, cap.function or "")
    if reach is not None:
        return reach.function(key)
    return Verdict(True) if key in base else Verdict(None, notes=(f"when {cap.function} is called is not evaluated",))


def _status(cap: Cap, facts: Mapping[str, Any], holds: Holds, way: Verdict) -> tuple[str, str]:
    """(applies | did not bind | not reached | unknown, why) for one cap, from its guard, knobs and the way in.

    ``applies`` only when every condition on the way is known to hold: the write's own guard, and the calls
    that reach its function (*way*).
    """
    if way.value is False:
        return "not reached", _false(way)
    for knob in cap.knobs:
        name = knob.rsplit(".", 1)[-1]
        if name in facts and facts[name] is None and cap.category in ("min", "override"):
            return "did not bind", f"{name} unset"
    verdict = both([*(condition(text, "", holds, (cap.path, cap.line)) for text in cap.conditions), way])
    if verdict.value is False:
        return "not reached", _false(verdict)
    if verdict.value is None:
        return "unknown", _unknown(verdict)
    return "applies", " and ".join(cap.conditions) or "no condition on this write"


def truth(text: str, facts: Mapping[str, Any], constants: Mapping[str, Any]) -> tuple[bool | None, str]:
    """A condition evaluated with *facts*: (True/False, "") or (None, the input it needs, or the condition)."""
    try:
        node = _Constants(constants).visit(ast.parse(text.strip(), mode="eval").body)
        return bool(evaluate(node, lambda n: _lookup(n, {}, facts))), ""
    except Missing as exc:
        return None, exc.name
    except (SyntaxError, TypeError, ValueError, ArithmeticError):
        return None, text


class _Constants(ast.NodeTransformer):
    """``DisaggregationMode.DECODE`` -> its literal, as the graph stage read it from the tree."""

    def __init__(self, constants: Mapping[str, Any]) -> None:
        self.constants = constants

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        text = ast.unparse(node)
        if text in self.constants:
            return ast.Constant(self.constants[text])
        return self.generic_visit(node)


def _decided_by(why: Sequence[str], shown: int = 3) -> str:
    """What the release's code decided a condition with: its first facts and places."""
    return "decided by " + "; ".join(why[:shown]) if why else "decided by the release's code"


def _false(verdict: Verdict) -> str:
    found = [
        (text if " is false: " in text else f"{text} is false") + (f" (the call in {where})" if where else "")
        for text, where in verdict.false
    ]
    return found[0] if len(found) == 1 else "false on every way in: " + "; ".join(found)


def _unknown(verdict: Verdict, shown: int = 3) -> str:
    """The inputs that would decide it, each once with the first condition that needs it (*shown* of them)."""
    first: dict[str, str] = {}
    for name, text, where in verdict.needs:
        at = f" (the call in {where})" if where else ""
        first.setdefault(name, _needs(Missing(name)) + (f" for {text}" if name != text else "") + at)
    parts = [p.removeprefix("needs ") if i else p for i, p in enumerate(list(first.values())[:shown])]
    if len(first) > shown:
        parts.append(f"and {len(first) - shown} more")
    return "; ".join(parts + list(verdict.notes[:shown]))


def _needs(exc: Missing) -> str:
    if exc.name.startswith(CONFIG_KEY):
        return f"needs the model's {exc.name.removeprefix(CONFIG_KEY)} (--model-config config.json)"
    name = exc.name.rsplit(".", 1)[-1]
    return f"needs {exc.name} (--set {name}=VALUE)" if name.isidentifier() else f"needs {exc.name}"


def multiplied(sites: list[BudgetSite], budget: str) -> tuple[BudgetSite, str] | None:
    """The first statement where the budget's complement multiplies a quantity: (statement, that quantity)."""
    for site in sorted(sites, key=lambda s: (s.path, s.line)):
        _, value = _statement(site.code)
        if value is None or budget not in _names(value):
            continue
        for node in ast.walk(value):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                for this, other in ((node.left, node.right), (node.right, node.left)):
                    if budget in _names(other) and budget not in _names(this):
                        return site, ast.unparse(this)
    return None


def quantity_of(name: str) -> str | None:
    """The log quantity a formula variable holds, by its name (ROLES)."""
    return next((quantity for pattern, quantity in ROLES if pattern.search(name)), None)


def value_of(source: str, facts: Mapping[str, Any]) -> float | None:
    """*source* (an expression of the formula) evaluated with *facts*, None if something is missing."""
    try:
        return float(evaluate(ast.parse(source, mode="eval").body, lambda n: _lookup(n, {}, facts)))
    except (Missing, SyntaxError, TypeError, ValueError, ZeroDivisionError):
        return None


def solve(
    sites: list[BudgetSite],
    budget: str,
    facts: Mapping[str, Any],
    want_gb: float,
    name: str | None = None,
    bounds: tuple[float, float] = (0.0, 1.0),
    reading: Reading = Reading(),
) -> float | None:
    """The value of *name* (default: *budget*) for which the formula gives *want_gb*, by bisection over
    *bounds*; None if none does (the formula grows or falls with it: either way is searched). *reading*: as
    the explanation read the release's code."""
    solved = name or budget

    def predict(value: float) -> float | None:
        facts_at = {**facts, solved: value}
        return explain(sites, [], budget, facts_at, resolve=reading.resolve, guards=reading.guards).kv_budget_gb

    low, high = bounds
    at_low, at_high = predict(low), predict(high)
    if at_low is None or at_high is None or not min(at_low, at_high) <= want_gb <= max(at_low, at_high):
        return None
    rising = at_high >= at_low
    for _ in range(60):
        middle = (low + high) / 2
        at_middle = predict(middle)
        if at_middle is None:
            return None
        if (at_middle < want_gb) == rising:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def imply(
    sites: list[BudgetSite], budget: str, facts: Mapping[str, Any], result: Explanation, reading: Reading = Reading()
) -> dict[str, float]:
    """The input the formula misses, solved so that it gives the pool the log shows (no cap bound it).

    Only the budget (in (0, 1]) and the memory the log's lines measure are solved for, and only when it is
    all the formula misses (with another input missing, no value of it gives a prediction); {} otherwise.
    """
    if result.kv_budget_gb is not None or result.observed_kv_gb is None:
        return {}
    if budget in result.missing:
        value = solve(sites, budget, facts, result.observed_kv_gb, reading=reading)
        return {budget: round(value, 3)} if value is not None and value > 0 else {}
    measured = [name for name in result.missing if quantity_of(name) is not None]
    if len(measured) == 1:
        value = solve(sites, budget, facts, result.observed_kv_gb, measured[0], (0.0, 65536.0), reading)
        return {measured[0]: round(value, 2)} if value is not None else {}
    return {}


def where_set(graph: Any, steps: Sequence[Step]) -> dict[str, str]:
    """For each input a step misses that its own function assigns: ``path:line: code`` of the last
    assignment before the step (what the operator reads to choose a ``--set`` value)."""
    locals_at: dict[tuple[str, str], list[tuple[int, str]]] = {}
    function_at: dict[tuple[str, int], str] = {}
    for point, data in graph.nodes(data=True):
        if point.kind != "local" or not data.get("function"):
            continue
        function_at[(point.path, point.line)] = data["function"]
        locals_at.setdefault((point.path, point.label), []).append((point.line, str(data.get("code", ""))))
    found: dict[str, str] = {}
    for step in steps:
        function = function_at.get((step.path, step.line))
        for name in step.missing:
            before = [
                (line, code) for line, code in locals_at.get((step.path, f"{function}.{name}"), ()) if line < step.line
            ]
            if function is None or not before or name in found:
                continue
            line, code = max(before)
            found[name] = f"{step.path}:{line}: {_shortened(code)}"
    return found


def _shortened(code: str, most: int = 100) -> str:
    flat = " ".join(code.split())
    return flat if len(flat) <= most else flat[: most - 3].rstrip() + "..."


def _how(name: str, budget: str = "") -> str:
    if name == budget:
        return f"--set {name}=VALUE, or a log with its {quote('server_args')} line or its {quote('kv')} line"
    for pattern, quantity in ROLES:
        if pattern.search(name):
            return f"--set {name}=VALUE, or a log with {QUANTITIES[quantity]}"
    return f"--set {name}=VALUE"
