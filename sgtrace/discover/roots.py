"""Import roots: the folders Python would put on ``sys.path`` for the packages of a tree.

A file's module is named as Python, mypy and pyright name it: walk up while
the folder is a package (it holds ``__init__.py``, or lies inside one as a
namespace portion); the folder reached is its import root. Packaging settings
found in the tree (``pyproject.toml``, ``setup.cfg``, ``setup.py``: read as
data, never run) and the usual ``src/`` and ``python/`` folders add roots for
namespace packages and for single-file modules; a script outside any package
is named by its path from the analysis root.
"""

from __future__ import annotations

import ast
import configparser
import sys
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

#: Files whose packaging settings may name import roots.
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
#: Folders that hold a project's packages by convention.
CONVENTIONAL = ("src", "python")


def configured_roots(name: str, text: str) -> list[str]:
    """Folders (relative to the config file's folder, POSIX) that its packaging settings name as import roots."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        if name == "pyproject.toml":
            return _pyproject_roots(tomllib.loads(text))
        if name == "setup.cfg":
            return _setup_cfg_roots(text)
        if name == "setup.py":
            return _setup_py_roots(ast.parse(text))
    except (ValueError, SyntaxError, configparser.Error, RecursionError):
        return []  # a broken config names nothing; the layout still does
    return []


def _get(table: Any, *keys: str) -> Any:
    for name in keys:
        table = table.get(name) if isinstance(table, dict) else None
    return table


def _pyproject_roots(data: dict[str, Any]) -> list[str]:
    found: list[str] = []
    found += _strings(_get(data, "tool", "setuptools", "packages", "find", "where"))
    package_dir = _get(data, "tool", "setuptools", "package-dir")
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        found.append(package_dir[""])
    for path in _strings(_get(data, "tool", "hatch", "build", "targets", "wheel", "packages")):
        found.append(str(PurePosixPath(path).parent))
    for entry in _get(data, "tool", "poetry", "packages") or []:
        if isinstance(entry, dict) and isinstance(entry.get("from"), str):
            found.append(entry["from"])
    for path in _strings(_get(data, "tool", "scikit-build", "wheel", "packages")):
        found.append(str(PurePosixPath(path).parent))
    found += _strings(_get(data, "tool", "pdm", "build", "package-dir"))
    found += _strings(_get(data, "tool", "maturin", "python-source"))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _setup_cfg_roots(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    found = []
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        name, sep, path = line.partition("=")
        if sep and not name.strip() and path.strip():
            found.append(path.strip())
    found += [w for w in parser.get("options.packages.find", "where", fallback="").split() if w]
    return found


def _setup_py_roots(tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if callee in ("find_packages", "find_namespace_packages"):
            where = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "where"), None)
            found += _literal_strings(where)
        for keyword in node.keywords if callee == "setup" else ():
            if keyword.arg == "package_dir":
                value = _literal(keyword.value)
                if isinstance(value, dict) and isinstance(value.get(""), str):
                    found.append(value[""])
    return found


def _literal(node: ast.expr | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


def _literal_strings(node: ast.expr | None) -> list[str]:
    value = _literal(node)
    return [value] if isinstance(value, str) else []


def normalise(folder: tuple[str, ...], relative: str) -> tuple[str, ...] | None:
    """A configured root as path parts below the analysis root; None if it leaves the tree."""
    parts: list[str] = list(folder)
    for part in PurePosixPath(relative.replace("\\", "/")).parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", "/"):
            parts.append(part)
    return tuple(parts)


def identifiers(parts: Iterable[str]) -> bool:
    """Whether every part can be a package name."""
    return all(part.isidentifier() for part in parts)
