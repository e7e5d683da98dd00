"""Environment reads: the release's registry (``envs.NAME.get()``), ``os.getenv``, ``os.environ``."""

from __future__ import annotations

import ast
import re
from typing import Any

from sgtrace.analyses.evaluate.memo import Memo, _Scope
from sgtrace.analyses.evaluate.syntax import _statements, _targets, _text, chain_of
from sgtrace.analyses.evaluate.values import Known, Unknown, Value


class Environment(Memo):
    """Reads environment variables."""

    def _env_var(self, name: str) -> Value | None:
        """``envs.NAME.get()``: --env's value, else the default its registry declares (None: no registry entry)."""
        if not name.isupper():
            return None
        declared = self.registry(name)
        if declared is None:
            return None
        kind, default, where = declared
        if name in self.facts.env:
            text = self.facts.env[name]
            return Known(_env_value(kind, text, default), (f"{name}={text} (--env)",))
        if isinstance(default, Unknown):
            return default
        return Known(default, (f"{name} unset: the release's default ({where})",))

    def _getenv(self, node: ast.Call, scope: _Scope) -> Value:
        """``os.getenv(NAME, default)``, ``os.environ.get(NAME, default)``: --env's text, else the default (None
        without one: the variable unset). A function of the tree that wraps them (``get_int_env_var``) is
        followed to this call, as any other."""
        if not node.args:
            return Unknown((_text(node),))
        given = (
            node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
        )
        default = self.expr(given, scope) if given is not None else Known(None)
        return self._environ(self.expr(node.args[0], scope), default, node)

    def _environ(self, name: Value, default: Value | None, node: ast.expr) -> Value:
        """The environment variable *name* as a read of ``os.environ`` gives it: --env's text, else *default*
        (None: reading it unset raises, which no start-up that got this far did, so it is not known)."""
        if not isinstance(name, Known) or not isinstance(name.value, str):
            return Unknown((_text(node),))
        if name.value in self.facts.env:
            text = self.facts.env[name.value]
            return Known(text, (*name.why, f"{name.value}={text} (--env)"))
        if default is None:
            return Unknown((f"--env {name.value}",))
        if isinstance(default, Unknown):
            return default
        return Known(default.value, (*default.why, f"{name.value} unset (no --env)"))

    def reads_env(self, name: str) -> bool:
        """Whether a file of the tree reads the environment variable *name* by its name, in any idiom the slicer
        knows (``os.getenv("NAME")``, ``os.environ.get``/``[...]``, a helper such as ``get_int_env_var("NAME")``)."""
        spelt = re.compile(
            rb"(?:env|environ)\w*(?:\.get)?\s*[(\[]\s*[rRuU]?[\"']" + re.escape(name.encode()) + rb"[\"']"
        )
        return any(spelt.search(self.code.text(path)) for path in self.code.naming(name) or ())

    def registry(self, name: str) -> tuple[str, Any, str] | None:
        """(its kind, its default, ``path:line``) of an environment variable the release's registry declares
        (``NAME = EnvInt(100)`` in a class body), None if none does."""
        declared = re.compile(rb"^[ \t]+" + re.escape(name.encode()) + rb"\s*(?::[^=\n]*)?=\s*\w", re.M)
        for path in (p for p in self.code.naming(name) or () if declared.search(self.code.text(p))):
            tree = self.code.tree(path)
            for cls in _statements(tree.body, ast.ClassDef) if tree else ():
                for item in cls.body:
                    if (
                        isinstance(item, (ast.Assign, ast.AnnAssign))
                        and any(isinstance(t, ast.Name) and t.id == name for t in _targets(item))
                        and isinstance(item.value, ast.Call)
                    ):
                        kind = chain_of(item.value.func)[-1:] or [""]
                        args = item.value.args
                        default: Value = Known(None)
                        if args:
                            default = self.node_at(args[0], path, item.lineno)
                        elif any(k.arg == "default" for k in item.value.keywords):
                            keyword = next(k for k in item.value.keywords if k.arg == "default")
                            default = self.node_at(keyword.value, path, item.lineno)
                        elif kind[0].lower().endswith("bool"):
                            default = Known(False)
                        value = default.value if isinstance(default, Known) else default
                        return kind[0], value, f"{path}:{item.lineno}"
        return None


def _env_value(kind: str, text: str, default: Any) -> Any:
    lowered = kind.lower()
    if "bool" in lowered or isinstance(default, bool):
        return text.strip().lower() in ("1", "true", "yes", "y", "on")
    if "int" in lowered or isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            return text
    if "float" in lowered or isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            return text
    return text
