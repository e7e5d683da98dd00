"""``sgtrace caps`` and ``sgtrace explain``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from sgtrace.cli.base import (
    RunFlags,
    _budget_options,
    _common,
    _echo_errors,
    _guarded,
    _one_tree,
    _query,
    _warn,
    cli,
)
from sgtrace.model import ExitCode

_CAPS_EPILOG = """\b
Examples:
  sgtrace caps                                  # installed sglang, else the sample
  sgtrace caps sglang==0.5.9
  sgtrace caps sglang==0.5.23 --format json | jq '.caps[] | select(.category == "min")'
  sgtrace caps . --format sarif > caps.sarif    # for code scanning in CI

\b
Categories: base (set from the profiled budget), reserve (subtracted from the
budget), min, round, reduce (distributed MIN), split (shared between pools),
override (replaced under a condition by a value not from the budget).
Exit codes: 0 caps found, 1 none found, 2 usage or input error.
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
    click.echo(renderers[fmt](result), nl=False)
    sys.exit(ExitCode.FOUND if result.caps else ExitCode.NOT_FOUND)


_EXPLAIN_EPILOG = """\b
Examples:
  sgtrace explain sglang==0.5.9 --log server.log          # the latest complete start-up
  journalctl -u sglang | sgtrace explain sglang==0.5.9 --log - --runs
  sgtrace explain sglang==0.5.9 --log server.log.gz --run 1
  sgtrace explain sglang==0.5.9 --log server.log --want-kv-gb 19.1
  sgtrace explain sglang==0.5.9 --set mem_fraction_static=0.88 \\
      --set avail_before_weights_gb=94.04 --set avail_after_weights_gb=21.71

\b
Logs: plain SGLang logs, journalctl (short, -o cat or -o json), docker logs -t,
docker's json-file (<id>-json.log), ANSI colours, .gz; all ranks interleaved. A server_args= line or a service start
begins a start-up. The log gives: server_args=ServerArgs(...), 'Load weight
begin/end ... avail mem=, mem usage=', 'KV Cache is allocated. #tokens: N, K
size/V size' or 'KV size', 'Memory pool end. avail mem=', 'Capture ... graph
end. mem usage=', 'max_total_num_tokens='.
--set supplies or overrides any input, by the formula's variable name, a
ServerArgs field or a log quantity (avail_before_weights_gb, kv_gb, ...).
Exit codes: 0 explained, 2 a missing input or bad input (one line on stderr).
"""


@cli.command(epilog=_EXPLAIN_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--log", "log_file", type=click.File("rb"), help="An SGLang log or journal ('-': standard input).")
@click.option("--run", "run_index", type=click.IntRange(min=1), help="Explain start-up N (1 = the oldest).")
@click.option("--runs", "list_runs", is_flag=True, help="List the log's start-ups and stop.")
@click.option(
    "--want-kv-gb", type=click.FloatRange(min=0, min_open=True), help="The mem_fraction_static for this pool."
)
@click.option("--want-tokens", type=click.IntRange(min=1), help="The mem_fraction_static for this many tokens.")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE", help="Supply or override an input.")
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
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    strict_types: bool,
    flags: RunFlags,
) -> None:
    """Explain a start-up's KV pool with the budget formula of PATH or SPEC: the answer, the ledger, a what-if."""
    from sgtrace import api
    from sgtrace.analyses.logs import parse_value
    from sgtrace.analyses.operator import Want
    from sgtrace.report import explain_report

    if log_file is None and not settings:
        raise click.UsageError("give --log FILE or --set NAME=VALUE")
    values: dict[str, object] = {}
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not sep or not name.strip().isidentifier():
            _warn(f"error: --set expects NAME=VALUE, got {setting!r}")
            sys.exit(ExitCode.ERROR)
        values[name.strip()] = parse_value(value.strip())
    log = log_file.read() if log_file is not None else None
    want = Want(run_index, want_kv_gb, want_tokens)

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        return api.explain(_query(attribute, max_nodes, strict_types), budget, tree, options, log, values, want)

    found, result, context = _guarded(flags.debug, run)
    if list_runs:
        click.echo(explain_report.render_runs(context), nl=False)
        sys.exit(ExitCode.FOUND)
    render = explain_report.render_json if fmt == "json" else explain_report.render
    click.echo(render(found, result, context), nl=False)
    for name, how in sorted(result.missing.items()):
        _warn(f"missing input {name}: {how}")
    sys.exit(ExitCode.ERROR if result.kv_budget_gb is None else ExitCode.FOUND)
