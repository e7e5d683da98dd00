"""The data-flow graph: backward from the writes of an attribute to their sources.

A worklist of points. Expanding a point reads what feeds it -- the value of an
assignment, the callers of a parameter, the return statements of a callee,
the writes of an attribute in the classes a receiver may be -- adds those as
nodes with an edge, and queues them in turn. Knobs, environment variables,
constants, calls outside the tree and reads of unknown receivers end a path.

The slice follows the traced value's own chain, not everything upstream of
it. A point is expanded in one of two modes. *Main*: the value itself, carried
by locals, parameters, returns, calls and the attribute's own family
(``max_total_num_tokens``, ``swa_max_total_num_tokens``, its config fields):
everything that feeds it is followed. *Side*: another quantity met as an
operand or copied into the chain (a ``min()``'s other argument, a ratio, the
budget knob's attribute): only its provenance is followed, through copies
(assignment, parameter, field, return, property) to its knob, environment
variable or constant, never into the operations that compute it. So another
quantity's own history (allocator counters, request caps, graph batch sizes)
is not in the slice, and the slice ends by itself.

A comprehension's loop names are points of their own, fed by its iterable
(``element``). A call whose receiver's type stays unknown is linked, marked
``approximate``, to the methods of that name (:meth:`Slicer.guesses`), and a
call that names a method by a string to those methods (:meth:`Slicer.named`);
neither in strict mode. An early ``return`` guarded by a read of the attribute,
before a write of it, keeps the value it had: a ``keep`` node feeding that write.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from functools import partial

import networkx as nx

from sgtrace.engine import SGLANG, Engine
from sgtrace.graph.calls import CallIndex
from sgtrace.graph.fields import field_values
from sgtrace.graph.points import Edge, Point, Scope, call_site, scope_of
from sgtrace.graph.types import MAX_NAMED, Types
from sgtrace.index.exprs import FOR_PREFIX
from sgtrace.index.project import Module, Project, contains, is_test_module, post_order, write_pattern
from sgtrace.records import Assignment, Body, Expr, Field, Function, Param

#: An attribute of a class fed by more writes and fields than this feeds its reads through one node (a
#: hub: kind ``field``, at the class's line, its attribute ``hub`` the number of its sources), so n
#: writes and m reads make n + m edges, not n x m.
HUB_SOURCES = 16
#: Chains of calls a function is read in, each apart, before it is read once for all callers (SGLang
#: enters none in more than six: 0.5.9 and 0.5.23).
MAX_CONTEXTS = 16
#: Writes through receivers other than ``self`` are searched for only when the attribute is
#: written in at most this many modules.
MAX_FOREIGN_WRITE_MODULES = 25
#: Calls that pass their arguments' value through.
_PASS_THROUGH = frozenset({"int", "float", "round", "abs", "math.floor", "math.ceil", "math.trunc", "max", "min"})
#: Edge operations that pass a value on unchanged (provenance is followed through these in side mode).
COPIES = frozenset({"copy", "param", "field", "property", "read", "default", "return", "subscript", "element"})
#: Kinds of point that carry the traced value in main mode, whatever their name.
_CARRIERS = frozenset({"local", "param", "return", "call", "const", "global", "env", "knob"})
MAIN, SIDE = "main", "side"
_STRING = re.compile(r"""^[rRuU]?(['"])(.*)\1$""")


class Slicer:
    """Builds the graph; call :meth:`run` after seeding."""

    def __init__(
        self,
        project: Project,
        knob_receivers: tuple[str, ...] | None = None,
        limit: int = 4000,
        attribute: str = "",
        strict: bool = False,
        engine: Engine = SGLANG,
    ):
        self.project = project
        #: The engine's words for its knobs, accessors and environment variables.
        self.engine = engine
        #: Whether a call on a receiver of unknown type is left unresolved (no guess by method name).
        self.strict = strict
        self.types = Types(project)
        self.knob_receivers = knob_receivers or engine.arguments
        self.limit = limit
        #: The traced attribute: points whose name ends with it carry the value (main mode).
        self.attribute = attribute
        self.graph: nx.DiGraph = nx.DiGraph()
        self._todo: deque[tuple[Callable[[], None], str]] = deque()
        #: (point, context) -> the mode it was queued in (main wins over side).
        self._scheduled: dict[tuple[Point, str], str] = {}
        #: The mode of the expansion running now.
        self._mode = MAIN
        #: (call site, parameter point) while a call's argument feeds that parameter (see :meth:`entering`).
        self._entering: tuple[str, Point] | None = None
        self.truncated = False
        #: The calls that may run each function, and what they pass (see :mod:`~sgtrace.graph.calls`).
        self.calls = CallIndex(project, self.types)
        self._foreign: dict[str, list[tuple[Scope, Assignment]]] = {}
        self._foreign_classes: dict[str, dict[str, list[tuple[Scope, Assignment]]]] = {}
        #: Function -> the chains of calls it was entered in (see :meth:`_enter`).
        self._contexts: dict[str, set[str]] = {}
        #: Memos of :meth:`_slot` (by class and name) and of :meth:`slots` (by owners and name).
        self._slots: dict[tuple[str, str], tuple[Callable[[Point], None], ...]] = {}
        self._slot_sources: dict[tuple[frozenset[str], str], tuple[Callable[[Point], None], ...]] = {}
        self._holders_memo: dict[tuple[str, str], frozenset[str]] = {}
        #: Whether the callees being linked were guessed by method name (see :meth:`guesses`).
        self._guessing = False
        #: Names a comprehension being fed binds, and the element point each stands for.
        self._bound: dict[str, Point] = {}

    # -- graph bookkeeping ---------------------------------------------------

    def node(self, point: Point, **attributes: object) -> Point:
        """Add *point* with its standard attributes (path, line, kind, label) and any others."""
        if point not in self.graph:
            self.graph.add_node(point, path=point.path, line=point.line, kind=point.kind, label=point.label)
        if attributes:
            self.graph.nodes[point].update({k: v for k, v in attributes.items() if v is not None})
        return point

    def edge(
        self,
        source: Point,
        target: Point,
        edge: Edge,
        expand: Callable[[], None] | None = None,
        context: str = "",
        exit_site: str = "",
    ) -> None:
        """Link *source* -> *target*, and queue the expansion of *source* once per calling context.

        *exit_site* marks an edge from a callee's return to what the call at that site assigns.
        """
        self.node(source)
        self.node(target)
        if not self.graph.has_edge(source, target):
            self.graph.add_edge(source, target, op=edge.op, approximate=edge.approximate)
            if self._mode == SIDE:
                self.graph.edges[source, target][SIDE] = True
        elif self._mode == MAIN:
            self.graph.edges[source, target].pop(SIDE, None)
        if self._entering is not None and self._entering[1] == target:
            _tag(self.graph.edges[source, target], ENTER, self._entering[0])
        if exit_site:
            _tag(self.graph.edges[source, target], EXIT, exit_site)
        if expand is not None:
            mode = self._mode_of(source, edge.op)
            if mode is not None and self._guessing:
                mode = SIDE  # a guessed callee unrelated by name to the value: its provenance only
            if mode is not None:
                self._queue(source, expand, context, mode)

    def entering(self, site: str, parameter: Point, feed: Callable[[], None]) -> None:
        """Run *feed* (a call's argument feeding *parameter*), marking its edges as entered at *site*."""
        outer, self._entering = self._entering, (site, parameter)
        try:
            feed()
        finally:
            self._entering = outer

    def _mode_of(self, source: Point, op: str) -> str | None:
        """How *source*, feeding the point being expanded through *op*, is expanded (None: not at all)."""
        copy = op in COPIES or op.startswith("unpack")
        if self._mode == SIDE:
            return SIDE if copy else None
        return MAIN if self.carries(source) else SIDE

    def carries(self, point: Point) -> bool:
        """Whether *point* may hold the traced value itself (see the module's docstring)."""
        if point.kind in _CARRIERS:
            return True
        name = point.label.rsplit(".", 1)[-1]
        return bool(self.attribute) and name.endswith(self.attribute)

    def schedule(self, point: Point, expand: Callable[[], None], context: str = "") -> None:
        """Queue the expansion of *point* (once per context, in main mode) without adding an edge."""
        self.node(point)
        self._queue(point, expand, context, MAIN)

    def _queue(self, point: Point, expand: Callable[[], None], context: str, mode: str) -> None:
        queued = self._scheduled.get((point, context))
        if queued == MAIN or queued == mode:
            return
        self._scheduled[(point, context)] = mode
        self._todo.append((expand, mode))

    def run(self) -> nx.DiGraph:
        """Expand queued points until none is left (or the node limit is reached)."""
        while self._todo:
            if len(self.graph) >= self.limit:
                self.truncated = True
                break
            expand, self._mode = self._todo.popleft()
            expand()
        self._mode = MAIN
        return self.graph

    def finish(self) -> None:
        """Drop what slicing kept to go on (the memos of callbacks bound to this slicer): the slicer then is in
        no cycle of references, and it and all it reached are freed as soon as it is dropped, with no
        collection of cycles (a history's lane reads one release after another in one process)."""
        self._todo.clear()
        self._slots.clear()
        self._slot_sources.clear()

    # -- seeds ---------------------------------------------------------------

    def seed_assignment(self, scope: Scope, assignment: Assignment) -> Point:
        """A write or local from an assignment, queued for expansion."""
        point = self.assignment_point(scope, assignment)
        self.schedule(point, self._expander(scope, assignment, point), scope.context)
        return point

    def assignment_point(self, scope: Scope, assignment: Assignment) -> Point:
        """The node an assignment's target is."""
        target = assignment.target
        if target.kind == "name":
            point = Point("local", f"{scope.function.qualname}.{target.name}", scope.path, target.line)
        else:
            point = Point("write", self._attribute_label(scope, target.base, target.name), scope.path, target.line)
        return self.node(
            point,
            code=assignment.code,
            function=scope.function.qualname,
            owner=scope.cls,
            guard=list(assignment.guard),
            exits=list(assignment.exits) or None,
        )

    def _attribute_label(self, scope: Scope, base: Expr | None, name: str) -> str:
        if base is not None and base.kind == "name" and base.name == scope.self_name and scope.cls:
            return f"{scope.cls.rsplit('.', 1)[-1]}.{name}"
        return f"{base.text if base else '?'}.{name}"

    def expand_assignment(self, scope: Scope, assignment: Assignment, point: Point) -> None:
        """Feed an assignment's target from its value (and, for the attribute, the early returns that skip it)."""
        self.feed(assignment.value, scope, assignment.line, point, assignment.op, assignment.target.path)
        target = assignment.target
        if target.kind == "attr" and self.attribute and target.name == self.attribute:
            self._kept(scope, assignment, point)

    def _kept(self, scope: Scope, assignment: Assignment, point: Point) -> None:
        """``if cfg.x != 0: return`` before a write of ``cfg.x``: the return keeps the value it has (a "keep")."""
        name = assignment.target.name
        for leave in self.project.body(scope.module, scope.function).leaves:
            condition = next((g for g in reversed(leave.guard) if _reads(g, name)), None)
            if leave.line >= assignment.line or condition is None:
                continue
            keep = self.node(
                Point("write", f"{scope.function.qualname}.{name}", scope.path, leave.line),
                code="return",
                function=scope.function.qualname,
                owner=scope.cls,
                guard=list(leave.guard),
                knobs=_reads_of(condition, name),
            )
            self.edge(keep, point, Edge("keep"))

    # -- what feeds an expression ------------------------------------------------

    def feed(self, value: Expr, scope: Scope, line: int, target: Point, op: str, path: tuple[int, ...] = ()) -> None:
        """Add edges into *target* from everything *value* reads."""
        if path:
            self._feed_element(value, scope, line, target, path)
            return
        handler = _HANDLERS.get(value.kind)
        if handler is not None:
            handler(self, value, scope, line, target, op)
        else:
            for operand in (*value.args, *(v for _, v in value.keywords)):
                self.feed(operand, scope, line, target, op)

    def _feed_element(self, value: Expr, scope: Scope, line: int, target: Point, path: tuple[int, ...]) -> None:
        index, rest = path[0], path[1:]
        op = f"unpack[{index}]"
        if value.kind == "tuple" and index < len(value.args) and value.args[index].kind != "starred":
            self.feed(value.args[index], scope, line, target, op if not rest else "copy", rest)
            return
        if value.kind == "call":
            callees = self.types.callees(value, scope, line)
            guessed = not callees and bool(callees := self.guesses(value, scope))
            self._guessing = guessed and not self.names_the_value(value)
            try:
                for module, function in callees:
                    self._returns_into(module, function, target, op, path, (scope, value, line), guessed)
            finally:
                self._guessing = False
            if callees:
                return
        self.feed(value, scope, line, target, op)
        for _, _, data in self.graph.in_edges(target, data=True):
            data["approximate"] = True

    def _returns_into(
        self,
        module: Module,
        function: Function,
        target: Point,
        op: str,
        path: tuple[int, ...],
        caller: tuple[Scope, Expr, int] | None = None,
        approximate: bool = False,
    ) -> None:
        inner = scope_of(module, function)
        site = ""
        if caller is not None:
            inner = self._enter(inner, caller)
            site = call_site(caller[0], caller[1], caller[2])
        suffix = "".join(f"[{i}]" for i in path)
        for ret in self.project.body(module, function).returns:
            point = Point("return", f"{function.qualname}(){suffix}", module.source.path, ret.line)
            self.node(point, function=function.qualname, owner=inner.cls, guard=list(ret.guard), code=ret.value.text)
            self.edge(
                point,
                target,
                Edge(op, approximate=approximate),
                partial(self.feed, ret.value, inner, ret.line, point, "copy", path),
                inner.context,
                site,
            )

    def _enter(self, scope: Scope, caller: tuple[Scope, Expr, int]) -> Scope:
        """*scope* entered from one call, while the function has been entered in fewer than MAX_CONTEXTS
        chains of calls; past that, the function is read once for all its callers (its parameters fed by
        every call). Sixty calls a level, three levels deep, would otherwise be 216,000 readings of the last."""
        entered = scope.entered(*caller)
        seen = self._contexts.setdefault(scope.name, set())
        if entered.context not in seen and len(seen) >= MAX_CONTEXTS:
            return scope
        seen.add(entered.context)
        return entered

    def feed_const(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        self.edge(Point("const", value.text, scope.path, line), target, Edge(op))

    def feed_other(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        """Any other expression feeds through its operands; a comprehension binds its loop names first."""
        bindings = [(k.removeprefix(FOR_PREFIX), v) for k, v in value.keywords if k.startswith(FOR_PREFIX)]
        if not bindings:
            for operand in (*value.args, *(v for _, v in value.keywords)):
                self.feed(operand, scope, line, target, op)
            return
        outer = dict(self._bound)
        iterables = [iterable for _, iterable in bindings]
        try:
            for names, iterable in bindings:
                for name in names.split(","):
                    element = Point("local", f"{scope.function.qualname}.{name}", scope.path, line)
                    self.node(element, function=scope.function.qualname, owner=scope.cls)
                    self.feed(iterable, scope, line, element, "element")
                    self._bound[name] = element
            for operand in value.args:  # the element expression, and the loop names (their elements)
                if operand not in iterables:
                    self.feed(operand, scope, line, target, op)
        finally:
            self._bound = outer

    def feed_name(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        bound = self._bound.get(value.name)
        if bound is not None:
            if bound != target:
                self.edge(bound, target, Edge(op))
            return
        definitions = _reaching(self.project.assigned(scope.module, scope.function, value.name), line)
        for assignment in definitions:
            self.edge(
                self.assignment_point(scope, assignment),
                target,
                Edge(op),
                self._expander(scope, assignment, self.assignment_point(scope, assignment)),
                scope.context,
            )
        if definitions:
            return
        for index, param in enumerate(scope.function.params):
            if param.name == value.name:
                point = Point("param", f"{scope.function.qualname}({param.name})", scope.path, scope.function.line)
                self.node(point, function=scope.function.qualname, owner=scope.cls)
                self.edge(point, target, Edge(op), partial(self.callers, scope, param, index, point), scope.context)
                return
        iterable = _comprehension_binding(self.project.body(scope.module, scope.function), value.name, line)
        if iterable is not None:  # a comprehension's loop name, met again when a call in it is entered
            element = self.node(Point("local", f"{scope.function.qualname}.{value.name}", scope.path, line))
            self.edge(element, target, Edge(op))
            self.feed(iterable, scope, line, element, "element")
            return
        qualified = self.project.resolve(scope.module.source.module, value.name)
        self.edge(Point("global", qualified, "", 0), target, Edge(op))

    def feed_attr(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        assert value.base is not None
        receiver = self._knob_receiver(value.base)
        if receiver is not None and value.name != self.attribute:  # the pool's own size is traced, whoever holds it
            self.edge(Point("knob", f"{receiver}.{value.name}", "", 0), target, Edge(op))
            return
        if _is_accessor_call(value.base, self.engine.accessor_prefix) and not self._declares(
            value.base, scope, line, value.name
        ):
            self.edge(Point("knob", value.text, "", 0), target, Edge(op))
            return
        if self.engine.environment.match(value.name) and "env" in value.base.text.lower():
            self.edge(Point("env", value.name, "", 0), target, Edge(op))
            return
        owners = self.types.of(value.base, scope, line)
        if not owners:
            resolved = self.project.resolve(scope.module.source.module, value.base.text)
            if value.base.kind == "name" and resolved != value.base.text:  # a module or an imported name
                self.edge(Point("global", f"{resolved}.{value.name}", "", 0), target, Edge(op))
                return
            point = self.node(
                Point("unknown", value.text, scope.path, value.line or line), function=scope.function.qualname
            )
            self.edge(point, target, Edge(op, approximate=True))
            return
        point = self.node(
            Point("read", value.text, scope.path, value.line or line), function=scope.function.qualname, owner=scope.cls
        )
        self.edge(point, target, Edge(op), lambda: self.slots(owners, value.name, point), scope.context)

    def feed_call(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        assert value.base is not None
        name = value.base.text
        if name in ("min", "max"):
            # min over one collection (a per-rank list, a generator) reduces it; min(a, b) lowers a by b
            kind = "reduce" if name == "min" and len(value.args) == 1 and value.args[0].kind != "starred" else name
            clamped = name == "max" and _clamped_at_zero(value.args)
            for arg in value.args:
                # max(budget - reserved, 0) only keeps a negative budget from being used: its operand is the flow
                self.feed(arg, scope, line, target, op if clamped or op != "copy" else kind)
            return
        env = self._env_read(value)
        if env is not None:
            self.edge(Point("env", env, "", 0), target, Edge(op))
            return
        if name in _PASS_THROUGH:
            for arg in value.args:
                self.feed(arg, scope, line, target, op)
            return
        if self._knob_receiver(value.base) is not None:
            self.edge(Point("knob", f"{name}()", "", 0), target, Edge(op))
            return
        if self.types.class_refs(value.base, scope, line):
            self.edge(Point("call", f"{name}(...)", scope.path, value.line or line), target, Edge(op))
            return
        callees = self.types.callees(value, scope, line)
        guessed = not callees and bool(callees := self.guesses(value, scope))
        self._guessing = guessed and not self.names_the_value(value)
        try:
            for module, function in callees:
                self._returns_into(
                    module, function, target, "return" if op == "copy" else op, (), (scope, value, line), guessed
                )
        finally:
            self._guessing = False
        for module, function in self.named(value, scope):
            self._returns_into(module, function, target, "return" if op == "copy" else op, (), None, True)
        if callees:
            return
        point = self.node(
            Point("call", f"{name}(...)", scope.path, value.line or line), function=scope.function.qualname
        )
        self.edge(point, target, Edge(op), lambda: self._external_arguments(value, scope, line, point), scope.context)

    def guesses(self, call: Expr, scope: Scope) -> list[tuple[Module, Function]]:
        """For ``self.x.m(...)`` whose receiver's type is unknown: the tree's methods named ``m`` (approximate).

        Only the traced value's own chain is guessed (main mode), and only receivers read through an
        attribute chain of a local, parameter or ``self``; a name bound by an import, or a bare local
        (``tensor.item()``), is left alone. Off in strict mode.
        """
        callee = call.base
        if self.strict or self._mode == SIDE or callee is None or callee.kind != "attr" or callee.base is None:
            return []
        receiver = callee.base
        if receiver.kind != "attr":
            return []
        head = receiver.text.split(".", 1)[0]
        if not head.isidentifier() or self.project.resolve(scope.module.source.module, head) != head:
            return []
        if any(i.local == head for i in scope.module.outline.imports):
            return []
        return self.types.guess(call)

    def names_the_value(self, call: Expr) -> bool:
        """Whether a called method's name shares a word with the traced attribute (``profile_blocks``, ``kv_blocks``).

        A guessed callee is followed into what it computes only then; otherwise only its provenance is.
        """
        name = call.base.name if call.base is not None else ""
        return bool(_words(name) & _words(self.attribute))

    def named(self, call: Expr, scope: Scope) -> list[tuple[Module, Function]]:
        """Methods a call names by a string, run by name on workers (``run_workers("profile")``; approximate).

        The caller's own class family (its bases and everything below them) is left out: an executor
        names its workers' method, not its own.
        """
        if self.strict or self._mode == SIDE or not call.args:
            return []
        name = _literal(call.args[0])
        if not name or not name.isidentifier() or name.startswith("__"):
            return []
        own = self._family(scope.cls)
        return [(m, f) for m, f in self.types.definers(name, MAX_NAMED) if scope_of(m, f).cls not in own]

    def _family(self, cls: str | None) -> set[str]:
        """A class, its bases within the tree, and every class below any of them."""
        if cls is None:
            return set()
        found = set(self.project.mro(cls))
        for klass in list(found):
            found |= self.project.subclasses(klass)
        return found

    def _external_arguments(self, value: Expr, scope: Scope, line: int, point: Point) -> None:
        """Data may pass through a call outside the tree: its receiver and arguments feed it."""
        assert value.base is not None
        receiver = value.base.base if value.base.kind == "attr" else None
        if receiver is not None and receiver.kind == "name" and receiver.text not in self.project.files:
            # a local (tensor.item()), not an imported module or name
            if self.project.resolve(scope.module.source.module, receiver.text) == receiver.text:
                self.feed(receiver, scope, line, point, "call")
        for arg in value.args:  # keywords of outside calls are options (dtype=, device=), not data
            self.feed(arg, scope, line, point, "arg")

    def feed_subscript(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        assert value.base is not None
        if value.base.text.endswith("environ") and value.args:
            literal = _literal(value.args[0])
            if literal:
                self.edge(Point("env", literal, "", 0), target, Edge(op))
                return
        self.feed(value.base, scope, line, target, "subscript" if op == "copy" else op)

    def feed_op(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        for operand in value.args:
            self.feed(operand, scope, line, target, value.name if op == "copy" else op)

    def feed_tuple(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        for element in value.args:
            self.feed(element, scope, line, target, op)

    def feed_starred(self, value: Expr, scope: Scope, line: int, target: Point, op: str) -> None:
        if value.base is not None:
            self.feed(value.base, scope, line, target, op)

    # -- knobs and environment -----------------------------------------------------

    def _knob_receiver(self, value: Expr) -> str | None:
        """The holder of the server's arguments *value* is (``self.server_args``, ``get_server_args()``), by its
        word, or None."""
        text = value.text.removesuffix("()")
        last = text.rsplit(".", 1)[-1]
        prefix = self.engine.accessor_prefix
        return next(
            (
                k
                for k in self.knob_receivers
                if last == k or last.endswith(f"_{k}") or (last.startswith(prefix) and last.endswith(k))
            ),
            None,
        )

    def _env_read(self, call: Expr) -> str | None:
        """``os.getenv("X")``, ``os.environ.get("X")``, ``get_int_env_var("X")``, ``envs.X.get()``."""
        assert call.base is not None
        name = call.base.text
        if "env" in name.lower() and call.args:
            literal = _literal(call.args[0])
            if literal and self.engine.environment.match(literal):
                return literal
        if call.base.kind == "attr" and call.base.base is not None:
            receiver = call.base.base
            environment = self.engine.environment
            if receiver.kind == "attr" and environment.match(receiver.name) and "env" in receiver.text.lower():
                return receiver.name
        return None

    def _declares(self, receiver: Expr, scope: Scope, line: int, name: str) -> bool:
        """Whether the class(es) *receiver* is an instance of declare *name* (a field, or a write on self)."""
        for owner in self.types.of(receiver, scope, line):
            for klass in self.project.mro(owner):
                definition = self.project.class_def(klass)
                if definition is not None and any(f.name == name for f in definition[1].fields):
                    return True
                if any(contains(m, f, write_pattern(name)) for m, f in self.project.methods(klass)):
                    return True
        return False

    # -- attribute slots ---------------------------------------------------------

    def slots(self, owners: frozenset[str], name: str, target: Point) -> None:
        """Feed a read of ``obj.name`` (obj one of *owners*) from every class in their MROs."""
        memo = (owners, name)
        if memo not in self._slot_sources:
            holders = self._holders(owners, name)
            self._slot_sources[memo] = tuple(source for klass in holders for source in self._slot(klass, name))
        for source in self._slot_sources[memo]:
            source(target)

    def _holders(self, owners: frozenset[str], name: str) -> list[str]:
        """The classes of the owners' MROs that feed attribute *name* themselves: in the first owner's MRO
        order, then the rest by name.

        Each class's own holders are the union of its bases' and itself (worked out once per class and
        name): a read of ``self`` in a class with a thousand subclasses has a thousand owners, and their
        MROs a million places between them, but only the few classes that write the attribute matter.
        """
        ordered = sorted(owners)
        found: set[str] = set()
        for owner in ordered:
            found |= self._held_by(owner, name)
        if not ordered or not found:
            return []
        first = self.project.mro(ordered[0])
        return [k for k in first if k in found] + sorted(found.difference(first))

    def _held_by(self, cls: str, name: str) -> frozenset[str]:
        """The classes of *cls*'s MRO whose :meth:`_slot` of *name* is not empty (a walk, no recursion)."""
        memo = self._holders_memo
        if (cls, name) not in memo:
            for klass in post_order(cls, self.project.bases, lambda klass: (klass, name) in memo):
                found = {klass} if self._slot(klass, name) else set()
                for base in self.project.bases(klass):
                    found |= memo.get((base, name), frozenset())
                memo[(klass, name)] = frozenset(found)
        return memo[(cls, name)]

    def _slot(self, klass: str, name: str) -> tuple[Callable[[Point], None], ...]:
        """What feeds attribute *name* of *klass* itself (fields, a property, writes on ``self`` and
        elsewhere), each as a function linking it to a read; worked out once per class and name."""
        memo = (klass, name)
        if memo in self._slots:
            return self._slots[memo]
        definition = self.project.class_def(klass)
        sources: list[Callable[[Point], None]] = []
        if definition is not None:
            module, cls = definition
            for field in cls.fields:
                if field.name == name:
                    point = self.field_point(module, klass, field.name, field.line)
                    feed = partial(self.field_sources, module, klass, field)
                    sources.append(partial(self._link, point, Edge("field"), feed, ""))
            writes = write_pattern(name)
            for method_module, method in self.project.methods(klass):
                if method.qualname.rsplit(".", 1)[-1] == name and "property" in method.decorators:
                    sources.append(partial(self._property_into, method_module, method))
                    continue
                if not contains(method_module, method, writes):
                    continue
                scope = scope_of(method_module, method)
                for assignment in self.project.body(method_module, method).assignments:
                    written = assignment.target
                    if written.kind == "attr" and written.name == name and _is_self(written.base, scope):
                        point = self.assignment_point(scope, assignment)
                        expand = self._expander(scope, assignment, point)
                        sources.append(partial(self._link, point, Edge("copy"), expand, ""))
            for scope, assignment in self._foreign_by_class(name).get(klass, ()):
                point = self.assignment_point(scope, assignment)
                expand = self._expander(scope, assignment, point)
                sources.append(partial(self._link, point, Edge("copy"), expand, scope.context))
        if definition is not None and len(sources) > HUB_SOURCES:
            module, cls = definition
            label = f"{klass.rsplit('.', 1)[-1]}.{name}"
            hub = self.node(Point("field", label, module.source.path, cls.line), owner=klass, **{HUB: len(sources)})
            sources = [partial(self._through_hub, hub, tuple(sources), set())]
        self._slots[memo] = tuple(sources)
        return self._slots[memo]

    def _through_hub(
        self, hub: Point, sources: tuple[Callable[[Point], None], ...], modes: set[str], target: Point
    ) -> None:
        """Link a read to an attribute's hub, the hub first linked to every source (again once in main mode,
        if it was first linked while following another quantity's provenance)."""
        if MAIN not in modes and self._mode not in modes:
            modes.add(self._mode)
            for source in sources:
                source(hub)
        self.edge(hub, target, Edge("field"))

    def _link(self, source: Point, edge: Edge, expand: Callable[[], None], context: str, target: Point) -> None:
        self.edge(source, target, edge, expand, context)

    def _property_into(self, module: Module, method: Function, target: Point) -> None:
        self._returns_into(module, method, target, "property", ())

    def _foreign_by_class(self, name: str) -> dict[str, list[tuple[Scope, Assignment]]]:
        """The writes of ``x.name`` on receivers other than ``self``, by the classes ``x`` may be."""
        if name not in self._foreign_classes:
            found: dict[str, list[tuple[Scope, Assignment]]] = {}
            for scope, assignment in self._foreign_writes(name):
                base = assignment.target.base
                if base is not None:
                    for klass in sorted(self.types.of(base, scope, assignment.line)):
                        found.setdefault(klass, []).append((scope, assignment))
            self._foreign_classes[name] = found
        return self._foreign_classes[name]

    def _foreign_writes(self, name: str) -> list[tuple[Scope, Assignment]]:
        """Writes of ``x.name`` on receivers other than ``self``, anywhere in the tree (tests left out)."""
        if name not in self._foreign:
            found: list[tuple[Scope, Assignment]] = []
            pattern = write_pattern(name)
            modules = [m for m in self.project.matching(pattern) if not is_test_module(m)]
            if len(modules) > MAX_FOREIGN_WRITE_MODULES:
                modules = []  # a generic name (size, device...): such writes are everywhere and rarely ours
            self.project.prefetch(modules)
            for module_name in modules:
                module = self.project.module(module_name)
                if module is None:
                    continue
                for function, assignment in self.project.writes_matching(module, pattern):
                    scope = scope_of(module, function)
                    written = assignment.target
                    if written.kind == "attr" and written.name == name and not _is_self(written.base, scope):
                        found.append((scope, assignment))
            self._foreign[name] = found
        return self._foreign[name]

    def _expander(self, scope: Scope, assignment: Assignment, point: Point) -> Callable[[], None]:
        return lambda: self.expand_assignment(scope, assignment, point)

    def field_point(self, module: Module, klass: str, name: str, line: int) -> Point:
        """The node of a class-body field."""
        point = Point("field", f"{klass.rsplit('.', 1)[-1]}.{name}", module.source.path, line)
        return self.node(point, owner=klass)

    def field_sources(self, module: Module, klass: str, field: Field) -> None:
        """A field is fed by its default and by constructor / replace() arguments (see :mod:`~sgtrace.graph.fields`)."""
        target = self.field_point(module, klass, field.name, field.line)
        if field.value:
            value = " ".join(field.value.split())
            self.edge(Point("const", value, module.source.path, field.line), target, Edge("default"))
        for argument in field_values(self.project, self.types, klass, field):
            self.feed(argument.value, argument.caller, argument.line, target, "field")

    # -- parameters ----------------------------------------------------------------

    def callers(self, scope: Scope, param: Param, index: int, target: Point) -> None:
        """Feed a parameter from its default and from the arguments of every call that reaches it, each
        edge marked as entering at its call (see :meth:`entering`)."""
        if param.default:
            point = Point("const", " ".join(param.default.split()), scope.path, scope.function.line)
            self.edge(point, target, Edge("default"))
        for argument in self.calls.arguments(scope, param, index):
            feed = partial(self.feed, argument.value, argument.caller, argument.line, target, "param")
            self.entering(call_site(argument.caller, argument.call, argument.line), target, feed)


#: Edge attributes: the call sites at which an edge enters a callee (argument -> parameter) or leaves
#: it (return -> what the call assigns), so analyses can keep to paths where calls and returns match.
#: An edge made while following another quantity's provenance carries ``side: True``.
ENTER, EXIT = "enter", "exit"
#: Node attribute of a hub (see HUB_SOURCES): the number of writes and fields it stands between.
HUB = "hub"


def _tag(data: dict[str, object], key: str, site: str) -> None:
    sites = data.setdefault(key, [])
    assert isinstance(sites, list)
    if site not in sites:
        sites.append(site)


def _is_accessor_call(value: Expr, prefix: str) -> bool:
    """``get_schedule()``: a call, without arguments, of a module-level function named with the engine's accessor
    prefix (``get_*``).

    Such accessors hand out process-wide configuration; what they return is a
    knob, whatever object carries it.
    """
    if value.kind != "call" or value.args or value.keywords or value.base is None:
        return False
    return value.base.kind == "name" and value.base.name.startswith(prefix)


#: Words too common in names to tie a method to the traced attribute.
_GENERIC_WORDS = frozenset({"num", "max", "min", "total", "size", "count", "get", "set", "self"})


def _words(name: str) -> set[str]:
    return {w for w in name.lower().split("_") if len(w) > 2 and w not in _GENERIC_WORDS}


def _comprehension_binding(body: Body, name: str, line: int) -> Expr | None:
    """The iterable a comprehension in the statement at *line* binds *name* to, if one does."""
    roots = [a.value for a in body.assignments if a.line == line] + [r.value for r in body.returns if r.line == line]
    roots += [c.call for c in body.calls if c.line == line]
    while roots:
        current = roots.pop()
        for key, value in current.keywords:
            if key.startswith(FOR_PREFIX) and name in key.removeprefix(FOR_PREFIX).split(","):
                return value
        roots.extend(current.args)
        roots.extend(v for _, v in current.keywords)
        if current.base is not None:
            roots.append(current.base)
    return None


def _reads(condition: str, name: str) -> bool:
    """Whether a condition reads attribute *name* (``self.config.kv_blocks != 0``)."""
    return re.search(rf"[\w)\]]\.{re.escape(name)}\b(?!\s*\()", condition) is not None


def _reads_of(condition: str, name: str) -> list[str]:
    """The ``a.b.name`` a condition reads (the value an early return keeps)."""
    return sorted(set(re.findall(rf"\b(?:[A-Za-z_]\w*\.)+{re.escape(name)}\b", condition)))


def _is_self(base: Expr | None, scope: Scope) -> bool:
    return base is not None and base.kind == "name" and base.name == scope.self_name


def _clamped_at_zero(args: tuple[Expr, ...]) -> bool:
    """Whether ``max(*args)`` is one value clamped at a constant of zero or less (``max(a - b, 0)``)."""
    if len(args) != 2:
        return False
    constants = [arg for arg in args if arg.kind == "const"]
    try:
        return len(constants) == 1 and float(constants[0].text) <= 0
    except ValueError:
        return False


def _literal(value: Expr) -> str | None:
    if value.kind != "const":
        return None
    match = _STRING.match(value.text)
    return match.group(2) if match else None


def _reaching(assignments: tuple[Assignment, ...], line: int) -> list[Assignment]:
    """Assignments to a local (all of them, in order) that may reach *line*: from the last one dominating it, onwards.

    "Dominating" is approximated by guards: an earlier assignment whose guard is
    a prefix of a later one's is overwritten by it on that path.
    """
    earlier = [a for a in assignments if a.line < line]
    if not earlier:
        return []
    last_unconditional = 0
    for position, assignment in enumerate(earlier):
        if not assignment.guard:
            last_unconditional = position
    return earlier[last_unconditional:]


_HANDLERS: dict[str, Callable[[Slicer, Expr, Scope, int, Point, str], None]] = {
    "const": Slicer.feed_const,
    "name": Slicer.feed_name,
    "attr": Slicer.feed_attr,
    "call": Slicer.feed_call,
    "subscript": Slicer.feed_subscript,
    "op": Slicer.feed_op,
    "tuple": Slicer.feed_tuple,
    "starred": Slicer.feed_starred,
    "other": Slicer.feed_other,
}
