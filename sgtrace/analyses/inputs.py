"""The inputs of one explanation, gathered and checked: --set, the start-up's facts, the server's configuration.

Layers, the later winning: the log's launch command, ``--command``,
``--server-info``, the start-up's own lines (its ``server_args=`` and figures),
``--set``. The memory figures are then completed from each other
(:func:`figures.complete`). Every ``--set`` must name something this release
knows (a did-you-mean otherwise); every value, whatever the door that gave it
(``--set``, ``--command``, ``--server-info``, the log's launch command,
``server_args=`` line and figures), must be a finite number where one is
needed and lie in its range (one check: :func:`figures.check`); figures that
contradict each other are refused.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgtrace.analyses.figures import OPERATOR_FIGURES, BadFigure, check, complete, contradictions
from sgtrace.analyses.launch import LaunchError, layered, read_command, read_server_info, same_version
from sgtrace.analyses.release_args import ReleaseArgs
from sgtrace.bounded import MAX_JSON_BYTES, load_json, read_at_most
from sgtrace.model import BudgetSite
from sgtrace.run.lines import parse_value
from sgtrace.run.messages import QUANTITIES
from sgtrace.run.startups import StartUp, facts


class BadInput(Exception):
    """A log, a ``--set`` or a configuration that cannot be used (exit code 2); *details* say what was found, what
    is missing and what would supply it, for the error's JSON (docs/explain.md, "When there is no answer")."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details: Mapping[str, Any] = details or {}


@dataclass(frozen=True)
class Given:
    """What the operator gave besides the log."""

    #: ``--set`` values, by name.
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: A launch command, or a unit file, script or ``ps`` output holding one ("" if none).
    command: str = ""
    #: The JSON of the server's ``/get_server_info`` (empty if none).
    server_info: bytes | str = b""
    #: The version of the release analysed ("" if not known).
    release_version: str = ""
    #: The model's ``config.json`` (``--model-config``), and where it was read; None if not given.
    model_config: Mapping[str, Any] | None = None
    model_config_origin: str = ""
    #: ``--env NAME=VALUE``: environment variables the release reads.
    env: Mapping[str, str] = field(default_factory=dict)
    #: Whether an ``--env`` name this release does not declare is refused (else left out, and said in the
    #: context: a comparison of releases refuses it when neither does).
    strict_env: bool = True
    #: The bytes of the model's weight files beside its config.json, and what gave them (None: not known).
    model_weights: tuple[int, str] | None = None


@dataclass(frozen=True)
class Inputs:
    """The facts the formula and the caps are evaluated with, and where the ones not read from the log came from."""

    #: Name -> value.
    known: dict[str, Any]
    #: Name -> where its value came from, for values the log's lines did not give directly.
    origins: dict[str, str]
    #: What the operator should know about them (a version that differs, options that name nothing).
    notes: tuple[str, ...]


def weight_files(folder: Path) -> tuple[int, str] | None:
    """The bytes of a model's weights in *folder* (its config.json's): the index's ``metadata.total_size``
    (``model.safetensors.index.json``, ``pytorch_model.bin.index.json``), else the sizes of its weight files
    (``*.safetensors``, ``pytorch_model*.bin``); None when it holds none."""
    for name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        try:
            data = _json_file(folder / name)
        except (OSError, ValueError):
            continue
        metadata = data.get("metadata") if isinstance(data, dict) else None
        total = metadata.get("total_size") if isinstance(metadata, dict) else None
        if isinstance(total, int) and not isinstance(total, bool) and total > 0:
            return total, f"{name}'s total_size"
    files = [*folder.glob("*.safetensors"), *folder.glob("pytorch_model*.bin")]
    total = 0
    for file in files:
        try:
            total += file.stat().st_size
        except OSError:
            continue
    return (total, f"{len(files)} weight files in {folder}") if total > 0 else None


