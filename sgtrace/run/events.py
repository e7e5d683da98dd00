"""What one line of a log says about a start-up: an Event of one kind, with the figures it gives.

A model's lines come in the order SGLang's ModelRunner logs them (PHASES):
distributed init, weights, KV pool, memory pool end, CUDA graphs. The
target's come first; a speculative draft repeats them after. The splitter
(:mod:`sgtrace.run.startups`) uses the kinds, the phases, the figures and
the elapsed time each line reports to tell start-ups and models apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgtrace.run.lines import (
    AVAIL,
    DEATH,
    KV_SPLIT,
    MODEL_TYPE,
    PATTERNS,
    READY,
    SCHEDULER_TOKENS,
    LogLine,
    kv_size,
    server_args,
)

#: Model events in the order one model logs them.
PHASES = {"init": 0, "load_begin": 1, "load_end": 2, "kv": 3, "pool_end": 4, "capture_begin": 5, "capture_end": 6}
#: Model classes of speculative drafts, by the name SGLang's model files give them.
DRAFT_TYPE = re.compile(r"Eagle|NextN|MTP|Draft", re.IGNORECASE)
#: A launch command, as ps, a unit file or a script shows it.
COMMAND = re.compile(r"(?:-m\s+sglang\.launch_server|sglang/launch_server\.py|\bsglang\s+serve)\b(?P<args>.*)$")
#: A version of SGLang named in a line: ``sglang==0.5.9``, ``lmsysorg/sglang:v0.5.9-cu129``, ``sglang 0.5.9``.
VERSION = re.compile(
    r"\bsglang(?:==|:v|-| v?| version:? ?v?)(?P<version>\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)\b", re.IGNORECASE
)
_ELAPSED = re.compile(r"\belapsed[=:]\s*([0-9]+(?:\.[0-9]+)?)\s*s\b", re.IGNORECASE)
_CAPTURE = re.compile(r"(Capture [\w ]*?graph) (begin|end)\b", re.IGNORECASE)
_SERVICE_UNITS = ("", "systemd", "init.scope")


@dataclass(frozen=True, slots=True)
class Event:
    """One line that matters to a start-up."""

    #: service_start, service_stop, server_args, command, version, a model event (PHASES), scheduler,
    #: ready, death, or avail (another line with free memory).
    kind: str
    #: The line.
    line: LogLine
    #: Quantity -> value (GB or tokens) the line gives (see logs.QUANTITIES; graph_gb; left_gb).
    figures: dict[str, float] = field(default_factory=dict)
    #: The model class of a ``Load weight end``.
    model_type: str = ""
    #: Seconds the operation the line ends took (``elapsed=``), 0 if it says none.
    elapsed: float = 0.0
    #: Which capture (``Capture draft extend cuda graph``) for a capture_begin or capture_end; "" otherwise.
    capture: str = ""
    #: Whether a capture is the draft's (``Capture draft ...``).
    draft: bool = False
    #: Whether the KV pool line gives K and V apart (MHA) rather than one KV size (MLA).
    split_kv: bool = False
    #: The server arguments of a ``server_args=`` line.
    arguments: dict[str, float | str | bool | None] = field(default_factory=dict)
    #: The version a line names, or the launch command's arguments.
    detail: str = ""


def classify(line: LogLine) -> Event | None:
    """The event *line* is, None if it matters to no start-up."""
    text = line.text
    if line.unit in _SERVICE_UNITS and not line.rank and not (line.unit == "" and line.when):
        if text.startswith("Started "):
            return Event("service_start", line)
        if line.unit and text.startswith("Stopped "):
            return Event("service_stop", line)
    arguments = server_args(text)
    if arguments is not None:
        return Event("server_args", line, arguments=arguments)
    return _model_event(line) or _other_event(line)


def _model_event(line: LogLine) -> Event | None:
    text = line.text
    figures = _figures(text)
    elapsed = _elapsed(text)
    if "Init torch distributed begin" in text:
        return Event("init", line)
    if "Load weight begin" in text:
        return Event("load_begin", line, figures)
    if "Load weight end" in text:
        kind = MODEL_TYPE.search(text)
        return Event("load_end", line, figures, kind.group(1) if kind else "", elapsed)
    if "KV Cache is allocated" in text:
        return Event("kv", line, figures, split_kv=KV_SPLIT.search(text) is not None)
    if "Memory pool end" in text:
        return Event("pool_end", line, figures)
    capture = _CAPTURE.search(text)
    if capture:
        which, begins = capture.group(1), capture.group(2).lower() == "begin"
        if begins:
            figures.pop("graph_gb", None)
        phase = "capture_begin" if begins else "capture_end"
        return Event(phase, line, figures, "", elapsed, which, "draft" in which.lower())
    return None


def _other_event(line: LogLine) -> Event | None:
    text = line.text
    tokens = SCHEDULER_TOKENS.search(text)
    if tokens:
        figures = {"max_total_num_tokens": float(tokens.group(1))}
        avail = AVAIL.search(text)
        if avail:
            figures["left_gb"] = float(avail.group(1))
        return Event("scheduler", line, figures)
    if READY.search(text):
        return Event("ready", line)
    if DEATH.search(text):
        return Event("death", line)
    command = COMMAND.search(text)
    if command:
        return Event("command", line, detail=command.group("args").strip())
    version = VERSION.search(text)
    if version:
        return Event("version", line, detail=version.group("version"))
    avail = AVAIL.search(text)
    if avail:
        return Event("avail", line, {"left_gb": float(avail.group(1))})
    return None


def _figures(text: str) -> dict[str, float]:
    found = {name: float(match.group(1)) for name, pattern in PATTERNS if (match := pattern.search(text))}
    size = kv_size(text)
    if size is not None:
        found["kv_gb"] = size
    avail = AVAIL.search(text)
    if avail and "Load weight" not in text:
        found["left_gb"] = float(avail.group(1))
    return found


def _elapsed(text: str) -> float:
    found = _ELAPSED.search(text)
    return float(found.group(1)) if found else 0.0
