"""A journal in every output format of journalctl gives the start-ups of its default short form.

``journalctl -o FORMAT`` prints the same records with other prefixes (a zone after short-full's stamp, seconds
since boot or since 1970, a unit's name) or as records of fields (``verbose``, ``export``, ``json``); an
operator pastes whichever their habit or their log shipper uses. Before the formats were read, each line of a
short-full journal in a zone other than UTC, of short-monotonic, short-delta, short-unix, verbose and export
began a start-up of its own (164 for the Kimi journal). tests/journals.py renders the formats as systemd's
logs-show.c prints them.
"""

from __future__ import annotations

import struct

import pytest

from sgtrace.run.lines import clean, lines
from sgtrace.run.startups import StartUp, split
from sgtrace.run.stream import relevant_lines
from tests.conftest import FIXTURES
from tests.journals import FORMATS, SHAPES, as_format, journal

JOURNALS = {
    "kimi": (FIXTURES / "logs" / "kimi_three_startups.journal").read_text().splitlines(),
    "h20": (FIXTURES / "logs" / "h20_three_startups.journal").read_text().splitlines(),
    **{name: journal(specs) for name, specs in SHAPES.items()},
}


def _read(runs: list[StartUp]) -> list[tuple[object, ...]]:
    """What a start-up is read to hold, apart from where its lines are and how its time is spelled."""
    return [
        (
            run.index,
            run.end.died,
            run.complete,
            run.server_args.get("mem_fraction_static"),
            {name: figure.value for name, figure in run.target.items()},
            {name: figure.value for name, figure in run.draft.items()},
            run.model_types,
            run.ranks,
            run.max_total_num_tokens.value if run.max_total_num_tokens else None,
            bool(run.doubts),
        )
        for run in runs
    ]


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("name", sorted(JOURNALS))
def test_every_format_gives_the_start_ups_of_the_short_form(name: str, form: str) -> None:
    short = split("\n".join(JOURNALS[name]))
    assert len(short) >= 3
    assert _read(split("\n".join(as_format(JOURNALS[name], form)))) == _read(short)


@pytest.mark.parametrize("form", FORMATS)
def test_a_stream_reads_each_format_as_the_whole_text_does(form: str) -> None:
    text = "\n".join(as_format(JOURNALS["kimi"], form)) + "\n"
    streamed = split(relevant_lines(text.encode()))
    whole = split(text)
    assert [(r.first_line, r.started, r.ended) for r in streamed] == [(r.first_line, r.started, r.ended) for r in whole]
    assert _read(streamed) == _read(whole)


def test_a_zone_after_the_stamp_and_a_host_in_capitals() -> None:
    line = clean(
        1, "Fri 2026-02-27 16:20:12 CEST gpu-01 sglang.service[42]: [2026-02-27 16:20:12 TP3] Load weight end."
    )
    assert (line.when, line.unit, line.pid, line.rank, line.text) == (
        "2026-02-27 16:20:12",
        "sglang.service",
        "42",
        "TP3",
        "Load weight end.",
    )  # fmt: skip (SGLang's own stamp is the line's time)
    assert clean(1, "Fri 2026-02-27 16:20:12 +08 h u[2]: msg").text == "msg"
    # the short form has no zone: a host named in capitals is a host, and the message keeps its own "INFO: "
    line = clean(1, "Feb 27 16:20:12 DGX python3[1]: INFO: Started server process")
    assert (line.unit, line.text) == ("python3", "INFO: Started server process")


def test_a_verbose_record_with_a_message_of_several_lines() -> None:
    text = "\n".join(
        [
            "Fri 2026-02-27 17:20:12.000100 CET [s=9a1f;i=1;b=7e2d;m=2;t=3;x=4]",
            "    _HOSTNAME=node-03",
            "    SYSLOG_IDENTIFIER=python3",
            "    _PID=20811",
            "    MESSAGE=Traceback (most recent call last):",
            '              File "x.py", line 1, in <module>',
            "    _SYSTEMD_UNIT=sglang.service",
            "Fri 2026-02-27 17:20:13.000100 CET [s=9a1f;i=2;b=7e2d;m=3;t=4;x=5]",
            "    MESSAGE=[2026-02-27 16:20:13 TP0] KV Cache is allocated. #tokens: 116169, KV size: 7.60 GB",
            "    _PID=20811",
            "after the journal",
        ]
    )
    found = [(line.number, line.unit, line.pid, line.rank, line.text) for line in lines(text)]
    assert found == [
        (5, "python3", "20811", "", "Traceback (most recent call last):"),
        (6, "python3", "20811", "", '  File "x.py", line 1, in <module>'),  # its own indent after the field's
        (9, "-", "20811", "TP0", "KV Cache is allocated. #tokens: 116169, KV size: 7.60 GB"),
        (11, "", "", "", "after the journal"),
    ]


def test_an_export_record_with_a_binary_message() -> None:
    """journald exports a value that is not printable text (one holding a newline) as its name, its length in
    eight bytes and the bytes."""
    value = "first line\nsecond line"
    record = [
        "__CURSOR=s=9a1f;i=1;b=7e2d;m=2;t=3;x=4",
        "__REALTIME_TIMESTAMP=1772209212000100",
        "_HOSTNAME=node-03",
        "SYSLOG_IDENTIFIER=python3",
        "_PID=20811",
        "MESSAGE",
        struct.pack("<Q", len(value)).decode("latin-1") + value,
        "PRIORITY=6",
        "",
        "__CURSOR=s=9a1f;i=2;b=7e2d;m=3;t=4;x=5",
        "__REALTIME_TIMESTAMP=1772209213000100",
        "MESSAGE=[2026-02-27 16:20:13 TP0] KV Cache is allocated. #tokens: 116169, KV size: 7.60 GB",
        "",
    ]
    found = [(line.number, line.when, line.text) for line in lines("\n".join(record))]
    assert found == [
        (7, "Feb 27 16:20:12", "first line"),
        (8, "Feb 27 16:20:12", "second line"),
        (13, "2026-02-27 16:20:13", "KV Cache is allocated. #tokens: 116169, KV size: 7.60 GB"),
    ]
