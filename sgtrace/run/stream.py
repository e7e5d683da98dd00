"""A log read as a stream: plain or gzip, bounded in size, binary refused, only the lines start-ups need kept.

Months of a journal do not fit in memory, and most of their lines are request
traffic. The reader goes through the bytes a megabyte at a time; one regular
expression over each block (RELEVANT) finds the lines that can matter to a
start-up, and only those are decoded and cleaned (:func:`logs.clean`). Memory
is one block and one line at a time, whatever the log's size; time is linear.

A log is refused (LogError) when it is binary -- NUL bytes or text that is not
UTF-8, judged on its first 64 KB once ANSI colours are taken off -- or when it
is larger than *max_bytes* once decompressed (a gzip bomb stops there).
JSON logs (docker's json-file, ``journalctl -o json``) are read line by line:
docker's pieces of a long line must be joined before a line can be judged.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import zlib
from collections.abc import Iterator
from itertools import pairwise
from typing import Any, BinaryIO, cast

from sgtrace.run.lines import FIELD_RECORDS, MAX_LINE, LogError, LogLine, bare_lines, clean, field_records, unwrapped
from sgtrace.run.messages import LITERALS, WRAP_CHARS, WRAP_HEAD, WRAP_LINES, Rejoins, rejoined


def _rare(word: str) -> str:
    """A short piece of *word* that every line holding it holds too, and that request traffic rarely does."""
    if "=" in word:
        return "="
    return word[:12]


#: The decompressed size read by default (2 GiB, as api.DEFAULT_MAX_LOG_BYTES); ``--max-log-mb`` raises it.
DEFAULT_MAX_BYTES = 2 << 30
#: Bytes read at a time.
_BLOCK = 1 << 20
#: Bytes of the head judged for binary data.
_HEAD = 1 << 16
#: Lines that can matter to a start-up: the words of every message of the table (messages.LITERALS), and
#: a version of SGLang a line names.
RELEVANT = re.compile(
    b"|".join(re.escape(word.encode()) for word in LITERALS) + rb"|[Ss][Gg][Ll]ang(?:==|:v|-\d| v?\d| version)"
)
#: A cheap first pass that RELEVANT's lines all match: the rarest bytes of each of its words (their first
#: capital, or "="), so most of a journal is skipped at C speed (measured 230 MB/s against 19 for RELEVANT).
_CANDIDATE = re.compile(
    b"|".join(sorted({re.escape(_rare(word).encode()) for word in LITERALS})) + rb"|sglang|SGLang|Sglang|SGlang"
)
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
#: The head of a message a paste may have wrapped over lines (messages.WRAPPING), in bytes.
_WRAP_HEAD = re.compile(WRAP_HEAD.pattern.encode())


def relevant_lines(source: bytes | str | BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[LogLine]:
    """The cleaned lines of *source* (bytes, text or a binary stream, maybe gzip) that can matter to a start-up."""
    blocks = _blocks(_stream(source), max_bytes)
    first = next(blocks, b"")
    if FIELD_RECORDS.search(first, 0, 4096):  # journalctl -o verbose / -o export: a record's fields line by line
        numbered = ((n, _text(line)) for n, line in enumerate(_every_line(_chained(first, blocks)), 1))
        for number, text in unwrapped(field_records(numbered)):
            encoded = text.encode("utf-8", errors="surrogateescape")
            if _CANDIDATE.search(encoded) and RELEVANT.search(encoded):
                yield clean(number, text)
        return
    _refuse_binary(first)
    if first.lstrip()[:2] == b'{"':
        raw = _json_lines(_chained(first, blocks))
    else:
        raw = _plain_lines(_chained(first, blocks), Rejoins())
    for number, text in unwrapped((n, _text(line)) for n, line in raw):
        yield clean(number, text)


class _Borrowed(io.BufferedReader):
    """A buffer over the caller's stream that leaves it open when it is closed or collected (a plain
    BufferedReader closes what it wraps: a command reading the log twice, diff with a BytesIO, found it closed)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):  # detached already
            self.detach()


def _stream(source: bytes | str | BinaryIO) -> BinaryIO:
    """A buffered binary stream of the log's bytes, gunzipped if they are gzip."""
    if isinstance(source, str):
        source = source.encode("utf-8", errors="surrogateescape")
    raw: Any = io.BytesIO(source) if isinstance(source, bytes) else source
    buffered: Any = raw if hasattr(raw, "peek") else _Borrowed(raw)
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
    return cast(BinaryIO, buffered)


def _blocks(stream: BinaryIO, max_bytes: int) -> Iterator[bytes]:
    """The stream's bytes a block at a time; LogError past *max_bytes* or on a broken archive."""
    total = 0
    while True:
        try:
            block = stream.read(min(_BLOCK, max_bytes - total + 1))
        except (OSError, EOFError, zlib.error) as exc:
            raise LogError(f"not a readable gzip file: {exc}") from exc
        if not block:
            return
        total += len(block)
        if total > max_bytes:
            raise LogError(
                f"the log is larger than {max_bytes / (1 << 20):g} MB once decompressed (--max-log-mb raises the bound)"
            )
        yield block


