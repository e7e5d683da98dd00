"""Facts from the server's own configuration: its launch command and its ``/get_server_info`` JSON.

A launch command (``python -m sglang.launch_server --tp 8 --mem-fraction-static
0.88``, as ``ps``, a unit file's ``ExecStart=`` or a script shows it) is read
with the release's own options (ReleaseArgs.options: its ``add_argument``
calls; a field's name with dashes otherwise; a unique prefix as argparse
allows). ``/get_server_info`` answers with the server's arguments, its
scheduler's figures and its version. Nothing is run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.release_args import ReleaseArgs
from sgtrace.bounded import load_json
from sgtrace.model import SourceFile
from sgtrace.run.lines import parse_value
from sgtrace.run.messages import command

_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


class LaunchError(Exception):
    """A launch command or server info that cannot be read."""


@dataclass(frozen=True)
class Configuration:
    """What the server's configuration says, and what could not be used."""

    #: Field -> value.
    values: dict[str, Any] = field(default_factory=dict)
    #: Options or keys that name nothing of this release.
    unknown: tuple[str, ...] = ()
    #: The version it names, "" if none.
    version: str = ""
    #: Field -> the option that set it, as the command spells it (``--mem-fraction-static``; the field's name if none).
    spelled: dict[str, str] = field(default_factory=dict)


def read_command(text: str, args: ReleaseArgs) -> Configuration:
    """The arguments of the launch command in *text* (a unit file, a script, ``ps`` output, or the command)."""
    joined = re.sub(r"\\\r?\n", " ", text)  # a unit file's or a script's continued lines
    found = next((shown for line in joined.splitlines() if (shown := command(line)) is not None), None)
    tail = found if found is not None else joined.strip()
    try:
        tokens = split_words(tail)
    except ValueError as exc:
        raise LaunchError(f"cannot split the launch command: {exc}") from exc
    return _arguments(tokens, args)


#: A piece of a shell word (POSIX): unquoted characters, a single- or double-quoted string, an escaped character; or
#: the blanks between words. The alternatives of a double-quoted string's characters begin differently: no backtracking.
_PIECE = re.compile(r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[ \t\r\n]+""", re.DOTALL)
#: An escape in a double-quoted string: only a backslash or a quote is escaped, as shlex reads it.
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def split_words(text: str) -> list[str]:
    """The words of a command, as ``shlex.split(text)`` gives them (POSIX, no comments), in time linear in the text:
    shlex adds each character to its word by copying the word, so one word of a megabyte (of NUL bytes, say) took
    8 s. A quote left open or an escape at the end is a ValueError, as shlex's."""
    words: list[str] = []
    word: list[str] = []
    quoted = False  # an empty quoted string is a word
    position = 0
    while position < len(text):
        found = _PIECE.match(text, position)
        if found is None:
            raise ValueError("No escaped character" if text[position] == "\\" else "No closing quotation")
        piece, position = found.group(), found.end()
        first = piece[0]
        if first in " \t\r\n":
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        elif first == "'":
            word.append(piece[1:-1])
            quoted = True
        elif first == '"':
            word.append(_ESCAPED.sub(lambda m: m.group(1) if m.group(1) in '\\"' else m.group(), piece[1:-1]))
            quoted = True
        else:
            word.append(piece[1] if first == "\\" else piece)
    if word or quoted:
        words.append("".join(word))
    return words


def _arguments(tokens: list[str], args: ReleaseArgs) -> Configuration:
    values: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    unknown: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("--"):
            continue
        option, has_value, value = token.partition("=")
        name = _field(option, args)
        if name is None:
            unknown.append(option)
            continue
        spelled[name] = option
        if not has_value:
            if option in args.flags or index >= len(tokens) or tokens[index].startswith("--"):
                values[name] = args.flags.get(_full(option, args) or option, True)
                continue
            value, index = tokens[index], index + 1
        values[name] = parse_value(value)
    return Configuration(values, tuple(unknown), spelled=spelled)


def _field(option: str, args: ReleaseArgs) -> str | None:
    """The field *option* sets: the release's own option, a field's name with dashes, or a unique prefix."""
    full = _full(option, args)
    if full is not None:
        return args.options[full]
    derived = option[2:].replace("-", "_")
    return derived if derived in args.fields else None


def _full(option: str, args: ReleaseArgs) -> str | None:
    if option in args.options:
        return option
    matches = [name for name in args.options if name.startswith(option)]
    return matches[0] if len(matches) == 1 else None


def read_server_info(data: bytes | str, args: ReleaseArgs) -> Configuration:
    """The scalar server arguments, scheduler figures and version of a ``/get_server_info`` answer."""
    try:
        answer = load_json(data)
    except ValueError as exc:
        raise LaunchError(f"--server-info: {exc}") from exc
    if not isinstance(answer, dict):
        raise LaunchError("--server-info is not a JSON object (the answer of GET /get_server_info)")
    values: dict[str, Any] = {}
    for key, value in answer.items():
        scalar = value is None or isinstance(value, (bool, int, float, str))
        known = key in args.fields or key == "max_total_num_tokens"
        if scalar and known:  # a figure out of its range is refused as --set's are (inputs.gather)
            values[key] = _as_float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    version = answer.get("version")
    return Configuration(values, (), version if isinstance(version, str) else "")


def _as_float(value: int) -> float:
    """An integer of JSON as a float, as a log's or a command's figure is read: one past a float's range (400
    digits) is infinite, as ``float("9" * 400)`` is, and refused as every door's infinity is (figures.check)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def release_version(files: list[SourceFile]) -> str:
    """The ``__version__`` of the tree's top package (its shallowest ``version.py``), "" if it has none."""
    candidates = sorted((f for f in files if f.path.endswith("version.py")), key=lambda f: (f.path.count("/"), f.path))
    for source in candidates[:3]:
        try:
            with open(source.abspath, encoding="utf-8", errors="replace") as handle:
                found = _VERSION.search(handle.read(65536))
        except OSError:
            continue
        if found:
            return found.group(1)
    return ""


def same_version(one: str, other: str) -> bool:
    """Whether two spellings name one version (``v0.5.9`` and ``0.5.9``)."""
    return one.lstrip("vV") == other.lstrip("vV")


def layered(layers: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    """The layers merged, later ones winning, and for each name the layer its value came from."""
    merged: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, layer in layers.items():
        for key, value in layer.items():
            merged[key] = value
            source[key] = name
    return merged, source
