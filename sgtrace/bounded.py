"""Reading what somebody else wrote within bounds: a file by its size, JSON by its nesting.

A baseline, a launch command or a server's answer named on the command line
may be anything: ``/dev/zero``, a sparse file of gigabytes, JSON nested past
Python's stack. Each is read at most one byte past its bound, and JSON is
refused past :data:`MAX_JSON_DEPTH` levels, before anything walks it, or when a string in it is no text
(a lone surrogate, which JSON's escapes can spell).
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

#: The most read of a launch command's file (a unit file, a script, ``ps`` output: a few KB).
MAX_COMMAND_BYTES = 1 << 20
#: The most read of a JSON file named on the command line (a baseline, a server's answer: a few hundred KB).
MAX_JSON_BYTES = 16 << 20
#: The most read of a pyproject.toml that may hold sgtrace's configuration (a project's: a few KB).
MAX_CONFIG_BYTES = 1 << 20
#: The deepest nesting of JSON read from a file the command line names (sgtrace writes 3 levels, SGLang 5).
MAX_JSON_DEPTH = 64


def read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """The bytes of *stream*; ValueError past *limit* (at most *limit* + 1 are read, so ``/dev/zero`` ends too)."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {_size(limit)}")
    return data


def load_json(data: bytes | str, depth: int = MAX_JSON_DEPTH) -> Any:
    """*data* decoded; ValueError if it is no JSON or nests deeper than *depth* levels (walked without recursion)."""
    try:
        value = json.loads(data)
    except RecursionError as exc:  # nested past the stack: deeper than any bound
        raise ValueError(f"JSON nested deeper than {depth} levels") from exc
    except ValueError as exc:  # JSONDecodeError, or bytes that are no UTF-8
        raise ValueError(f"not JSON ({exc})") from exc
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            _text(item)
        if not isinstance(item, (list, dict)):
            continue
        if level > depth:
            raise ValueError(f"JSON nested deeper than {depth} levels")
        if isinstance(item, dict):
            for key in item:
                _text(key)
        stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return value


def _text(string: str) -> None:
    """ValueError for a string no UTF-8 can hold: JSON's escapes spell a lone surrogate (``"\\ud800"``), which
    json reads and no answer could print."""
    try:
        string.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"not JSON sgtrace can read (a string holds a lone surrogate, {exc.object[exc.start]!r})"
        ) from exc


def _size(limit: int) -> str:
    return f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit} bytes"
