"""Lines of an SGLang log, whatever wrote it: plain, journalctl (short, ``-o cat`` or ``-o json``),
``docker logs -t``, or docker's own json-file (``<id>-json.log``).

Each line is reduced to (when, rank, message): the JSON records are unwrapped
(docker's pieces of a long line joined again), ANSI colours, the docker and
journal prefixes and SGLang's own ``[time TPn]`` prefix are taken off, and the
message is matched against the lines SGLang logs while it starts (QUANTITIES).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone

#: What each quantity is, for the report and for the error that asks for a missing one.
QUANTITIES = {
    "avail_before_weights_gb": "GPU memory free before the weights were loaded ('Load weight begin. avail mem=')",
    "avail_after_weights_gb": "GPU memory free after the weights were loaded ('Load weight end. ... avail mem=')",
    "weights_gb": "memory the weights took ('Load weight end. ... mem usage=')",
    "kv_gb": "size of the KV cache allocated ('KV Cache is allocated. ... K size + V size' or 'KV size')",
    "kv_tokens": "tokens in the KV cache ('KV Cache is allocated. #tokens: N')",
    "avail_after_pool_gb": "GPU memory free after the pools ('Memory pool end. avail mem=')",
    "max_total_num_tokens": "the scheduler's pool size ('max_total_num_tokens=')",
}

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
#: (quantity, pattern): the figures one model's start-up logs, on every rank.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("avail_before_weights_gb", re.compile(rf"Load weight begin\..*?avail mem={_NUMBER}\s*GB")),
    ("avail_after_weights_gb", re.compile(rf"Load weight end\..*?avail mem={_NUMBER}\s*GB")),
    ("weights_gb", re.compile(rf"Load weight end\..*?mem usage={_NUMBER}\s*GB")),
    ("kv_tokens", re.compile(r"KV Cache is allocated\..*?#tokens:\s*([0-9]+)")),
    ("avail_after_pool_gb", re.compile(rf"Memory pool end\..*?avail mem={_NUMBER}\s*GB")),
    ("graph_gb", re.compile(rf"Capture .*?graph end\..*?mem usage={_NUMBER}\s*GB")),
)
SCHEDULER_TOKENS = re.compile(r"\bmax_total_num_tokens=([0-9]+)")
MODEL_TYPE = re.compile(r"Load weight end\..*?type=(\w+)")
LOAD_BEGIN = re.compile(r"Load weight begin\.")
DRAFT_GRAPH = re.compile(r"Capture draft\b")
AVAIL = re.compile(rf"\bavail(?:able_gpu)?[ _]mem={_NUMBER}\s*GB")
KV_SPLIT = re.compile(rf"KV Cache is allocated\..*?K size:\s*{_NUMBER}\s*GB.*?V size:\s*{_NUMBER}\s*GB")
KV_WHOLE = re.compile(rf"KV Cache is allocated\..*?KV size:\s*{_NUMBER}\s*GB")
SERVER_ARGS = re.compile(r"server_args=ServerArgs\((.*)\)\s*$")
_ARGUMENT = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\[\]{}]+)(?=,\s*\w+=|$)")
#: A service (re)start in a journal.
SERVICE_START = re.compile(r"^Started\b|^Starting\b")
#: A start-up that died: a traceback, a scheduler exception, a failed unit.
DEATH = re.compile(
    r"^Traceback \(most recent call last\)|hit an exception|Received sigquit"
    r"|Main process exited, code=(?!exited, status=0)"
    r"|Failed with result|out of memory|OutOfMemoryError"
)
READY = re.compile(r"The server is fired up and ready to roll")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DOCKER = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s")
_JOURNAL = re.compile(
    r"^(?P<when>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*)"
    r" \S+ (?P<unit>[\w.@/-]+)(?:\[(?P<pid>\d+)\])?: "
)
_SGLANG = re.compile(r"^\[(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<rank>(?: [A-Z_]+\d+)*)\] ")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class LogError(Exception):
    """A log that cannot be read as text (a binary file, a broken archive)."""


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a log, with its prefixes taken off."""

    #: 1-based line number in the input.
    number: int
    #: When, as the line's own prefix says ("" if it has none).
    when: str
    #: The rank prefix SGLang wrote (``TP3``, ``DP1 TP3``), "" if none.
    rank: str
    #: The systemd unit that wrote it in a journal ("" elsewhere).
    unit: str
    #: The message.
    text: str
    #: The process id of a journal's prefix ("" elsewhere).
    pid: str = ""
    #: SGLang's own time stamp as seconds (of its clock, zone unknown), None if the line has none.
    seconds: float | None = None


