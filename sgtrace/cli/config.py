"""Configuration from a ``[tool.sgtrace]`` table in pyproject.toml, as click's ``default_map``.

The table used is the first one found from a directory upwards (as ruff finds its own). Its keys
are the long options of the commands, found by looking at the click commands themselves; a
sub-table named after a command holds keys for that command alone and overrides the top level.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sgtrace.bounded import MAX_CONFIG_BYTES, read_at_most

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ConfigError", "find_config", "load_default_map"]

#: Long options that steer one run rather than configure the tool.
_NOT_CONFIGURABLE = frozenset({"help", "version", "debug"})

#: The TOML value each kind of click type takes: (type, Python types, "a ...", "...s").
#: Types not listed are left to their own ``convert``.
_TOML_VALUES: tuple[tuple[type[click.ParamType[Any]], tuple[type, ...], str, str], ...] = (
    (click.types.BoolParamType, (bool,), "a boolean", "booleans"),
    (click.types.IntParamType, (int,), "an integer", "integers"),
    (click.types.FloatParamType, (int, float), "a number", "numbers"),
    (click.types.StringParamType, (str,), "a string", "strings"),
    (click.Choice, (str,), "a string", "strings"),
    (click.Path, (str,), "a string", "strings"),
    (click.File, (str,), "a string", "strings"),
)

#: A long option: the default_map key (the parameter's name), the option, and whether the
#: key is its secondary (``--no-x``) spelling.
_LongOption = tuple[str, click.Option, bool]

#: Keys of one table that are option names: normalised key -> (key as written, value).
_Keys = dict[str, tuple[str, Any]]


class ConfigError(Exception):
    """A [tool.sgtrace] table that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class _Table:
    """One table of the configuration, with where it is, for messages."""

    #: The pyproject.toml it is in.
    path: Path
    #: Its dotted name, e.g. ``tool.sgtrace.caps``.
    name: str
    #: Its keys and values, as tomllib read them.
    data: Mapping[str, Any]

    def child(self, name: str, data: Mapping[str, Any]) -> _Table:
        """The sub-table *name* of this table."""
        return _Table(self.path, f"{self.name}.{name}", data)

    def error(self, message: str) -> ConfigError:
        """A ConfigError for *message*, naming the file and this table."""
        return ConfigError(f"{self.path}:[{self.name}]: {message}")


def find_config(start: Path) -> Path | None:
    """The first pyproject.toml with a [tool.sgtrace] table, from *start* upwards, or None."""
    found = _find(start)
    return found[0] if found else None


def load_default_map(group: click.Group, start: Path) -> tuple[Path | None, dict[str, dict[str, Any]]]:
    """(the pyproject.toml used or None, click's default_map for *group*) from [tool.sgtrace]."""
    found = _find(start)
    if found is None:
        return None, {}
    table = _Table(found[0], "tool.sgtrace", found[1])
    # The group's own options are not configured: the map's top level holds only commands.
    ctx = click.Context(group)
    keys, subtables = _split(group, table, own=False)
    return found[0], _command_maps(ctx, table, subtables, [(table, keys)])


