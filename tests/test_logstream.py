"""Logs read as a stream: the same lines as reading them whole, bounded memory, the size bound, binary refused."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.run.lines import LogError, lines
from sgtrace.run.startups import split
from sgtrace.run.stream import MAX_LINE, RELEVANT, relevant_lines
from sgtrace.sources import sample_tree
from tests.conftest import FIXTURES

JOURNALS = [FIXTURES / "logs" / "h20_three_startups.journal", FIXTURES / "logs" / "kimi_three_startups.journal"]
TRAFFIC = (
    "[2026-02-28 11:00:{s:02d} TP0] Decode batch. #running-req: 3, #token: 4510, token usage: 0.03, #queue-req: 0\n"
)


def _facts(runs: list) -> list:  # type: ignore[type-arg]
    return [
        (r.index, r.started, r.ended, r.server_args, r.target, r.draft, r.left, r.max_total_num_tokens) for r in runs
    ]


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.stem)
def test_the_stream_keeps_every_line_that_matters_with_its_number(path: Path) -> None:
    text = path.read_text()
    matching = {n for n, raw in enumerate(path.read_bytes().split(b"\n"), 1) if RELEVANT.search(raw)}
    whole = [line for line in lines(text) if line.number in matching]
    assert len(whole) > 100
    assert [(line.number, line.text) for line in relevant_lines(path.open("rb"))] == [
        (line.number, line.text) for line in whole
    ]
    assert _facts(split(relevant_lines(path.read_bytes()))) == _facts(split(text))


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.stem)
def test_gzip_text_bytes_and_streams_give_the_same_start_ups(path: Path) -> None:
    expected = _facts(split(path.read_text()))
    packed = gzip.compress(path.read_bytes())
    for source in (
        path.read_text(),
        path.read_bytes(),
        io.BytesIO(packed),
        packed,
        io.BufferedReader(io.BytesIO(packed)),
    ):
        assert _facts(split(relevant_lines(source))) == expected


def test_docker_pieces_of_a_long_line_are_joined_in_a_stream() -> None:
    arguments = "server_args=ServerArgs(" + ", ".join(f"a{i}={i}" for i in range(3000)) + ", mem_fraction_static=0.88)"
    pieces = [arguments[i : i + 16384] for i in range(0, len(arguments), 16384)]
    records = [{"log": p + ("\n" if i == len(pieces) - 1 else ""), "time": "2026-11-02T10:00:01Z"} for i, p in
               enumerate(pieces)]  # fmt: skip
    records.append({"log": "[2026-11-02 10:00:19 TP0] Load weight begin. avail mem=94.04 GB\n", "time": "x"})
    text = "\n".join(json.dumps(r) for r in records)
    (run,) = split(relevant_lines(text.encode()))
    assert run.server_args["mem_fraction_static"] == 0.88 and run.target["avail_before_weights_gb"].value == 94.04


@pytest.mark.parametrize(
    "data",
    [
        b"\x1b[32m[2026-11-02 10:00:19 TP0] Load weight begin. avail mem=94.04 GB\x1b[0m\n" * 400,  # docker, a TTY
        b"\x1b[1m\x1b[32mINFO\x1b[0m:\x1b[33m  \x1b[0m \x1b[1m\x1b[36mx\x1b[0m\x1b[2m\x1b[37m.\x1b[0m\n"
        * 400,  # script
        b"[2026-11-02 10:00:19 TP0] caf\xe9 Load weight begin. avail mem=94.04 GB\n" * 2,  # a stray Latin-1 byte
    ],
    ids=["colours-every-line", "colours-everywhere", "latin-1-byte"],
)
def test_ansi_colours_and_a_stray_byte_are_text(data: bytes) -> None:
    list(relevant_lines(data))  # no LogError


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "NUL bytes"),
        (bytes(range(128, 256)) * 64, "not UTF-8 text"),
        (b"\x1b[32m" + b"\x00" * 10 + b"\x1b[0m\n", "NUL bytes"),
    ],
    ids=["elf", "random-high-bytes", "nul-inside-colours"],
)
def test_binary_is_nul_bytes_or_text_that_is_not_utf8(data: bytes, message: str) -> None:
    with pytest.raises(LogError, match=message):
        list(relevant_lines(data))


def test_a_gzip_bomb_stops_at_the_bound_with_bounded_memory() -> None:
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", compresslevel=9) as out:
        for _ in range(64):
            out.write((b"a" * 1023 + b"\n") * 1024)  # 64 MB of text lines
    assert packed.tell() < 1 << 20
    packed.seek(0)
    tracemalloc.start()
    try:
        with pytest.raises(LogError, match=r"larger than 16 MB once decompressed \(--max-log-mb raises the bound\)"):
            list(relevant_lines(packed, max_bytes=16 << 20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


def test_a_large_journal_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """40 MB of traffic around one start-up: the reader holds a block and the lines that matter, not the log."""
    path = tmp_path / "journal.log"
    start_up = JOURNALS[1].read_text()
    with path.open("w") as out:
        for block in range(8):
            out.write("".join(TRAFFIC.format(s=i % 60) for i in range(50_000)))
            if block == 4:
                out.write(start_up)
    assert path.stat().st_size > 40_000_000
    tracemalloc.start()
    try:
        runs = split(relevant_lines(path.open("rb")))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.index for r in runs] == [1, 2, 3] and runs[2].max_total_num_tokens is not None
    assert runs[2].max_total_num_tokens.value == 159277
    assert peak < 12 << 20, peak


def test_a_line_longer_than_the_bound_is_cut_and_the_numbers_go_on() -> None:
    data = b"Load weight begin. avail mem=94.04 GB" + b"x" * (MAX_LINE + 5000) + b"\nMemory pool end. avail mem=1 GB\n"
    found = list(relevant_lines(data))
    assert [line.number for line in found] == [1, 2]
    assert len(found[0].text) <= MAX_LINE and found[1].text == "Memory pool end. avail mem=1 GB"


def test_the_cli_refuses_a_log_past_max_log_mb_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text(TRAFFIC.format(s=1) * 20_000)  # 2 MB
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log), "--max-log-mb", "1"])
    assert out.exit_code == 2
    assert out.stderr.strip() == (
        "sgtrace: error: the log is larger than 1 MB once decompressed (--max-log-mb raises the bound)"
    )


def test_a_stream_without_peek_is_left_open_for_the_next_reading() -> None:
    """diff reads the log once per release: a BytesIO (no ``peek``) was wrapped in a BufferedReader that
    closed it when collected, and the second release met a closed file (api.diff with a BytesIO; history
    reading releases one after the other with the log on standard input)."""
    import gc

    from sgtrace import api
    from sgtrace.index.findpass import RunOptions
    from sgtrace.model import TraceQuery
    from sgtrace.sources import Target

    stream = io.BytesIO(JOURNALS[0].read_bytes())
    first = list(relevant_lines(stream))
    gc.collect()
    assert not stream.closed
    stream.seek(0)
    assert list(relevant_lines(stream)) == first
    tree = Target(str(sample_tree()), "sample")
    query, options = TraceQuery("max_total_num_tokens"), RunOptions(cache_dir=None)
    *_, found = api.diff(query, "mem_fraction_static", tree, tree, options, io.BytesIO(JOURNALS[0].read_bytes()))
    assert found.pool is not None and round(found.pool.new.explanation.kv_budget_gb, 2) == 10.43
