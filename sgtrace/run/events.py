"""What one line of a log says about a start-up: an Event, read by the table of messages.

A model's lines come in the order SGLang's model runner logs them (:class:`Phase`): distributed
init, weights, pools, memory pool end, graphs. The target's come first; a speculative draft repeats
them, after the target's graphs in older releases and between the target's weights and pools in
newer ones. The splitter (:mod:`sgtrace.run.startups`) tells start-ups and models apart from the
kinds, the steps and the figures of the events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgtrace.run.lines import LogLine, server_args
from sgtrace.run.messages import (
    MESSAGES,
    SERVICE_STARTED,
    SERVICE_STOPPED,
    VERSION,
    Kind,
    Message,
    Phase,
    Pool,
    Speaks,
    command,
    figures,
    label,
    read,
)

_SERVICE_UNITS = ("", "systemd", "init.scope")


@dataclass(frozen=True, slots=True)
class Event:
    """One line that matters to a start-up."""

    #: What the line is.
    kind: Kind
    #: The line.
    line: LogLine
    #: The table's name of its message ("" for lines of no message: a service's, a command, a version).
    message: str = ""
    #: The step of a model's start-up it is (a STEP's), else None.
    phase: Phase | None = None
    #: Quantity -> value (GB, tokens, seconds, a fraction) the line gives (see messages.QUANTITIES).
    figures: dict[str, float] = field(default_factory=dict)
    #: The model class of a ``Load weight end``.
    model_type: str = ""
    #: Seconds the operation the line ends took (``elapsed=``), 0 if it says none.
    elapsed: float = 0.0
    #: Which capture (``capture draft extend cuda graph``) for a graph's line; "" otherwise.
    capture: str = ""
    #: Which model the line alone says it speaks for.
    speaks: Speaks = Speaks.EITHER
    #: What a pool line allocates.
    pool: Pool | None = None
    #: Whether a KV pool line gives K and V apart (MHA) rather than one KV size (MLA).
    split_kv: bool = False
    #: The server arguments of a ``server_args=`` line.
    arguments: dict[str, float | str | bool | None] = field(default_factory=dict)
    #: The version a line names, or the launch command's arguments; for a ``server_args=`` line cut short, the
    #: last field it holds whole ("-" for none).
    detail: str = ""

    @property
    def step(self) -> bool:
        """Whether it is a step of a model's start-up."""
        return self.phase is not None


def classify(line: LogLine) -> Event | None:
    """The event *line* is, None if it matters to no start-up."""
    text = line.text
    if line.unit in _SERVICE_UNITS and not line.rank and not (line.unit == "" and line.when):
        if text.startswith(SERVICE_STARTED):
            return Event(Kind.SERVICE_START, line)
        if line.unit and text.startswith(SERVICE_STOPPED):
            return Event(Kind.SERVICE_STOP, line)
    for message in MESSAGES:
        match = read(message, text)
        if match is not None:
            return _event(message, match, line)
    arguments = command(text)
    if arguments is not None:
        return Event(Kind.COMMAND, line, detail=arguments.strip())
    version = VERSION.search(text)
    if version:
        return Event(Kind.VERSION, line, detail=version.group("version"))
    return None


def _event(message: Message, match: re.Match[str], line: LogLine) -> Event | None:
    if message.kind is Kind.OTHER:
        return None
    if message.kind is Kind.SERVER_ARGS:
        arguments, cut = server_args(match)
        return Event(message.kind, line, message.name, arguments=arguments, detail=cut)
    found = figures(message, match)
    model_type = str(found.pop("model_type", ""))
    elapsed = float(found.pop("elapsed", 0.0))
    numbers = {k: float(v) for k, v in found.items()}
    speaks, capture, split = message.speaks, "", False
    if message.name.startswith("capture"):
        capture = match.group("which").lower()
        speaks = Speaks.DRAFT if "draft" in capture else Speaks.TARGET if "target" in capture else Speaks.EITHER
    if message.pool is Pool.KV:
        split = "k_gb" in numbers and "v_gb" in numbers
        if split:
            numbers["kv_gb"] = round(numbers.pop("k_gb") + numbers.pop("v_gb"), 2)
        if "draft" in label(line.text, match.start()):
            speaks = Speaks.DRAFT
    if message.pool is Pool.MAMBA:
        parts = ("conv_gb", "ssm_gb", "intermediate_ssm_gb", "intermediate_conv_gb")
        numbers = {"mamba_gb": round(sum(numbers.get(p, 0.0) for p in parts), 2)}
    return Event(
        message.kind, line, message.name, message.phase, numbers, model_type, elapsed, capture, speaks,
        message.pool, split,
    )  # fmt: skip
