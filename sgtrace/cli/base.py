"""The click group and what every command shares: option sets, tree resolution, the error boundary."""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sgtrace import __version__
from sgtrace.bounded import MAX_COMMAND_BYTES, MAX_JSON_BYTES, read_at_most
from sgtrace.cli.constraints import constraints
from sgtrace.model import ExitCode, Limits

#: The deepest --max-depth allowed: each level is a few frames of Python's stack (see cli.main).
MAX_DEPTH = 1000


#: What str.splitlines breaks a line at, escaped as Python writes it (``--set 'a=1\n2'`` made two lines).
_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


#: Which tree a command reads when none is named (the checkout, the installed package, the sample), held until the
#: command says something else or ends: an exit 2 then says it at the end of its one line.
_HELD: list[str] = []


def _hold(message: str) -> None:
    """Say *message* on stderr before whatever the command says next, or at its end; at the end of an error's line
    if that comes first."""
    _HELD.append(message)


def _held() -> list[str]:
    """The messages held, taken: the caller says them."""
    taken = list(_HELD)
    _HELD.clear()
    return taken


def _warn(message: str) -> None:
    """*message* on stderr, one line (a line break in a value it quotes is escaped), after what was held."""
    for line in [*_held(), message]:
        click.echo(f"sgtrace: {line.translate(_LINE_BREAKS)}", err=True)


def _say_held() -> None:
    for line in _held():
        _warn(line)


def _failed(
    message: str,
    code: int,
    params: dict[str, Any] | None = None,
    argv: Sequence[str] = (),
    details: Mapping[str, Any] | None = None,
) -> None:
    """An error that ends the command before its answer: one line on stderr, and under ``--format json`` (graph's
    ``--json``) the same as JSON on stdout, ``{"error": {"exit_code": 2, "message": ...}}``, so that a program
    reading stdout learns why there is no answer. *params* are the command's (the current context's when
    None); *argv*, read when the options were not all parsed; *details*, what the input error says was found and is
    missing (docs/explain.md, "When there is no answer"). A line break in a value the message quotes is
    escaped: the message stays one line."""
    message = "; ".join([message, *(f"note: {line}" for line in _held())]).translate(_LINE_BREAKS)
    _warn(message)
    if params is None:
        context = click.get_current_context(silent=True)
        params = context.params if context is not None else {}
    if _json_wanted(params, argv):
        import json

        error = {"exit_code": int(code), "message": message.removeprefix("error: "), **(details or {})}
        click.echo(json.dumps({"error": error}))


def _json_wanted(params: dict[str, Any], argv: Sequence[str]) -> bool:
    """Whether the command was asked for JSON on stdout: by its parsed options, else by the arguments as typed (an
    answer asked into a file, ``-o FILE``, keeps stdout empty)."""
    typed = list(argv)
    pairs = list(zip(typed, typed[1:], strict=False))
    output = params.get("output")
    if output not in (None, "-") or any(a in ("-o", "--output") and b != "-" for a, b in pairs):
        return False
    if params.get("fmt") == "json" or params.get("as_json") is True:
        return True
    return "--format=json" in typed or "--json" in typed or any(a == "--format" and b == "json" for a, b in pairs)


