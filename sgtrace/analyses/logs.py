"""Lines of an SGLang log, whatever wrote it: plain, journalctl (short or ``-o cat``), ``docker logs -t``.

Each line is reduced to (when, rank, message): ANSI colours, the docker and
journal prefixes and SGLang's own ``[time TPn]`` prefix are taken off, and the
message is matched against the lines SGLang logs while it starts (QUANTITIES).
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass

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
    r" \S+ (?P<unit>[\w.@/-]+)(?:\[\d+\])?: "
)
_SGLANG = re.compile(r"^\[(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<rank>(?: [A-Z_]+\d+)*)\] ")


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


def decode(data: bytes) -> str:
    """The text of a log file: gunzipped if it is gzip, refused if it is binary."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise LogError(f"not a readable gzip file: {exc}") from exc
    head = data[:65536]
    if b"\x00" in head or (head and sum(b < 9 or 13 < b < 32 for b in head) > len(head) // 100):
        raise LogError("not a text log (binary data)")
    return data.decode("utf-8", errors="replace")


def lines(text: str) -> list[LogLine]:
    """Every line of *text*, cleaned."""
    return [clean(number, raw) for number, raw in enumerate(text.splitlines(), 1)]


def clean(number: int, raw: str) -> LogLine:
    """Take ANSI colours and the docker, journal and SGLang prefixes off one line."""
    text = _ANSI.sub("", raw).rstrip()
    when = unit = rank = ""
    docker = _DOCKER.match(text)
    if docker:
        when, text = docker.group(0).strip(), text[docker.end() :]
    journal = _JOURNAL.match(text)
    if journal:
        when, unit, text = journal.group("when"), journal.group("unit"), text[journal.end() :]
    sglang = _SGLANG.match(text)
    if sglang:
        when, rank, text = sglang.group("when"), sglang.group("rank").strip(), text[sglang.end() :]
    return LogLine(number, when, rank, unit, text)


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


def read_log(text: str) -> dict[str, float | str | bool | None]:
    """Quantities (see QUANTITIES) and server arguments of the latest complete start-up in *text*."""
    from sgtrace.analyses.startups import facts, pick, split

    runs = split(text)
    return facts(runs[pick(runs, None) - 1]) if runs else {}


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
