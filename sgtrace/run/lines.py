"""Lines of an SGLang log, whatever wrote it: plain, journalctl (short, ``-o cat`` or ``-o json``),
``docker logs -t``, or docker's own json-file (``<id>-json.log``).

Each line is reduced to (when, rank, message): the JSON records are unwrapped
(docker's pieces of a long line joined again), ANSI colours, the docker and
journal prefixes and SGLang's own ``[time TPn]`` prefix are taken off, and the
message is matched against the table of messages (:mod:`~sgtrace.run.messages`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from sgtrace.run.messages import WRAP_HEAD, WRAP_LINES, Rejoins, rejoined

#: A piece of a dataclass's repr: a run of plain characters, a quoted string (its end may be cut off), or one
#: character (a bracket, a comma). Each pattern reads its piece once, with no backtracking to speak of.
_PIECE = re.compile(r"""[^,'"()\[\]{}]+|'[^'\\]*(?:\\.[^'\\]*)*(?:'|\\)?|"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\)?|.""", re.S)
#: A field's name, at the start of its piece of the repr.
_NAME = re.compile(r"\s*(\w+)=")
#: A scalar value: one quoted string, or plain characters with no bracket.
_SCALAR = re.compile(r"""(?:'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")\s*|[^,()\[\]{}]+""")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: A line longer than this is cut there (the rest of it is skipped). The longest line of a start-up SGLang
#: prints, its server_args=, is 14 KB in the corpus of real logs (a request's dump, no start-up's line, 230 KB);
#: the patterns read a line in linear time, and this bounds that time (0.4 s at most) and the memory a line takes.
MAX_LINE = 1 << 18


@dataclass(frozen=True, slots=True)
class Prefix:
    """What a tool that keeps a log puts before SGLang's line."""

    #: Who writes it.
    name: str
    #: Its pattern at the start of a line; groups ``when``, ``unit``, ``pid``, ``source``, ``rank`` where it gives
    #: them.
    pattern: re.Pattern[str]


#: docker's (and kubectl's) stamp, also the ``time`` of a record of docker's json-file.
_DOCKER = re.compile(r"^(?P<when>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))\s")
_STAMP = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d| ?UTC)?"
#: The zone journald's short-full (and with-unit, verbose) prints after its stamp: the local zone's
#: abbreviation (``UTC``, ``CET``, ``PDT``, ``+08``) or its offset.
_ZONE = r"(?: (?:[A-Z]{2,5}|[+-]\d\d(?::?\d\d)?))?"
#: What follows journald's stamp in every short form: the host, the unit (or program) and its process id.
_SOURCE = r" \S+ (?P<unit>[\w.@/-]+)(?:\[(?P<pid>\d+)\])?: "
#: The prefixes taken off a line, tried again until none is left (a journal of a container, a compose
#: service's log of a logging wrapper...); SGLang's own comes after them (_SGLANG).
PREFIXES: tuple[Prefix, ...] = (
    Prefix(
        "journald (short, short-precise, short-iso(-precise), short-full, with-unit: a host, a unit and its "
        "process id)",
        re.compile(
            r"^(?P<when>(?:[A-Z][a-z]{2} )?(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|"
            + _STAMP
            + _ZONE
            + r"))"
            + _SOURCE
        ),
    ),
    Prefix(
        "journald (short-monotonic, short-delta, short-unix: seconds since boot or since 1970, no date)",
        re.compile(r"^(?:\[\s*\d+\.\d+(?: <\s*\d+\.\d+>)?\]|\d{9,}\.\d+)" + _SOURCE),
    ),
    Prefix("docker logs -t, kubectl logs --timestamps", _DOCKER),
    Prefix("docker compose (a service's name)", re.compile(r"^(?P<source>[\w.-]+)\s+\| ")),
    Prefix("kubectl logs --prefix", re.compile(r"^\[(?P<source>pod/[^\]\s/]+)[^\]\s]*\] ")),
    Prefix(
        "a time stamp of a wrapper, Python's logging (``2025-03-07 23:50:27,531 - name - INFO - ``)",
        re.compile(r"^(?P<when>" + _STAMP + r")(?: - [\w.<>-]+ - [A-Z]+ -)? (?=\S)"),
    ),
    Prefix("SGLang before 0.2 (``[rank=1]``)", re.compile(r"^\[rank=(?P<rank>\d+)\] ")),
    Prefix("SGLang 0.2 (``[gpu_id=1]``: a rank's GPU)", re.compile(r"^\[gpu_id=(?P<rank>\d+)\] ")),
)
_SGLANG = re.compile(r"^\[(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<rank>(?: [A-Z_]+\d+)*)\] ")
_SGLANG_INSIDE = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z_]+\d+)*\] ")
#: What a progress bar (tqdm) draws: a percentage and its bar, a rate.
_PROGRESS = re.compile(r"\d%\||\bit/s\b|\bs/it\b|\|\s*\d+/\d+ \[")
#: What SGLang's newer logging puts after its stamp: the level, the file and the line.
_LEVEL = re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+:\d+: ")

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
    #: The container or pod a line came from, as docker compose's or kubectl's prefix names it ("" elsewhere).
    source: str = ""