def _attribute(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.isidentifier():
        raise click.BadParameter(f"{value!r} is not a Python identifier")
    return value


@dataclass(frozen=True, slots=True)
class RunFlags:
    """The options every analysis shares: parallelism, cache, scope, bounds, debugging."""

    jobs: int | None
    cache_dir: Path | None
    no_cache: bool
    debug: bool
    exclude: tuple[str, ...]
    include: tuple[str, ...]
    no_ignore: bool
    follow_links: bool
    max_file_size: int
    max_unpacked_size: int
    max_depth: int
    #: Whether the writes in the tree's test folders seed the slice (``--with-tests``; the graph's commands only).
    with_tests: bool = False

    @property
    def limits(self) -> Limits:
        """The bounds these flags set."""
        return Limits(file_bytes=self.max_file_size, unpacked_bytes=self.max_unpacked_size, depth=self.max_depth)


class ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes: ``10MB``, ``512KiB``, ``2G``, or a plain number of bytes."""

    name = "SIZE"
    _UNITS = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):  # a configuration's integer: bounded as typed
            exact: float | int = value
        else:
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?\s*", str(value), re.IGNORECASE)
            if match is None:
                self.fail(f"{value!r} is not a size (examples: 10MB, 512KiB, 2G, 1048576)", param, ctx)
            number, unit, binary = match.groups()
            scale = 1024 ** "kmgt".index(unit.lower()) * 1024 if binary and unit else self._UNITS[unit.lower()]
            exact = float(number) * scale
        if not exact < 1 << 63:  # 400 digits are a float's infinity: no size a file system holds
            self.fail(f"{value!r} is not a size a file can have (at most 2**63 bytes)", param, ctx)
        size = int(exact)
        if size < 1:
            self.fail(f"{value!r} is not a positive size", param, ctx)
        return size


def _run_options(flags: RunFlags) -> Any:
    from sgtrace.api import RunOptions
    from sgtrace.cache import default_dir
    from sgtrace.model import PathFilter

    progress = _Progress() if sys.stderr.isatty() else None
    return RunOptions(
        jobs=flags.jobs,
        cache_dir=None if flags.no_cache else (flags.cache_dir or default_dir()),
        progress=progress,
        path_filter=PathFilter(tuple(flags.exclude), tuple(flags.include), not flags.no_ignore, flags.follow_links),
        notify=_warn,
        limits=flags.limits,
        with_tests=flags.with_tests,
    )


class _Progress:
    """``parsed N/M files`` on stderr, on a terminal, once a run has taken more than a second."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.shown = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.start < 1.0 or (now - self.shown < 0.2 and done < total):
            return
        self.shown = now
        end = "\n" if done == total else ""
        click.echo(f"\rsgtrace: parsed {done}/{total} files", err=True, nl=False)
        if end:
            click.echo("", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sgtrace")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Find where a Python tree writes an attribute, and how SGLang's KV pool gets its size.

    \b
    Examples:
      sgtrace find max_total_num_tokens /path/to/sglang
      sgtrace trace max_total_num_tokens sglang==0.5.9
      sgtrace caps sglang==0.5.9
      sgtrace explain sglang==0.5.9 --log server.log
      sgtrace diff sglang==0.5.9 sglang==0.5.23
      sgtrace history sglang==0.5.9..0.5.23 --log server.log

    \b
    Defaults for any long option can be set in a [tool.sgtrace] table of the
    pyproject.toml in the current folder or a parent (the command line wins):
      [tool.sgtrace]
      exclude = ["test/**", "benchmark/**"]
      [tool.sgtrace.check]
      fail-on = "added,budget"
    """
    from sgtrace.cli.config import ConfigError, load_default_map

    ctx.call_on_close(_say_held)
    try:
        _, defaults = load_default_map(cli, Path.cwd())
    except ConfigError as exc:
        _failed(f"error: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)
    if defaults:
        ctx.default_map = {**defaults, **(ctx.default_map or {})}


def _one_tree(target: str | None, flags: RunFlags) -> tuple[Any, Any]:
    """(the tree to analyse, run options): PATH|SPEC resolved, or the embedded default."""
    from sgtrace import api

    options = _run_options(flags)
    return api.resolve_targets([target] if target else [], options.cache_dir, _hold, None, options.limits)[0], options


def _trace_inputs(attribute: str, target: str | None, max_nodes: int, strict_types: bool, flags: RunFlags) -> Any:
    """Resolve the tree and run the api's trace."""
    from sgtrace import api

    tree, options = _one_tree(target, flags)
    return api.trace(_query(attribute, max_nodes, strict_types), tree, options)


def _query(attribute: str, max_nodes: int, strict_types: bool) -> Any:
    """The graph question the options ask."""
    from sgtrace import api

    return api.TraceQuery(attribute, max_nodes=max_nodes, strict_types=strict_types)


def _budget_options(function: Any) -> Any:
    """--attr and --budget, shared by caps and explain."""
    function = click.option("--budget", default="mem_fraction_static", show_default=True, callback=_attribute)(function)
    return click.option("--attr", "attribute", default="max_total_num_tokens", show_default=True, callback=_attribute)(
        function
    )


def _guarded(debug: bool, run: Any) -> Any:
    """Run *run*; an input error becomes one line and exit code 2, an attribute never written one line and
    exit code 1, an unexpected exception one line and exit code 3."""
    from sgtrace import api

    try:
        return run()
    except api.InputError as exc:
        _failed(f"error: {_untyped(exc) or exc}", ExitCode.ERROR, details=exc.details)
        sys.exit(ExitCode.ERROR)
    except api.NotWritten as exc:  # an answer, not an error: as trace and find say it
        _echo_errors(exc.errors)
        _warn(str(exc))
        sys.exit(ExitCode.NOT_FOUND)
    except Exception as exc:  # the api boundary: one clear line unless --debug
        if debug:
            raise
        _failed(
            f"internal error: {type(exc).__name__}: {exc} (rerun the command with --debug for the traceback)",
            ExitCode.INTERNAL,
        )
        sys.exit(ExitCode.INTERNAL)


def _untyped(exc: Any) -> str:
    """For a name the trees do not hold that came from an option's default (not typed, not configured):
    say so, and how to name another ("" otherwise)."""
    context = click.get_current_context(silent=True)
    parameter = exc.option.lstrip("-").replace("-", "_") if exc.option else ""
    if context is None or not parameter or parameter not in context.params:
        return ""
    if context.get_parameter_source(parameter) is not click.core.ParameterSource.DEFAULT:
        return ""
    what = "budget knob" if parameter == "budget" else "attribute"
    return (
        f"{exc.where} never names {exc.name}, the default {what} ({exc.option} {exc.name}): name the one this tree "
        f"uses with {exc.option} NAME (sgtrace find NAME {exc.where} shows where a name is written)"
    )


#: --cache-dir, as every command that touches the cache spells it.
CACHE_DIR_OPTION = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),  # one that cannot be used costs a warning and a cold run, not the answer
    envvar="SGTRACE_CACHE_DIR",
    help="Cache directory [env SGTRACE_CACHE_DIR; default ~/.cache/sgtrace].",
)


