"""``sgtrace caps`` and ``sgtrace explain``."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    ServerFlags,
    _budget_options,
    _common,
    _echo_errors,
    _guarded,
    _held,
    _hold,
    _one_tree,
    _query,
    _run_options,
    _server_options,
    _settings,
    _warn,
    cli,
)
from sgtrace.cli.constraints import constraints
from sgtrace.cli.output import emit
from sgtrace.model import ExitCode
from sgtrace.run.messages import by_name, read_lines

_CAPS_EPILOG = """\b
Examples:
  sgtrace caps                                  # the checkout here, else installed sglang, else the sample
  sgtrace caps sglang==0.5.9
  sgtrace caps sglang==0.5.23 --format json | jq '.caps[] | select(.category == "min")'
  sgtrace caps . --format sarif > caps.sarif    # for code scanning in CI

\b
Categories: base (set from the profiled budget), reserve (subtracted from the
budget), min, round, reduce (distributed MIN), split (shared between pools),
override (replaced under a condition by a value not from the budget).
Exit codes: 0 caps found (or none, when BUDGET does not reach ATTR: a warning
says so), 1 none found or ATTR never written, 2 usage or input error (an ATTR
or BUDGET the tree does not hold: a typo, with a did-you-mean).
"""


@cli.command(epilog=_CAPS_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@_budget_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@_common
def caps(
    target: str | None,
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """Which code paths cap ATTR (the KV pool size) below the BUDGET knob, under PATH or SPEC."""
    from sgtrace import api
    from sgtrace.report import caps_json, caps_text

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        return api.caps(_query(attribute, max_nodes, strict_types), budget, tree, options)

    result = _guarded(flags.debug, run)
    _echo_errors(result.errors, result.shadowed)
    renderers = {"json": caps_json.render, "sarif": caps_json.render_sarif, "text": caps_text.render}
    emit(renderers[fmt](result))
    # a budget that does not reach the attribute is an answer (the api has warned): no cap to list
    sys.exit(ExitCode.FOUND if result.caps or not result.budget_sites else ExitCode.NOT_FOUND)


_EXPLAIN_EPILOG = """\b
Examples:
  sgtrace explain sglang==0.5.9 --log server.log          # the latest complete start-up
  journalctl -u sglang -o cat | grep -i "{load_end}\\|{scheduler}" \\
      | sgtrace explain sglang==0.5.9 --log -               # what a grep left is enough
  sgtrace explain sglang==0.5.9 --log server.log.gz --run 1
  sgtrace explain sglang==0.5.9 --log server.log --want-kv-gb 19.1
  sgtrace explain sglang==0.5.9 --set mem_fraction_static=0.88 \\
      --set weights_gb=72.33 --set avail_after_weights_gb=21.71   # no log: the figures you read