def lines(text: str) -> list[LogLine]:
    """Every line of *text* (split at newlines, as ``sed -n`` numbers them), cleaned."""
    split = text.split("\n")
    if split and not split[-1]:
        split.pop()
    numbered = field_records(enumerate((s.rstrip("\r") for s in split), 1))
    return [clean(number, raw) for number, raw in rewrapped(list(unwrapped(numbered)))]


def rewrapped(numbered: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, a message a paste wrapped over lines joined again under the number of its
    first (see messages.rejoined; the stream does the same on its bytes)."""
    index = 0
    rejoins = Rejoins()
    while index < len(numbered):
        number, raw = numbered[index]
        taken = 0
        if WRAP_HEAD.search(raw):
            following = bare_lines(text for _, text in numbered[index + 1 : index + 1 + WRAP_LINES])
            raw, taken = rejoined(raw, following, rejoins)
        yield number, raw
        index += 1 + taken


def unwrapped(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, JSON records given as the text their tool prints.

    docker's json-file cuts a line longer than 16 KB into records without the final newline:
    they are joined again, under the number of the first, in one join of their pieces (adding each
    piece to the text so far copied it again: 20 MB of cut records took minutes). A line is kept to its
    first MAX_LINE characters, however many pieces it came in.
    """
    pending: _Pieces | None = None
    for number, raw in numbered:
        record = _record(raw)
        if record is None:
            if pending is not None:
                yield pending.line()
                pending = None
            yield number, raw[:MAX_LINE]
            continue
        prefix, text, whole = record
        if pending is None:
            pending = _Pieces(number, prefix)
        pending.add(text)  # a continuation: the first piece's prefix stands
        if whole:
            yield pending.line()
            pending = None
    if pending is not None:
        yield pending.line()


class _Pieces:
    """The pieces of one line docker cut, kept up to MAX_LINE characters in all."""

    def __init__(self, number: int, prefix: str) -> None:
        self.number, self.pieces, self.room = number, [prefix[:MAX_LINE]], MAX_LINE - min(len(prefix), MAX_LINE)

    def add(self, text: str) -> None:
        if self.room > 0:
            self.pieces.append(text[: self.room])
            self.room -= len(self.pieces[-1])

    def line(self) -> tuple[int, str]:
        return self.number, "".join(self.pieces)


#: A verbose record's time (with the zone), as its head begins.
_VERBOSE_WHEN = r"[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: \S+)?"
#: The head of a record of ``journalctl -o verbose``: its time and its cursor.
_VERBOSE = re.compile(
    rf"^(?P<when>{_VERBOSE_WHEN}) \[s=[0-9a-f]+;i=[0-9a-f]+;b=[0-9a-f]+;m=[0-9a-f]+;t=[0-9a-f]+;x=[0-9a-f]+\]$"
)
#: A field of a record of ``-o verbose`` (four spaces before it) or ``-o export`` (none).
_FIELD = re.compile(r"^(?P<indent> {4})?(?P<key>[A-Z0-9_]+)=(?P<value>.*)$")
#: Where a log of such records shows itself (in its first bytes): a verbose head or an export record's first
#: field.
FIELD_RECORDS = re.compile(rf"^(?:__CURSOR=|{_VERBOSE_WHEN} \[s=[0-9a-f]+;)".encode("ascii"), re.M)


class _Fields:
    """One journald record of ``-o verbose`` or ``-o export`` being read, field by field."""

    def __init__(self, when: str, indent: str) -> None:
        #: The verbose head's time ("" for export: its __REALTIME_TIMESTAMP field gives it).
        self.when, self.indent = when, indent
        self.fields: dict[str, object] = {}
        #: (line number, text) of each line of its message.
        self.message: list[tuple[int, str]] = []
        #: The field whose value continues on the lines after it (a multi-line or binary value), or "".
        self.open = ""
        self.binary = False

    def take(self, number: int, raw: str) -> bool:
        """Take one line of the record; False when it is not one of its lines."""
        field = _FIELD.match(raw)
        if field is not None and (field["indent"] or "") == self.indent:
            key, value = field["key"], field["value"]
            self.fields[key], self.open, self.binary = value, key, False
            if key == "MESSAGE":
                self.message = [(number, value)]
            return True
        if self.indent and self.open == "MESSAGE" and raw.startswith(" " * (len(self.indent) + len("MESSAGE="))):
            self.message.append((number, raw[len(self.indent) + len("MESSAGE=") :]))  # verbose: a multi-line message
            return True
        if not self.indent and re.fullmatch(r"[A-Z0-9_]+", raw):  # export: a binary value (its length, 8 bytes, first)
            self.open, self.binary = raw, True
            if raw == "MESSAGE":
                self.message = []
            return True
        if not self.indent and self.binary and raw:
            if self.open == "MESSAGE":
                self.message.append((number, raw[8:] if not self.message else raw))
            return True
        return False

    def lines(self) -> Iterator[tuple[int, str]]:
        """The record's message as journald's short-full form prints it (a line each of a multi-line message)."""
        if not self.message:
            return
        host = re.sub(r"\s", "-", str(self.fields.get("_HOSTNAME") or "-"))
        prefix = f"{self.when or _journal_time(self.fields)} {host} {_journal_unit(self.fields)}: "
        for number, text in self.message:
            yield number, prefix + text


def field_records(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, the records of ``journalctl -o verbose`` and ``-o export`` given as the
    lines of the short form (a record's message under the number of its MESSAGE= line); other lines as they are."""
    record: _Fields | None = None
    for number, raw in numbered:
        head = _VERBOSE.match(raw) if raw[:1].isupper() else None
        if head is not None or raw.startswith("__CURSOR="):
            if record is not None:
                yield from record.lines()
            record = _Fields(head["when"], "    ") if head is not None else _Fields("", "")
            if head is None:
                record.take(number, raw)
            continue
        if record is not None:
            if record.take(number, raw):
                continue
            yield from record.lines()
            record = None
            if not raw:  # an export record's end
                continue
        yield number, raw
    if record is not None:
        yield from record.lines()


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


def _journal_time(record: Mapping[str, object]) -> str:
    """A journald record's time as the short format prints it (in UTC: the record does not say the zone)."""
    try:
        moment = datetime.fromtimestamp(int(str(record.get("__REALTIME_TIMESTAMP"))) / 1e6, timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return "Jan 01 00:00:00"
    return moment.strftime("%b %d %H:%M:%S")


def _journal_unit(record: Mapping[str, object]) -> str:
    name = re.sub(r"[^\w.@/-]", "-", str(record.get("SYSLOG_IDENTIFIER") or record.get("_COMM") or "-"))
    pid = record.get("SYSLOG_PID") or record.get("_PID")
    return f"{name}[{pid}]" if str(pid or "").isdigit() else name


def clean(number: int, raw: str) -> LogLine:
    """Take ANSI colours, a progress bar's carriage returns and every prefix (PREFIXES, then SGLang's own
    stamp and level) off one line."""
    text = _ANSI.sub("", raw).rstrip()
    if "\r" in text:  # a progress bar drawn over and over, then the line: the last drawing is what shows
        text = next((piece for piece in reversed(text.split("\r")) if piece.strip()), "")
    when = unit = rank = pid = source = ""
    seconds = None
    for _ in range(len(PREFIXES)):
        found = next((m for prefix in PREFIXES if (m := prefix.pattern.match(text))), None)
        if found is None:
            break
        given = found.groupdict()
        when = given.get("when") or when
        unit, pid = given.get("unit") or unit, given.get("pid") or pid
        source = given.get("source") or source
        rank = f"TP{given['rank']}" if given.get("rank") else rank
        text = text[found.end() :]
    sglang = _SGLANG.match(text)
    if sglang is None and (inside := _SGLANG_INSIDE.search(text)) and _PROGRESS.search(text, 0, inside.start()):
        text = text[inside.start() :]  # a progress bar the line was written after, with no newline between
        sglang = _SGLANG.match(text)
    if sglang:
        when, rank, text = sglang["when"], sglang["rank"].strip(), text[sglang.end() :]
        seconds = _seconds(when)
        level = _LEVEL.match(text)
        text = text[level.end() :] if level else text
    return LogLine(number, when, rank, unit, text, pid, seconds, source=source)


def bare_lines(following: Iterable[str]) -> list[str]:
    """The lines of *following* up to the first with a prefix or a stamp of its own: those a wrap can run on to."""
    found = []
    for raw in following:
        line = clean(0, raw)
        if line.when or line.unit or line.rank or line.pid or line.source:
            break
        found.append(raw)
    return found


def _seconds(when: str) -> float | None:
    """``2026-02-28 10:03:46[.123]`` as seconds since 1970 on the same (unknown) clock."""
    try:
        moment = datetime.fromisoformat(when.replace(",", "."))
    except ValueError:
        return None
    return (moment.replace(tzinfo=timezone.utc) - _EPOCH).total_seconds()


def server_args(match: re.Match[str]) -> tuple[dict[str, float | str | bool | None], str]:
    """The scalar arguments of a ``server_args=ServerArgs(...)`` message (*match*: the table's pattern on it), and,
    for a line cut short, the last field it holds whole ("-" for none; "" for a whole line)."""
    arguments = match.group("arguments")
    found = list(_fields(arguments))
    cut = match.group("closed") is None
    if cut and found and found[-1][2] >= len(arguments.rstrip()):
        found.pop()  # the line is cut short in its last field: its value may be too (0.88 cut to 0.8)
    last = (found[-1][0] if found else "-") if cut else ""
    return {name: parse_value(value.strip()) for name, value, _ in reversed(found)}, last


def _fields(arguments: str) -> Iterator[tuple[str, str, int]]:
    """(name, value, end) of each scalar field ``name=value`` at the top level of a repr's arguments, in one pass
    over its pieces (a regular expression that tried each place a field could begin took 43 s on a line of
    100 KB); a field whose value is a list, a dict or an object is left out."""
    depth, start = 0, 0
    for piece in _PIECE.finditer(arguments):
        char = piece.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            yield from _field(arguments, start, piece.start())
            start = piece.end()
    yield from _field(arguments, start, len(arguments))


def _field(arguments: str, start: int, end: int) -> Iterator[tuple[str, str, int]]:
    name = _NAME.match(arguments, start, end)
    if name is not None and _SCALAR.fullmatch(arguments, name.end(), end):
        yield name.group(1), arguments[name.end() : end], end


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