def read_model_config(path: str) -> tuple[dict[str, Any], str, tuple[int, str] | None]:
    """A model's ``config.json``: the file, or a model folder holding it (a download, or Hugging Face's cache:
    ``models--org--name`` with its newest snapshot), with the bytes of the weight files beside it (see
    :func:`weight_files`). BadInput if there is none or it is no JSON object."""

    given = Path(path).expanduser()
    found = given
    if given.is_dir():
        direct = given / "config.json"
        snapshots = sorted(given.glob("snapshots/*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        nested = sorted(given.glob("models--*/snapshots/*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        found = direct if direct.is_file() else next(iter(snapshots or nested), direct)
    try:
        data = _json_file(found)
    except FileNotFoundError as exc:
        raise BadInput(f"--model-config {path}: no config.json there") from exc
    except OSError as exc:
        raise BadInput(f"--model-config {path}: cannot read it ({exc})") from exc
    except ValueError as exc:  # not JSON, larger than the bound, nested too deep
        raise BadInput(f"--model-config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise BadInput(f"--model-config {path}: a config.json holds a JSON object")
    return data, f"config.json, {found}", weight_files(found.parent)


def _json_file(path: Path) -> Any:
    """The JSON of *path*, read within MAX_JSON_BYTES and MAX_JSON_DEPTH (ValueError past them: a sparse file of
    gigabytes took 23 s and 3 GB, 100,000 levels were a RecursionError)."""
    with path.open("rb") as stream:
        return load_json(read_at_most(stream, MAX_JSON_BYTES))


def read_env(pairs: Sequence[str]) -> dict[str, str]:
    """``--env NAME=VALUE`` pairs; BadInput for one that is not NAME=VALUE."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip().isidentifier():
            raise BadInput(f"--env expects NAME=VALUE, got {pair!r}")
        values[name.strip()] = text.strip()
    return values


def read_settings(pairs: Sequence[str], budget: str) -> dict[str, Any]:
    """``--set NAME=VALUE`` pairs as values (numbers, None, booleans, strings), checked as far as they can be
    without the release: BadInput for a pair that is not NAME=VALUE, a name given two values, or a figure
    that is not a finite number in its range (:func:`check_settings` checks the rest against the release)."""
    numeric = {budget, "gpu_mem", *QUANTITIES, *OPERATOR_FIGURES}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise BadInput(f"--set expects NAME=VALUE, got {pair!r}")
        value = parse_value(text.strip())
        if name in values and values[name] != value:  # each quoted: an empty value shows
            raise BadInput(f"--set {name} is given twice, as {values[name]!r} and {value!r}")
        try:
            check(name, value, budget, name in numeric)
        except BadFigure as exc:
            raise BadInput(str(exc)) from exc
        values[name] = value
    return values


def check_settings(
    settings: Mapping[str, Any], args: ReleaseArgs, sites: list[BudgetSite], conditions: list[str], budget: str
) -> None:
    """Every --set names something the formula, a condition on the caps' way, ServerArgs or the log knows,
    and is a finite number in its range where a number is needed."""
    words = settable(args, sites, conditions, budget)
    for name in settings:
        if name not in words:
            close = difflib.get_close_matches(name, sorted(words), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise BadInput(f"--set {name}: not an input of this release's formula, caps or ServerArgs{hint}")
    checked(settings, "--set", budget, args)


def checked(
    values: Mapping[str, Any], door: str, budget: str, args: ReleaseArgs, spelled: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """*values* as a door gave them (--set, --command, --server-info, the log's launch command and server_args= line),
    each checked by :func:`figures.check`: BadInput naming the door, the key (as *spelled* there) and the value."""
    numeric = {budget, "gpu_mem", *QUANTITIES, *OPERATOR_FIGURES, *args.numeric}
    for name, value in values.items():
        try:
            check(name, value, budget, name in numeric, door, (spelled or {}).get(name, ""))
        except BadFigure as exc:
            raise BadInput(str(exc)) from exc
    return dict(values)


def settable(args: ReleaseArgs, sites: list[BudgetSite], conditions: list[str], budget: str) -> set[str]:
    """The names a --set may give: the formula's and the conditions' words, ServerArgs' fields, the figures."""
    words = {budget, "gpu_mem", *QUANTITIES, *OPERATOR_FIGURES, *args.fields}
    for text in [site.code for site in sites] + conditions:
        words.update(re.findall(r"[A-Za-z_]\w*", text))
    return words


def gather(chosen: StartUp | None, given: Given, args: ReleaseArgs, budget: str) -> Inputs:
    """The layered facts of one explanation (see the module doc), completed and checked: a value out of its range
    is refused whichever door gave it."""
    layers: dict[str, Mapping[str, Any]] = {}
    notes: list[str] = []
    stages = _pipeline_stages(chosen.ranks) if chosen is not None else 0
    if stages:  # the weakest layer: any command, server_args or --set that names pp_size wins
        shown = checked({"pp_size": stages}, "the log's rank prefixes:", budget, args)
        layers[f"the log's rank prefixes: a PP rank, at least {stages} pipeline stages"] = shown
    window = _window_pool_line(chosen) if chosen is not None else None
    if window is not None:  # the model is a hybrid sliding-window one, whatever its config is assumed to hold
        layers[f"the log's sliding-window pool (line {window})"] = {"is_hybrid_swa": True}
    try:
        if chosen is not None and chosen.command:
            layers["the log's launch command"] = _command(chosen.command, "the log's", budget, args, notes)
        if given.command:
            layers["--command"] = _command(given.command, "--command's", budget, args, notes)
        if given.server_info:
            info = read_server_info(given.server_info, args)
            layers["--server-info"] = checked(info.values, "--server-info:", budget, args)
            _version(info.version, "--server-info names", given.release_version, notes)
    except LaunchError as exc:
        raise BadInput(str(exc)) from exc
    if chosen is not None:
        checked(chosen.server_args, "the log's server_args= line:", budget, args)
        _printed(chosen)
        layers["the log"] = facts(chosen)
        if chosen.version is not None:
            version, line = chosen.version
            _version(version, f"the log names (line {line})", given.release_version, notes)
    layers["--set"] = given.settings
    merged, origins = layered(layers)
    estimate = _estimated_weights(given, merged)
    if estimate is not None:
        merged["weights_gb"], origins["weights_gb"] = estimate
    known, derived = complete(merged)
    try:
        contradictions(known, set(given.settings))
    except BadFigure as exc:
        raise BadInput(str(exc)) from exc
    origins = {name: where for name, where in origins.items() if where != "the log"}
    origins.update({name: f"worked out: {how}" for name, how in derived.items()})
    chosen_fraction = chosen.verdicts.get("mem_fraction_static") if chosen is not None else None
    if chosen_fraction is not None and "mem_fraction_static" not in given.settings and chosen and not chosen.death:
        origins["mem_fraction_static"] = f"SGLang's own choice (line {chosen_fraction.line}), not the one asked for"
    return Inputs(known, origins, tuple(notes))


def _printed(run: StartUp) -> None:
    """BadInput for a figure of the start-up's lines that no run prints (``avail mem=1e400 GB`` is infinite), as
    :func:`figures.check` checks a figure: the line, the figure and its value."""
    shown = [*run.target.items(), *run.draft.items()]
    shown += [("max_total_num_tokens", run.max_total_num_tokens)] if run.max_total_num_tokens is not None else []
    for name, figure in shown:
        try:
            check(name, figure.value, "", True, f"the log's line {figure.line}:", printed=True)
        except BadFigure as exc:
            raise BadInput(str(exc)) from exc


def _pipeline_stages(ranks: Sequence[str]) -> float:
    """The pipeline stages a start-up's rank prefixes show at least (SGLang names a rank's stage, ``PP1``, only when
    pp_size > 1); 0 when none names one."""
    found = [_whole(n) for rank in ranks for n in re.findall(r"\bPP(\d+)\b", rank)]
    return max(2, max(found) + 1) if found else 0


def _whole(digits: str) -> float:
    """A rank's number as a log spells it: an int, or a float where it has more digits than any rank (5,000 digits are
    more than Python converts to an int; a float's infinity past 308), for figures.check to refuse."""
    return int(digits) if len(digits) <= 18 else float(digits)


def _window_pool_line(run: StartUp) -> int | None:
    """The line of the start-up's sliding-window pool (SGLang sizes one only for a hybrid sliding-window model:
    its window and full layers' tokens, or its SWA pool's size), None when it shows none."""
    lines = [run.target[name].line for name in ("swa_pool_gb", "swa_tokens", "full_tokens") if name in run.target]
    return min(lines) if lines else None


def _estimated_weights(given: Given, merged: Mapping[str, Any]) -> tuple[float, str] | None:
    """The weights one GPU holds, estimated from the size of the model's weight files over its tensor- and
    pipeline-parallel ranks, when no figure gives them (before launch); None when a figure does, or the files
    are not known."""
    if given.model_weights is None or any(n in merged for n in ("weights_gb", "avail_after_weights_gb")):
        return None
    total, where = given.model_weights
    ranks = 1
    for name in ("tp_size", "pp_size"):
        value = merged.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1 and value == int(value):
            ranks *= int(value)
    gb = round(total / (1 << 30) / ranks, 2)
    over = f" over {ranks} ranks (tp_size x pp_size)" if ranks > 1 else ""
    return gb, (
        f"estimated: {total / (1 << 30):.2f} GB of weight files ({where}){over}; an estimate: the parts every rank"
        " holds whole, a quantization made at load and a draft's weights are not counted (--set weights_gb)"
    )


def _command(text: str, whose: str, budget: str, args: ReleaseArgs, notes: list[str]) -> dict[str, Any]:
    """The arguments of a launch command, each checked (BadInput naming the command, the option and the value)."""
    found = read_command(text, args)
    door = "--command:" if whose == "--command's" else f"{whose} launch command:"
    return checked(_configured(found, whose, notes), door, budget, args, found.spelled)


#: The most unknown options a note names (a command of 100,000 made one line of a megabyte).
_NAMED = 10


def _configured(found: Any, whose: str, notes: list[str]) -> dict[str, Any]:
    if found.unknown:
        names = list(dict.fromkeys(found.unknown))  # each once, in the command's order; a few: a note is one line
        more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
        notes.append(f"{whose} launch command: {', '.join(names[:_NAMED])}{more} name no option of this release (not "
                     "used)")  # fmt: skip
    return dict(found.values)


def _version(named: str, where: str, release: str, notes: list[str]) -> None:
    if named and release and not same_version(named, release):
        notes.append(f"{where} sglang {named}, but the release analysed is {release}: its formula may differ")