\b
The release: PATH or SPEC, else the SGLang checkout you stand in, else the
installed sglang; with none, exit 2 (the formula is the release's own). A
version the log or --server-info names is checked against it.
Logs: plain SGLang logs, journalctl (any -o: short, short-iso, short-full,
short-monotonic, cat, json, verbose, export...), docker logs -t,
docker's json-file (<id>-json.log), ANSI colours, .gz; all ranks interleaved;
read as a stream (--max-log-mb bounds the decompressed size). Any grep of a
journal will do: a start-up begins on evidence that a new server began (a
service start, a server_args= line, a new process id, a rank loading again
after its start-up ended, SGLang's clock going back or a gap), never on the
memory a line shows; a figure is never taken from another start-up, and what
the lines cannot tell is said.

\b
The lines read (the table of SGLang's messages):
{lines}

\b
--set supplies or overrides any input, by the formula's variable name, a
ServerArgs field or a figure: avail_before_weights_gb, avail_after_weights_gb,
weights_gb, kv_gb, kv_tokens, gpu_gb (the card's size), ... (each figure gives
the others as the log's lines do). --command FILE (a launch command, a unit
file, ps output) and --server-info FILE (GET /get_server_info) give server
arguments; the log's server_args= line and --set win over them.
Without server_args, the log's own pool and the formula imply the fraction.
Exit codes: 0 explained, 1 ATTR never written, 2 a missing input or bad input
(a name the release does not hold, a BUDGET that does not reach ATTR; one line
on stderr).
"""


def _finite(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


_EXPLAIN_EPILOG = (
    _EXPLAIN_EPILOG.replace("{load_end}", by_name("load_end").literal)
    .replace("{scheduler}", by_name("scheduler").literal.rstrip("="))
    .replace("{lines}", read_lines())
)


@cli.command(epilog=_EXPLAIN_EPILOG)
@constraints(
    conflicts=[
        ("want_kv_gb", "want_tokens"),
        ("list_runs", "want_kv_gb"),
        ("list_runs", "want_tokens"),
        ("list_runs", "fmt=json"),
        ("log_file=-", "command_file=-"),
        ("log_file=-", "server_info_file=-"),
        ("command_file=-", "server_info_file=-"),
    ],
    needs=[("run_index", "log_file"), ("list_runs", "log_file")],
)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--log", "log_file", type=click.File("rb"), help="An SGLang log or journal ('-': standard input).")
@click.option("--run", "run_index", type=click.IntRange(min=1), help="Explain start-up N (1 = the oldest).")
@click.option("--runs", "list_runs", is_flag=True, help="List the log's start-ups and stop.")
@click.option(
    "--want-kv-gb",
    type=click.FloatRange(min=0, min_open=True, max=1e6),
    callback=_finite,
    help="The mem_fraction_static for this pool.",
)
@click.option(
    "--want-tokens", type=click.IntRange(min=1, max=10**12), help="The mem_fraction_static for this many tokens."
)
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE", help="Supply or override an input.")
@_server_options
@_budget_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_common
def explain(
    target: str | None,
    log_file: Any,
    run_index: int | None,
    list_runs: bool,
    want_kv_gb: float | None,
    want_tokens: int | None,
    settings: Sequence[str],
    server: ServerFlags,
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """Explain a start-up's KV pool with the budget formula of PATH or SPEC: the answer, the ledger, a what-if."""
    from sgtrace import api
    from sgtrace.analyses.operator import Want
    from sgtrace.report import explain_report

    if log_file is None and not settings and server.command is None and server.server_info is None and not server.model:
        raise click.UsageError("give --log FILE or --set NAME=VALUE")
    values = _settings(settings, budget)
    want = Want(run_index, want_kv_gb, want_tokens)

    def run() -> Any:
        options = _run_options(flags)
        tree = api.resolve_targets([target] if target else [], options.cache_dir, _hold, None, options.limits, False)[0]
        query = _query(attribute, max_nodes, strict_types)
        return api.explain(query, budget, tree, options, log_file, values, want, **server.keywords())

    found, result, context = _guarded(flags.debug, run)
    answered = list_runs or result.kv_budget_gb is not None
    for note in context.notes if answered else ():  # without an answer, they end the line that says why
        _warn(f"note: {note}")
    if list_runs:
        emit(explain_report.render_runs(context))
        sys.exit(ExitCode.FOUND)
    render = explain_report.render_json if fmt == "json" else explain_report.render
    emit(render(found, result, context))
    if answered:
        sys.exit(ExitCode.FOUND)
    why = _no_answer(result.missing, found.root, budget, bool(result.steps))
    _warn("; ".join([why, *(f"note: {note}" for note in [*_held(), *context.notes])]))
    sys.exit(ExitCode.ERROR)


def _no_answer(missing: Mapping[str, str], root: str, budget: str, formula: bool) -> str:
    """Why explain has no answer, in one line: each input it lacks and how to supply it, or that the tree has no
    formula, or none of it runs for this start-up."""
    if missing:
        return "; ".join(f"missing input {name}: {how}" for name, how in sorted(missing.items()))
    if not formula:
        return f"error: no budget formula was found in {root}: no statement computes the pool from {budget}"
    return f"error: no statement of the budget formula in {root} runs for this start-up"