def lines(text: str) -> list[LogLine]:
    """Every line of *text* (split at newlines, as ``sed -n`` numbers them), cleaned."""
    split = text.split("\n")
    if split and not split[-1]:
        split.pop()
    return [clean(number, raw) for number, raw in unwrapped(enumerate((s.rstrip("\r") for s in split), 1))]


def unwrapped(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, JSON records given as the text their tool prints.

    docker's json-file cuts a line longer than 16 KB into records without the final newline:
    they are joined again, under the number of the first.
    """
    pending: tuple[int, str] | None = None
    for number, raw in numbered:
        record = _record(raw)
        if record is None:
            if pending is not None:
                yield pending
                pending = None
            yield number, raw
            continue
        prefix, text, whole = record
        if pending is not None:
            number, text = pending[0], pending[1] + text  # a continuation: the first piece's prefix stands
        else:
            text = prefix + text
        pending = None if whole else (number, text)
        if whole:
            yield number, text
    if pending is not None:
        yield pending


def _record(raw: str) -> tuple[str, str, bool] | None:
    """A docker json-file or ``journalctl -o json`` record as the prefix and message its tool prints (and
    whether the message is whole), else None."""
    if not raw.startswith('{"'):
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    log = record.get("log")
    if isinstance(log, str):  # docker: {"log": "...\n", "stream": "stderr", "time": "2026-11-02T10:00:01.12Z"}
        when = record.get("time")
        prefix = f"{when} " if isinstance(when, str) and _DOCKER.match(f"{when} ") else ""
        return prefix, log.rstrip("\n"), log.endswith("\n")
    message = record.get("MESSAGE")
    if isinstance(message, list) and all(isinstance(b, int) and 0 <= b < 256 for b in message):
        message = bytes(message).decode("utf-8", errors="replace")  # journald's form of a non-UTF-8 message
    if not isinstance(message, str):
        return None
    host = re.sub(r"\s", "-", str(record.get("_HOSTNAME") or "-"))
    return f"{_journal_time(record)} {host} {_journal_unit(record)}: ", message, True


def _journal_time(record: dict[str, object]) -> str:
    """A journald record's time as the short format prints it (in UTC: the record does not say the zone)."""
    try:
        moment = datetime.fromtimestamp(int(str(record.get("__REALTIME_TIMESTAMP"))) / 1e6, timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return "Jan 01 00:00:00"
    return moment.strftime("%b %d %H:%M:%S")


def _journal_unit(record: dict[str, object]) -> str:
    name = re.sub(r"[^\w.@/-]", "-", str(record.get("SYSLOG_IDENTIFIER") or record.get("_COMM") or "-"))
    pid = record.get("SYSLOG_PID") or record.get("_PID")
    return f"{name}[{pid}]" if str(pid or "").isdigit() else name


def clean(number: int, raw: str) -> LogLine:
    """Take ANSI colours and the docker, journal and SGLang prefixes off one line."""
    text = _ANSI.sub("", raw).rstrip()
    when = unit = rank = pid = ""
    seconds = None
    docker = _DOCKER.match(text)
    if docker:
        when, text = docker.group(0).strip(), text[docker.end() :]
    journal = _JOURNAL.match(text)
    if journal:
        when, unit, pid, text = journal["when"], journal["unit"], journal["pid"] or "", text[journal.end() :]
    sglang = _SGLANG.match(text)
    if sglang:
        when, rank, text = sglang["when"], sglang["rank"].strip(), text[sglang.end() :]
        seconds = _seconds(when)
    return LogLine(number, when, rank, unit, text, pid, seconds)


def _seconds(when: str) -> float | None:
    """``2026-02-28 10:03:46[.123]`` as seconds since 1970 on the same (unknown) clock."""
    try:
        moment = datetime.fromisoformat(when.replace(",", "."))
    except ValueError:
        return None
    return (moment.replace(tzinfo=timezone.utc) - _EPOCH).total_seconds()


def server_args(text: str) -> dict[str, float | str | bool | None] | None:
    """The scalar arguments of a ``server_args=ServerArgs(...)`` message, or None if it is not one."""
    match = SERVER_ARGS.search(text)
    if match is None:
        return None
    return {key: parse_value(value.strip()) for key, value in reversed(_ARGUMENT.findall(match.group(1)))}


def kv_size(text: str) -> float | None:
    """GB of a ``KV Cache is allocated`` message (K + V, or KV)."""
    split = KV_SPLIT.search(text)
    if split:
        return float(split.group(1)) + float(split.group(2))
    whole = KV_WHOLE.search(text)
    return float(whole.group(1)) if whole else None


def parse_value(text: str) -> float | str | bool | None:
    """A scalar as the log (or ``--set``) spells it: numbers, None, True/False, quoted or bare strings."""
    if text in ("None", "null"):
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return float(text)
    except ValueError:
        return text
