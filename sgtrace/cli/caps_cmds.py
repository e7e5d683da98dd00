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
    flags: RunFlags,
) -> None:
    """Which code paths cap ATTR (the KV pool size) below the BUDGET knob, under PATH or SPEC."""
    from sgtrace import api
    from sgtrace.report import caps_json, caps_text

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        return api.caps(api.TraceQuery(attribute, max_nodes=max_nodes), budget, tree, options)

    result = _guarded(flags.debug, run)
    _echo_errors(result.errors, result.shadowed)
    renderers = {"json": caps_json.render, "sarif": caps_json.render_sarif, "text": caps_text.render}
    click.echo(renderers[fmt](result), nl=False)
    sys.exit(ExitCode.FOUND if result.caps else ExitCode.NOT_FOUND)


_EXPLAIN_EPILOG = """\b
Examples:
  sgtrace explain sglang==0.5.9 --log server.log
  journalctl -u sglang -o cat > server.log && sgtrace explain sglang==0.5.9 --log server.log
  sgtrace explain sglang==0.5.9 --set mem_fraction_static=0.88 \\
      --set avail_before_weights_gb=94.04 --set avail_after_weights_gb=21.71

\b
The log gives: server_args=ServerArgs(...), 'Load weight begin. avail mem=',
'Load weight end. ... avail mem=, mem usage=', 'KV Cache is allocated. #tokens: N,
K size/V size' or 'KV size', 'Memory pool end. avail mem=', 'max_total_num_tokens='.
--set supplies or overrides any input, by the formula's variable name or by the
log quantity (avail_before_weights_gb, avail_after_weights_gb, kv_gb, kv_tokens).
A missing input is named with what would supply it; exit code 2 then.
"""


@cli.command(epilog=_EXPLAIN_EPILOG)
@click.argument("target", metavar="[PATH|SPEC]", required=False)
@click.option("--log", "log_file", type=click.File("r", errors="replace"), help="An SGLang start-up log.")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE", help="Supply or override an input.")
@_budget_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_common
def explain(
    target: str | None,
    log_file: Any,
    settings: Sequence[str],
    attribute: str,
    budget: str,
    fmt: str,
    max_nodes: int,
    flags: RunFlags,
) -> None:
    """Evaluate the budget formula of PATH or SPEC with the figures of a log (or --set), step by step."""
    from sgtrace import api
    from sgtrace.analyses.logs import parse_value
    from sgtrace.report import explain_report

    if log_file is None and not settings:
        raise click.UsageError("give --log FILE or --set NAME=VALUE")
    values: dict[str, object] = {}
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not sep or not name.strip().isidentifier():
            raise click.UsageError(f"--set expects NAME=VALUE, got {setting!r}")
        values[name.strip()] = parse_value(value.strip())
    log = log_file.read() if log_file is not None else None

    def run() -> Any:
        tree, options = _one_tree(target, flags)
        return api.explain(api.TraceQuery(attribute, max_nodes=max_nodes), budget, tree, options, log, values)

    found, result = _guarded(flags.debug, run)
    render = explain_report.render_json if fmt == "json" else explain_report.render
    click.echo(render(found, result), nl=False)
    for name, how in sorted(result.missing.items()):
        _warn(f"missing input {name}: {how}")
    sys.exit(ExitCode.ERROR if result.kv_budget_gb is None else ExitCode.FOUND)