def _find(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """(path, table) of the first pyproject.toml with a [tool.sgtrace] table, upwards from *start*."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            table = _read_table(candidate)
            if table is not None:
                return candidate, table
    return None


def _read_table(path: Path) -> dict[str, Any] | None:
    """The [tool.sgtrace] table of *path*, or None if it has none."""
    try:
        with path.open("rb") as stream:  # within a bound: a sparse file of gigabytes is nobody's configuration
            text = read_at_most(stream, MAX_CONFIG_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    if "sgtrace" not in text:
        return None  # cannot hold the table: not parsed, so a broken unrelated file is passed over
    try:
        document = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer of more digits than Python converts (4,300)
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except RecursionError as exc:  # arrays or inline tables nested past the stack
        raise ConfigError(f"{path}: invalid TOML: nested too deep") from exc
    tool = document.get("tool")
    table = tool.get("sgtrace") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.sgtrace must be a table, got {table!r}")
    return table


def _command_maps(
    ctx: click.Context, table: _Table, subtables: Mapping[str, Any], scopes: list[tuple[_Table, _Keys]]
) -> dict[str, dict[str, Any]]:
    """The default_map entries of the commands of the group of *ctx*, those with a value."""
    maps: dict[str, dict[str, Any]] = {}
    for name, command in sorted(_commands(ctx.command).items()):
        child = click.Context(command, info_name=name, parent=ctx)
        found = _command_map(child, table.child(name, subtables.get(name, {})), scopes)
        if found:
            maps[name] = found
    return maps


def _command_map(ctx: click.Context, table: _Table, outer: list[tuple[_Table, _Keys]]) -> dict[str, Any]:
    """The default_map of the command of *ctx*: *outer* scopes, then its own *table*."""
    keys, subtables = _split(ctx.command, table, own=True)
    scopes = [*outer, (table, keys)]
    values = _option_values(ctx, scopes)
    values.update(_command_maps(ctx, table, subtables, scopes))
    return values


def _split(command: click.Command, table: _Table, own: bool) -> tuple[_Keys, dict[str, Any]]:
    """(option keys, sub-tables by command name) of *table*; an unknown key is a ConfigError."""
    options = _names_below(command, own)
    commands = {_normal(name): name for name in _commands(command)}
    keys: _Keys = {}
    subtables: dict[str, Any] = {}
    for written, value in table.data.items():
        key = _normal(written)
        if key in commands and isinstance(value, dict):
            subtables[commands[key]] = value
        elif key in keys:
            raise table.error(f"{keys[key][0]!r} and {written!r} are the same key")
        elif key in options:
            keys[key] = (written, value)
        elif key in commands:
            raise table.error(f"{written!r} is a command: give its options as a table [{table.name}.{written}]")
        else:
            raise table.error(_unknown(written, [*options, *commands]))
    return keys, subtables


def _unknown(written: str, candidates: list[str]) -> str:
    """``unknown key 'x'``, with the closest known key if one is close."""
    close = difflib.get_close_matches(_normal(written), sorted(candidates), n=1)
    return f"unknown key {written!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def _option_values(ctx: click.Context, scopes: list[tuple[_Table, _Keys]]) -> dict[str, Any]:
    """{parameter name: value} for the options of the command of *ctx*; inner scopes win."""
    options = _long_options(ctx.command)
    values: dict[str, Any] = {}
    for table, keys in scopes:
        seen: dict[str, str] = {}
        for key, (written, value) in keys.items():
            if key not in options:
                continue  # an option of other commands
            name, option, negated = options[key]
            setting = _setting(ctx, table, option, negated, written, value)
            if setting is _SKIP:
                continue
            if name in seen:
                raise table.error(f"{seen[name]!r} and {written!r} set the same option")
            seen[name] = written
            values[name] = setting
    return values


#: What a false non-boolean flag (``json = false`` for ``--json``) sets: nothing.
_SKIP = object()


def _setting(ctx: click.Context, table: _Table, option: click.Option, negated: bool, written: str, value: Any) -> Any:
    """The default_map value that *value* in the table gives *option*, checked."""
    if option.is_flag:
        if not isinstance(value, bool):
            raise table.error(f"{written} must be a boolean, got {value!r}")
        if not option.is_bool_flag:
            return option.flag_value if value else _SKIP
        return value != negated
    _check_shape(table, option, written, value)
    if isinstance(option.type, (click.Path, click.File)):
        value = _resolved(value, table.path.parent)
    _convert(ctx, table, option, written, value)
    return value


def _check_shape(table: _Table, option: click.Option, written: str, value: Any) -> None:
    """Raise unless *value* is the TOML value (or array of them) that *option* takes."""
    depth = int(option.multiple) + int(option.nargs != 1)
    leaves = _leaves(value, depth)
    kind = next((entry for entry in _TOML_VALUES if isinstance(option.type, entry[0])), None)
    if kind is None:
        wanted, fits = "an array", leaves is not None
    else:
        wanted = kind[2] if depth == 0 else "an array of " + "arrays of " * (depth - 1) + kind[3]
        fits = leaves is not None and all(_is(leaf, kind[1]) for leaf in leaves)
    if not fits:
        raise table.error(f"{written} must be {wanted}, got {value!r}")


def _is(value: Any, types: tuple[type, ...]) -> bool:
    """isinstance, except that a boolean is not a number."""
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _leaves(value: Any, depth: int) -> list[Any] | None:
    """The values inside *depth* nested arrays, or None if *value* is not nested so."""
    if depth == 0:
        return [value]
    if not isinstance(value, list):
        return None
    leaves: list[Any] = []
    for item in value:
        found = _leaves(item, depth - 1)
        if found is None:
            return None
        leaves.extend(found)
    return leaves


def _resolved(value: Any, base: Path) -> Any:
    """*value* with each path in it taken relative to *base* (``-``, standard input or output, kept)."""
    if isinstance(value, list):
        return [_resolved(item, base) for item in value]
    if isinstance(value, str) and value != "-":
        return str(base / Path(value).expanduser())
    return value


def _convert(ctx: click.Context, table: _Table, option: click.Option, written: str, value: Any) -> None:
    """Raise unless *option*'s own type, and its callback, accept *value*."""
    with ctx:  # leaving it closes any file a click.File opened to check
        try:
            converted = option.type_cast_value(ctx, value)
            if option.callback is not None:
                option.callback(ctx, option, converted)
        except click.ClickException as exc:
            raise table.error(f"{written} = {value!r}{_for(ctx)}: {exc.message}") from exc
        except ValueError as exc:  # a path holding NUL, which TOML spells and a command line cannot: os.stat refuses it
            raise table.error(f"{written} = {value!r}{_for(ctx)}: {exc}") from exc


def _for(ctx: click.Context) -> str:
    return f" for '{ctx.command_path}'" if ctx.command_path else ""


def _long_options(command: click.Command) -> dict[str, _LongOption]:
    """The configurable options of *command*, by long name without dashes."""
    found: dict[str, _LongOption] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name is None or not _configurable(param):
            continue
        for negated, opts in ((False, param.opts), (True, param.secondary_opts)):
            for opt in opts:
                if opt.startswith("--"):
                    found[_normal(opt[2:])] = (param.name, param, negated)
    return found


def _configurable(option: click.Option) -> bool:
    """False for --help, --version, --debug and other eager options."""
    names = {opt.lstrip("-") for opt in [*option.opts, *option.secondary_opts]}
    return not option.is_eager and not names & _NOT_CONFIGURABLE


def _names_below(command: click.Command, own: bool) -> set[str]:
    """The long names of the options of *command*'s subcommands, and of its own if *own*."""
    names = set(_long_options(command)) if own else set()
    for sub in _commands(command).values():
        names |= _names_below(sub, own=True)
    return names


def _commands(command: click.Command) -> Mapping[str, click.Command]:
    """The subcommands of *command*, by name (none unless it is a group)."""
    return command.commands if isinstance(command, click.Group) else {}


def _normal(key: str) -> str:
    """*key* in kebab-case: ``fail_on`` and ``fail-on`` are one key."""
    return key.replace("_", "-")
