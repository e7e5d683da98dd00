"""The evaluator: the rooms tied together, and the questions asked of it."""

from __future__ import annotations

import ast

from sgtrace.analyses.evaluate.calls import Calls
from sgtrace.analyses.evaluate.environment import Environment
from sgtrace.analyses.evaluate.expressions import Expressions
from sgtrace.analyses.evaluate.memo import _Scope
from sgtrace.analyses.evaluate.names import Names
from sgtrace.analyses.evaluate.statements import Statements
from sgtrace.analyses.evaluate.syntax import _expression
from sgtrace.analyses.evaluate.values import Unknown, Value
from sgtrace.analyses.evaluate.writes import Writes

#: Files one question may parse besides those parsed before it (a question about a path the run does not take,
#: whose objects are built at run time, would otherwise use the explanation's whole allowance).
MAX_NEW_PARSED = 160


class Evaluator(Expressions, Names, Calls, Writes, Environment, Statements):
    """Evaluates expressions of the tree for one run (see the package's doc); remembers what it worked out."""

    # -- the questions -------------------------------------------------------------------------------
    def at(self, source: str, path: str, line: int) -> Value:
        """*source* (an expression) evaluated as it reads at *path*:*line*."""
        node = _expression(source)
        if isinstance(node, Unknown):
            return node
        before = self.code.limit
        self.code.limit = min(before, len(self.code._trees) + MAX_NEW_PARSED)
        self.code.questions += 1
        try:
            return self.node_at(node, path, line)
        finally:
            self.code.limit = before

    def node_at(self, node: ast.expr, path: str, line: int) -> Value:
        function, cls = self.code.enclosing(path, line)
        return self.expr(node, _Scope(path, function, cls, line))

    def name_at(self, name: str, path: str, line: int) -> Value:
        """What the local (or module name) *name* holds when *path*:*line* runs."""
        return self.node_at(ast.Name(id=name, ctx=ast.Load()), path, line)