_FLAG_NAMES = tuple(RunFlags.__dataclass_fields__)


def _run_flags(function: Callable[..., Any]) -> Any:
    """--exclude/--include/--no-ignore, --jobs, --cache-dir, --no-cache and --debug, handed over as ``flags``."""

    @functools.wraps(function)
    def with_flags(**kwargs: Any) -> Any:
        flags = RunFlags(**{name: kwargs.pop(name) for name in _FLAG_NAMES if name in kwargs})
        return function(flags=flags, **kwargs)

    options = [
        click.option("--exclude", multiple=True, metavar="GLOB",
                     help="Leave out paths matching this gitignore-style pattern, relative to the root (repeatable)."),
        click.option("--include", multiple=True, metavar="GLOB",
                     help="Analyse only the .py files matching this pattern (repeatable)."),
        click.option("--no-ignore", is_flag=True, help="Do not honour .gitignore files in a git checkout."),
        click.option("--follow-links", is_flag=True,
                     help="Follow symbolic links that lead out of the tree (by default only those inside it)."),
        click.option("--max-file-size", type=ByteSize(), default="10MB", show_default=True,
                     help="Larger files are reported as too large, not read."),
        click.option("--max-unpacked-size", type=ByteSize(), default="1GiB", show_default=True,
                     help="Most source a wheel or git revision may unpack to."),
        click.option("--max-depth", type=click.IntRange(min=10, max=MAX_DEPTH), default=Limits().depth,
                     show_default=True, help="Levels of nested blocks and expressions analysed; deeper is a "
                     "per-file error."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per idle core)."),
        CACHE_DIR_OPTION,
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
    ]  # fmt: skip
    wrapped: Any = with_flags
    for option in reversed(options):
        wrapped = option(wrapped)
    return constraints(conflicts=[("no_cache", "cache_dir")])(wrapped)


def _common(function: Any) -> Any:
    """The run flags, and --max-nodes, --strict-types and --with-tests for the commands that build the graph."""
    function = click.option(
        "--strict-types",
        is_flag=True,
        help="Leave calls on receivers of unknown type unresolved (no approximate guess by method name).",
    )(function)
    function = click.option(
        "--max-nodes",
        type=click.IntRange(min=10),
        default=2000,
        show_default=True,
        help="Stop growing the slice past this many nodes.",
    )(_run_flags(function))
    return click.option(
        "--with-tests",
        is_flag=True,
        help="Let the writes in the tree's test folders (test/, tests/) seed the slice too (find lists them always).",
    )(function)