def _chained(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _refuse_binary(head: bytes) -> None:
    """LogError if the head, ANSI colours taken off, holds NUL bytes or is not UTF-8 text."""
    text = _ANSI.sub(b"", head[:_HEAD])
    if b"\x00" in text:
        raise LogError("not a text log (binary data: NUL bytes)")
    decoded = text.decode("utf-8", errors="replace")
    invalid = decoded.count("\ufffd") - text.count("\ufffd".encode())
    if invalid > max(3, len(text) // 100):  # a stray Latin-1 byte is text; random bytes are not
        raise LogError("not a text log (binary data: not UTF-8 text)")


def _plain_lines(blocks: Iterator[bytes], rejoins: Rejoins) -> Iterator[tuple[int, bytes]]:
    """(1-based number, bytes) of each line RELEVANT finds; the others are only counted."""
    carry = b""
    number = 0  # lines before the start of *carry*
    skipping = False
    for block in blocks:
        data = carry + block
        end = data.rfind(b"\n") + 1
        if skipping:  # the tail of a cut line: drop it up to its newline
            if not end:
                carry = b""
                continue
            first_end = data.find(b"\n") + 1
            data, end, skipping = data[first_end:], end - first_end, False
            number += 1
        end = _before_a_wrap(data, end)
        yield from _scan(data, end, number, rejoins)
        number += data.count(b"\n", 0, end)
        carry = data[end:]
        if len(carry) > MAX_LINE:
            yield from _scan(carry[:MAX_LINE] + b"\n", MAX_LINE + 1, number, rejoins)
            carry, skipping = b"", True
    if carry:
        yield from _scan(carry + b"\n", len(carry) + 1, number, rejoins)


def _before_a_wrap(data: bytes, end: int) -> int:
    """Where the whole lines of data[:end] stop short of a message whose wrapped lines the next block may hold: the
    first head among its last WRAP_LINES lines."""
    begin = end - 1
    for _ in range(WRAP_LINES):  # back over the last lines a wrap can span (each at most WRAP_CHARS)
        before = data.rfind(b"\n", max(0, begin - WRAP_CHARS - 2), begin)
        if before < 0:
            begin = 0 if begin <= WRAP_CHARS + 2 else begin
            break
        begin = before
    head = _WRAP_HEAD.search(data, begin, end)
    if head is None:
        return end
    start = data.rfind(b"\n", 0, head.start()) + 1
    return start or end  # a head at the block's start: its lines are there or longer than a wrap's


def _scan(data: bytes, end: int, before: int, rejoins: Rejoins) -> Iterator[tuple[int, bytes]]:
    """The lines of data[:end] (whole lines) that RELEVANT finds, numbered after *before* lines."""
    position = counted = 0
    number = before
    while True:
        found = _CANDIDATE.search(data, position, end)
        if found is None:
            return
        start = data.rfind(b"\n", 0, found.start()) + 1
        stop = data.find(b"\n", found.start(), end)
        line, through = data[start : min(stop, start + MAX_LINE)], stop
        if _WRAP_HEAD.search(data, start, stop):
            line, through = _wrapped(data, start, stop, end, rejoins)
        if through != stop or RELEVANT.search(data, start, stop):
            number += data.count(b"\n", counted, start)
            counted = start
            yield number + 1, line
        position = through + 1


def _wrapped(data: bytes, start: int, stop: int, end: int, rejoins: Rejoins) -> tuple[bytes, int]:
    """(the line at data[start:stop] with the lines a paste wrapped it over, where the last of them ends)."""
    ends = [stop]
    while len(ends) <= WRAP_LINES and ends[-1] < end - 1:
        following = data.find(b"\n", ends[-1] + 1, min(end, ends[-1] + 2 + WRAP_CHARS))
        if following < 0:
            break
        ends.append(following)
    pieces = [_text(data[a + 1 : b]) for a, b in pairwise(ends)]
    text, taken = rejoined(_text(data[start : min(stop, start + MAX_LINE)]), bare_lines(pieces), rejoins)
    return text.encode("utf-8", errors="surrogateescape"), ends[taken]


def _json_lines(blocks: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
    """Relevant JSON records, with every piece of a line docker cut (a record whose text has no newline)."""
    previous_cut = False
    for number, line in enumerate(_every_line(blocks), 1):
        cut = line.startswith(b'{"log"') and b'\\n"' not in line
        if cut or previous_cut or b'"MESSAGE":[' in line or (_CANDIDATE.search(line) and RELEVANT.search(line)):
            yield number, line
        previous_cut = cut


def _every_line(blocks: Iterator[bytes]) -> Iterator[bytes]:
    carry = b""
    for block in blocks:
        lines = (carry + block).split(b"\n")
        carry = lines.pop()
        yield from (line[:MAX_LINE] for line in lines)
        carry = carry[: MAX_LINE + 1]
    if carry:
        yield carry


def _text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").rstrip("\r")