@dataclass(frozen=True, slots=True)
class ServerFlags:
    """What a command is told of the server besides its log: the launch command, /get_server_info."""

    #: The text of a file holding the launch command (a unit file, a script, ps output), or None.
    command: str | None
    #: The JSON of ``GET /get_server_info``, or None.
    server_info: bytes | None
    #: The most a log may hold once decompressed, in bytes.
    max_log_bytes: int
    #: The model's config.json and --env, or None when neither is given.
    model: Any = None

    def keywords(self) -> dict[str, Any]:
        """As the api's explain, diff, check and report take them."""
        return {
            "command": self.command, "server_info": self.server_info, "max_log_bytes": self.max_log_bytes,
            "model": self.model,
        }  # fmt: skip


_SERVER_NAMES = ("command_file", "server_info_file", "max_log_mb", "model_config", "env_pairs")


def _server_options(function: Callable[..., Any]) -> Any:
    """--command, --server-info and --max-log-mb, handed over as ``server``."""

    @functools.wraps(function)
    def with_server(**kwargs: Any) -> Any:
        command_file, server_info_file, max_log_mb, model_config, env_pairs = (kwargs.pop(n) for n in _SERVER_NAMES)
        command = _read_bounded(command_file, "--command", MAX_COMMAND_BYTES)
        server = ServerFlags(
            command.decode("utf-8", errors="replace") if command is not None else None,
            _read_bounded(server_info_file, "--server-info", MAX_JSON_BYTES),
            max_log_mb << 20,
            _model_facts(model_config, env_pairs),
        )
        return function(server=server, **kwargs)

    options = [
        click.option("--command", "command_file", type=click.File("rb"),
                     help="A file holding the launch command (a unit file, a script, ps output)."),
        click.option("--server-info", "server_info_file", type=click.File("rb"),
                     help="The JSON of GET /get_server_info."),
        click.option("--max-log-mb", type=click.IntRange(min=1, max=10**7), default=2048, show_default=True,
                     help="Refuse a log larger than this once decompressed."),
        click.option("--model-config", "model_config", metavar="PATH",
                     help="The model's config.json, or its folder (a download, Hugging Face's cache): the "
                          "architecture, layers and heads the release's code decides with."),
        click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
                     help="An environment variable the server ran with (else the release's default)."),
    ]  # fmt: skip
    wrapped: Any = with_server
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped


def _read_bounded(stream: Any, option: str, limit: int) -> bytes | None:
    """The bytes of a file an option names (None if not given); past *limit* one line and exit 2, having read at
    most one byte more (``/dev/zero`` and a sparse file of gigabytes end at once)."""
    if stream is None:
        return None
    try:
        return read_at_most(stream, limit)
    except (OSError, ValueError) as exc:
        _failed(f"error: {option} {click.format_filename(stream.name)}: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)


def _model_facts(config: str | None, env_pairs: Sequence[str]) -> Any:
    """--model-config and --env, read (one line and exit 2 on a bad one); None when neither is given."""
    from sgtrace.analyses.inputs import BadInput, read_env, read_model_config
    from sgtrace.model import ModelFacts

    if config is None and not env_pairs:
        return None
    try:
        values, origin, weights = read_model_config(config) if config is not None else (None, "", None)
        return ModelFacts(values, origin, read_env(env_pairs), weights)
    except BadInput as exc:
        _failed(f"error: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)


def _settings(pairs: Sequence[str], budget: str) -> dict[str, object]:
    """--set NAME=VALUE pairs, read and checked as every command reads them (one line and exit 2 on a bad one)."""
    from sgtrace.analyses.inputs import BadInput, read_settings

    try:
        return read_settings(pairs, budget)
    except BadInput as exc:
        _failed(f"error: {exc}", ExitCode.ERROR)
        sys.exit(ExitCode.ERROR)


def _echo_errors(errors: Any, shadowed: Any = ()) -> None:
    """Files that could not be analysed, one ``path:line: message`` line each, and packages found twice, on stderr."""
    for error in errors:
        click.echo(f"{error.path}:{error.line}: {error.message}", err=True)
    for copy in shadowed:
        _warn(
            f"package {copy.package} found twice: analysing {copy.used}, leaving out {', '.join(copy.left_out)} "
            f"({copy.files} files)"
        )
