"""explain on a journal of three start-ups: formats, ranks, target and draft, the ledger, bad input."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sgtrace.analyses.ledger import ledger
from sgtrace.cli import cli
from sgtrace.report.operator_text import BAR_WIDTH, bar, ledger_lines
from sgtrace.run.startups import facts, pick, split
from sgtrace.run.stream import relevant_lines
from sgtrace.sources import sample_tree
from tests.conftest import FIXTURES

JOURNAL = FIXTURES / "logs" / "h20_three_startups.journal"
_JOURNAL_PREFIX = re.compile(r"^[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ [\w.-]+\[\d+\]: ")


def _cat(text: str) -> str:
    """As ``journalctl -o cat`` writes it: the journal prefix gone."""
    return "\n".join(_JOURNAL_PREFIX.sub("", line) for line in text.splitlines())


def _plain(text: str) -> str:
    """As SGLang writes to its own stderr: only its lines."""
    return "\n".join(_JOURNAL_PREFIX.sub("", line) for line in text.splitlines() if "systemd[" not in line)


def _docker(text: str) -> str:
    """As ``docker logs -t`` writes it, with ANSI colours on."""
    return "\n".join(f"2026-11-02T10:00:01.123456789Z \x1b[32m{line}\x1b[0m" for line in _plain(text).splitlines())


@pytest.mark.parametrize("form", [lambda t: t, _cat, _plain, _docker], ids=["short", "cat", "plain", "docker"])
def test_every_format_gives_the_same_start_ups(form: object) -> None:
    runs = split(form(JOURNAL.read_text()))  # type: ignore[operator]
    assert [r.complete for r in runs] == [True, False, True]
    assert [r.server_args["mem_fraction_static"] for r in runs] == [0.85, 0.88, 0.88]
    assert pick(runs, None) == 3
    third = runs[2]
    assert third.target["avail_before_weights_gb"].value == 94.04  # the least over 8 ranks
    assert third.target["kv_gb"].value == pytest.approx(10.42)
    assert third.draft["kv_gb"].value == pytest.approx(0.14)  # the draft's pool is its own
    assert third.model_types == ("Qwen2ForCausalLM", "LlamaForCausalLMEagle3")
    assert len(third.ranks) == 8 and third.disagreements == ()


def test_died_and_disagreeing_ranks_are_reported() -> None:
    runs = split(JOURNAL.read_text())
    assert runs[1].ended.startswith("died (line 118") and not runs[1].complete
    assert runs[0].ended == "ready, then stopped"
    disagree = dict(runs[0].disagreements)
    assert dict(disagree["avail_before_weights_gb"])["TP6"] == 92.81
    assert facts(runs[0])["avail_before_weights_gb"] == 92.81


def test_a_log_with_only_the_draft_lines_never_takes_its_pool_for_the_target() -> None:
    text = (
        "[2026-11-02 10:02:17 TP0] Load weight end. elapsed=2.87 s, type=LlamaForCausalLMEagle3, "
        "dtype=torch.bfloat16, avail mem=8.26 GB, mem usage=0.93 GB.\n"
        "[2026-11-02 10:02:17 TP0] KV Cache is allocated. #tokens: 273152, K size: 0.07 GB, V size: 0.07 GB\n"
    )
    (run,) = split(text)
    assert "kv_gb" not in run.target and run.draft["kv_gb"].value == pytest.approx(0.14)


def test_the_ledger_adds_up_and_its_bar_fits_80_columns() -> None:
    run = split(JOURNAL.read_text())[2]
    rows = ledger(run)
    assert rows[0].item == "free before the weights"
    assert sum(r.gb for r in rows[1:]) == pytest.approx(rows[0].gb, abs=0.02)
    assert [r.item for r in rows if r.item.startswith("draft")] == [
        "draft weights", "draft KV pool", "draft other pool memory", "draft CUDA graphs",
    ]  # fmt: skip
    assert rows[-1].item == "left at the end" and rows[-1].gb == 7.21 and rows[-1].line == 263
    drawn = bar(rows)
    assert len(drawn) == BAR_WIDTH and drawn.count("K") > drawn.count("k")


def test_gzip_and_standard_input(tmp_path: Path) -> None:
    packed = tmp_path / "journal.gz"
    packed.write_bytes(gzip.compress(JOURNAL.read_bytes()))
    runner = CliRunner()
    base = ["explain", str(sample_tree()), "--no-cache", "--runs"]
    from_file = runner.invoke(cli, [*base, "--log", str(packed)])
    from_stdin = runner.invoke(cli, [*base, "--log", "-"], input=JOURNAL.read_bytes())
    assert from_file.exit_code == 0, from_file.output
    assert from_file.stdout == from_stdin.stdout and "died (line 118)" in from_file.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "mem_fraction_static=abc"], "--set mem_fraction_static=abc: not a number"),
        (["--set", "no_such_input=1"], "--set no_such_input: not an input"),
        (["--run", "9"], "--run 9: the log has 3 start-up(s)"),
        (["--set", "=1"], "--set expects NAME=VALUE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(JOURNAL), *args])
    assert out.exit_code == 2
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "not a text log"),
        (b"hello\n", "no SGLang start-up"),
        (b"\x1f\x8bxx", "gzip"),
        # a server at --log-level warning: SGLang's verdict is named, and why no start-up's lines are there
        (
            b"[2026-01-21 15:44:37] max_total_tokens=20480 is larger than the profiled value 10648. Use the profiled"
            b" value instead.\n",
            "line 1 is SGLang's verdict 'max_total_tokens=20480 is larger than the profiled value 10648",
        ),
    ],
)
def test_unreadable_logs_are_one_line_and_exit_2(tmp_path: Path, content: bytes, message: str) -> None:
    log = tmp_path / "log"
    log.write_bytes(content)
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    assert out.exit_code == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1


_SHORT = re.compile(
    r"^(?P<when>[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d) (?P<host>\S+) (?P<name>[\w.-]+)\[(?P<pid>\d+)\]: (?P<message>.*)$"
)


def _journal_json(text: str) -> str:
    """As ``journalctl -o json`` writes it (one record a line; a message that is not UTF-8 as a list of bytes)."""
    import calendar
    import json
    import time

    records = []
    for line in text.splitlines():
        part = _SHORT.match(line)
        assert part is not None, line
        moment = calendar.timegm(time.strptime(f"2026 {part['when']}", "%Y %b %d %H:%M:%S"))
        message: object = part["message"]
        if "Init torch distributed begin" in part["message"]:
            message = list(part["message"].encode())
        records.append(
            {"__REALTIME_TIMESTAMP": str(moment * 1_000_000 + 123), "_HOSTNAME": part["host"],
             "SYSLOG_IDENTIFIER": part["name"], "_PID": part["pid"], "MESSAGE": message, "PRIORITY": "6"}
        )  # fmt: skip
    return "\n".join(json.dumps(r) for r in records)


def _docker_json(text: str) -> str:
    """As docker's json-file driver stores it: long lines cut into 16 KB records without their newline."""
    import json

    records = []
    for line in _plain(text).splitlines():
        pieces = [line[i : i + 16384] for i in range(0, len(line), 16384)] or [""]
        for index, piece in enumerate(pieces):
            end = "\n" if index == len(pieces) - 1 else ""
            records.append({"log": piece + end, "stream": "stderr", "time": "2026-11-02T10:00:01.123456789Z"})
    return "\n".join(json.dumps(r) for r in records)


@pytest.mark.parametrize("form", [_journal_json, _docker_json], ids=["journal-json", "docker-json-file"])
def test_json_logs_give_the_same_start_ups_as_their_text(form: object) -> None:
    text = JOURNAL.read_text()
    source = _plain(text) if form is _docker_json else text
    assert [(r.complete, r.started, r.ended, r.server_args, r.target, r.model_types) for r in split(form(text))] == [  # type: ignore[operator]
        (r.complete, r.started, r.ended, r.server_args, r.target, r.model_types) for r in split(source)
    ]


def test_a_long_line_cut_by_docker_is_joined_again() -> None:
    from sgtrace.run.lines import lines

    long = "server_args=ServerArgs(" + ", ".join(f"a{i}={i}" for i in range(4000)) + ")"
    assert len(long) > 2 * 16384
    cut = _docker_json(long + "\nnext")
    assert cut.count("\n") == 3  # three pieces and the next line
    assert [(line.number, line.text) for line in lines(cut)] == [(1, long), (4, "next")]


_KEYS = st.sampled_from(["log", "time", "MESSAGE", "__REALTIME_TIMESTAMP", "_HOSTNAME", "SYSLOG_IDENTIFIER", "_PID"])
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(_JSONISH.map(json.dumps) | st.text(max_size=40), max_size=12))
def test_any_json_lines_are_read_without_a_crash(raw: list[str]) -> None:
    from sgtrace.run.lines import lines

    text = "\n".join(raw)
    found = lines(text)
    assert [line.number for line in found] == sorted({line.number for line in found})
    assert all(1 <= line.number <= len(text.splitlines()) for line in found)
    split(text)


_STAMP = "[2025-05-30 16:00:{:02d}{}] "


def _started(*after: str) -> str:
    """One start-up that got ready on one GPU, then *after* (lines of its run)."""
    lines = [
        "server_args=ServerArgs(model_path='m', mem_fraction_static=0.8, speculative_algorithm=None)",
        "Load weight begin. avail mem=78.5 GB",
        "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=77.5 GB, mem usage=1.00 GB.",
        "KV Cache is allocated. #tokens: 20480, K size: 0.12 GB, V size: 0.12 GB",
        "Memory pool end. avail mem=62.0 GB",
        "max_total_num_tokens=20480, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4097, "
        "context_len=32768",
        "The server is fired up and ready to roll!",
        *after,
    ]
    return "\n".join(_STAMP.format(i, "" if i in (0, 6) else " TP0") + text for i, text in enumerate(lines))


def test_a_retraction_after_ready_is_no_death() -> None:
    """'Decode out of memory happened. #retracted_reqs' (0.4.x): the scheduler retracts requests and goes on."""
    runs = split(_started("Decode out of memory happened. #retracted_reqs: 22, #new_token_ratio: 0.6017 -> 0.9219"))
    assert [r.ended for r in runs] == ["ready"]
    died = split(_started("Decode out of memory. Try to lower your batch size."))
    assert [r.ended for r in died] == ["ready, then died (line 8)"]


def test_a_process_that_exits_before_the_server_is_up_is_a_death_and_after_it_a_stop() -> None:
    """SGLang's 'Child process unexpectedly failed with an exit code 9' (a SIGKILL, often the OOM killer's) before
    the server is up: the start-up died there, not 'unfinished'. After it is up (a notebook killing its server):
    it got ready; a crash then prints a traceback of its own."""
    killed = "Child process unexpectedly failed with an exit code 9. pid=1723640"
    lines = _started().splitlines()
    (early,) = split("\n".join([*lines[:4], "[2025-05-30 16:00:04] " + killed]))
    assert early.ended == "died (line 5)" and early.death == (5, killed)
    crashed = "Subprocess scheduler_0 (pid=4242) crashed with exit code -9. Triggering SIGQUIT for cleanup..."
    (watched,) = split("\n".join([*lines[:4], "[2025-05-30 16:00:04] " + crashed]))
    assert watched.ended == "died (line 5)"
    assert [r.ended for r in split(_started(killed))] == ["ready"]


def test_a_server_args_line_cut_short_gives_the_fields_it_holds_whole_and_says_so() -> None:
    """A paste's limit or a terminal's wrap cuts the line: its last field may be cut too (0.88 cut to 0.8), so it
    is left out, and the run says the fields after it are the release's defaults, not the log's."""
    whole = "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, tp_size=2, random_seed=1)"
    (run,) = split(whole)
    assert run.server_args == {"model_path": "m", "mem_fraction_static": 0.88, "tp_size": 2, "random_seed": 1}
    assert run.cautions == ()
    (cut,) = split(whole[: whole.index("random_seed") + len("random_seed=")] + "\nLoad weight begin. avail mem=78.5 GB")
    assert cut.server_args == {"model_path": "m", "mem_fraction_static": 0.88, "tp_size": 2}
    assert cut.cautions and "cut short after tp_size" in cut.cautions[0]
    (early,) = split("[2025-11-01 16:50:30] server_args=ServerArgs(model_path='/m', mem_fraction_static=0.7")
    assert early.server_args == {"model_path": "/m"} and "after model_path" in early.cautions[0]


def test_a_launch_command_no_start_up_line_follows_begins_none() -> None:
    """A test harness prints the command it ran after the server died (a real Ascend CI log): no start-up of its
    own, which would be explained as the latest one with nothing in it; the start-up before says so. A command
    its start-up's lines follow still begins one."""
    lines = _started().splitlines()
    command = "command=sglang serve --model-path m --mem-fraction-static 0.8"
    (run,) = split("\n".join([*lines[:4], "[2025-05-30 16:00:04] Traceback (most recent call last):", command]))
    assert run.ended == "died (line 5)" and "line 6 is a launch command that no line" in run.doubts[-1]
    again = split("\n".join([*lines[:4], command, *lines]))
    assert len(again) == 2 and again[1].begun_by == "a launch command"
    assert split(command)[0].command  # a command alone is still a start-up: there is nothing else


def test_a_traceback_no_prefix_ties_to_the_server_after_it_is_up_is_no_death() -> None:
    """A CI log holds the test's own output: its failed assertion's traceback, after the server got ready, has no
    prefix (real Ascend CI logs). The server's own crash is stamped and still ends the start-up."""
    client = ["Traceback (most recent call last):", '  File "test_utils.py", line 1705, in <lambda>',
              "AssertionError: 79.59 not less than or equal to 45.9"]  # fmt: skip
    assert [r.ended for r in split("\n".join([_started(), *client]))] == ["ready"]
    crashed = split(
        _started("[2025-05-30 16:01:00 TP0] Scheduler hit an exception: Traceback (most recent call last):")
    )
    assert [r.ended for r in crashed] == ["ready, then died (line 8)"]
    before = _started().splitlines()[:4] + client
    assert [r.ended for r in split("\n".join(before))] == ["died (line 5)"]  # before it is up: any traceback


def _ranked(stamp: str, lines: list[tuple[str, str]]) -> str:
    """A log of (rank, message) lines, each stamped a second after the one before."""
    return "\n".join(stamp.format(i, rank) + line for i, (rank, line) in enumerate(lines))


def test_the_memory_bar_names_the_rank_its_figures_after_the_weights_are_of() -> None:
    """Two ranks free the same before the weights (TP0's line first); TP1 has less after them: the bar's weights
    are TP1's, and so is its name (a real AMD log's bar said TP0)."""
    stamp = "[2026-05-25 17:30:{:02d} {}] "
    text = _ranked(
        stamp,
        [
            ("TP0", "Load weight begin. avail mem=31.49 GB"),
            ("TP1", "Load weight begin. avail mem=31.49 GB"),
            ("TP1", "Load weight end. type=Qwen2ForCausalLM, avail mem=16.98 GB, mem usage=14.51 GB."),
            ("TP0", "Load weight end. type=Qwen2ForCausalLM, avail mem=17.04 GB, mem usage=14.45 GB."),
        ],
    )
    (run,) = split(text)
    assert run.target["weights_gb"].value == 14.51
    assert ledger_lines(run, ledger(run))[0] == "memory of one GPU (TP1, the one with the least free):"


def test_the_memory_bar_of_a_fragment_names_the_rank_of_each_figure(tmp_path: Path) -> None:
    """A real TP8 fragment (no 'Load weight end', cut at the graphs' capture): the free memory before the weights,
    the pool and what is left are three ranks' lines, and none is known to be the rank with the least free. The
    bar says whose each figure is, where it named one rank 'the one with the least free' and cited the others'
    lines as its own; the answer does not call the cut start-up complete, and its tokens are shown whole."""
    stamp = "[2025-10-16 09:06:{:02d} {}] "
    text = _ranked(
        stamp,
        [
            ("TP5", "Load weight begin. avail mem=137.29 GB"),
            ("TP0", "Load weight begin. avail mem=137.34 GB"),
            ("TP1", "KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB"),
            ("TP1", "Memory pool end. avail mem=11.87 GB"),
            ("TP0", "Capture cuda graph begin. This can take up to several minutes. avail mem=11.82 GB"),
        ],
    )
    (run,) = split(text)
    lines = ledger_lines(run, ledger(run))
    assert lines[0] == "memory of one GPU (figures of TP5, TP1, TP0: the log shows no rank's whole start-up):"
    assert [line.split("GB")[-1].strip() for line in lines[2:]] == [
        "line 1 (TP5)", "line 3 (TP1)", "", "line 5 (TP0)"
    ]  # fmt: skip
    log = tmp_path / "fragment.log"
    log.write_text(text + "\n")
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    assert "Start-up 1 of 1 (the latest to size its pool; not ready in the log):" in " ".join(out.output.split())
    assert "  kv_tokens = 2795207\n" in out.output  # whole, where it was 2.79521e+06
    ready = text + "\n" + stamp.format(30, "TP0") + "The server is fired up and ready to roll!\n"
    log.write_text(ready)
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log), "--format", "json"])
    assert [row["rank"] for row in json.loads(out.stdout)["ledger"]] == ["TP5", "TP1", "", "TP0"]


@pytest.mark.parametrize("minutes", [5, 15])
def test_a_long_load_whose_begin_and_end_are_logged_is_one_start_up(minutes: int) -> None:
    """A 'Load weight end' without elapsed= (real Ascend logs of 0.5.8) minutes after its 'Load weight begin':
    the time between is the load the two lines show, not a gap the log leaves unshown (no doubt, and past ten
    minutes no second start-up)."""
    begin = "[2025-12-25 13:04:01 TP0] Load weight begin. avail mem=60.86 GB"
    end = (
        f"[2025-12-25 13:{4 + minutes:02d}:13 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=27.02 GB,"
        " mem usage=33.84 GB."
    )
    pool = f"[2025-12-25 13:{4 + minutes:02d}:20 TP0] KV Cache is allocated. #tokens: 179584, KV size: 11.75 GB"
    args = "[2025-12-25 13:03:30] server_args=ServerArgs(model_path='m', mem_fraction_static=0.8)"
    (run,) = split("\n".join([args, begin, end, pool]))
    assert run.doubts == () and run.target["weights_gb"].value == 33.84


def test_free_memory_after_ready_is_not_what_the_start_up_left() -> None:
    """An update of the weights (or a LoRA's load) prints the memory free then: not the start-up's."""
    runs = split(_started("Update weights begin. avail mem=4.97 GB"))
    assert len(runs) == 1 and (runs[0].left is None or runs[0].left.value == 62.0)


def test_memory_freed_while_the_weights_loaded_is_no_weights_figure() -> None:
    """A negative mem usage: another process freed memory while the weights loaded (a notebook's last server
    exiting): the weights are unknown, the run says why, and the ledger shows no negative or zero weights row."""
    text = _started().replace("avail mem=77.5 GB, mem usage=1.00 GB", "avail mem=85.14 GB, mem usage=-6.64 GB")
    (run,) = split(text)
    assert "weights_gb" not in run.target
    assert run.cautions and "free grew by 6.64 GB" in run.cautions[0]
    assert [row.item for row in ledger(run)][:2] == ["free before the weights", "KV pool"]
    draft = [
        "[2025-05-30 16:00:05 TP0] Load weight begin. avail mem=55.16 GB",
        "[2025-05-30 16:00:05 TP0] Load weight end. type=LlamaForCausalLMEagle, dtype=torch.float16, avail mem=46.17"
        " GB, mem usage=-29.47 GB.",
    ]
    lines = _started().replace("speculative_algorithm=None", "speculative_algorithm='EAGLE'").splitlines()
    (run,) = split("\n".join([*lines[:5], *draft, *lines[5:]]))
    assert "weights_gb" not in run.draft and "draft's weights loaded" in run.cautions[0]


def test_weights_a_line_does_not_print_are_the_free_memory_it_took() -> None:
    """0.4.2's 'Load weight end' has no mem usage: the ledger's weights are the free memory before less after."""
    text = _started().replace(", mem usage=1.00 GB.", "")
    (run,) = split(text)
    assert "weights_gb" not in run.target
    rows = {row.item: row.gb for row in ledger(run)}
    assert rows["weights"] == 1.0


def test_the_runs_table_shows_the_fraction_sglang_chose(tmp_path: Path) -> None:
    """A multimodal model's run: SGLang lowers the fraction itself; the table shows the one the run used."""
    log = tmp_path / "log"
    text = _started().replace(
        "\n", "\n[2025-05-30 16:00:00 TP0] Automatically reduce --mem-fraction-static to 0.76 because this is a"
        " multimodal model.\n", 1
    )  # fmt: skip
    log.write_text(text)
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log), "--runs"])
    assert out.exit_code == 0, out.output
    row = out.stdout.splitlines()[2].split()
    assert row[:5] == ["*", "1", "2025-05-30", "16:00:00", "0.76"] and row[5] == "1.00"


def test_a_warning_that_quotes_the_launch_command_begins_no_start_up() -> None:
    """Newer releases warn on every launch that 'python -m sglang.launch_server' is still supported, with an
    example of 'sglang serve' holding placeholders: neither is a launch command (each began a start-up)."""
    warning = [
        "/x/python/sglang/launch_server.py:51: UserWarning: 'python -m sglang.launch_server' is still supported, but"
        " 'sglang serve' is the recommended entrypoint.",
        "  Example: sglang serve --model-path <model> [options]",
    ]
    runs = split("\n".join([*warning, _started(), *warning]))
    assert [(r.first_line, r.ended) for r in runs] == [(3, "ready")]
    (launched,) = split("python3 -m sglang.launch_server --model-path m --tp 2\n" + _started())
    assert launched.command == "--model-path m --tp 2"


def test_a_draft_loading_with_more_memory_free_than_its_target_left_is_the_draft() -> None:
    """server_args say speculative decoding is on: a load after the target's pool is the draft's even when the
    free memory grew meanwhile (a notebook's previous server exiting); a restart would log its server_args first."""
    lines = _started().replace("speculative_algorithm=None", "speculative_algorithm='EAGLE'").splitlines()
    draft = "[2025-05-30 16:00:05 TP0] Load weight begin. avail mem=70.16 GB"
    runs = split("\n".join([*lines[:5], draft, *lines[5:]]))
    assert [(r.ended, r.draft["avail_before_weights_gb"].value) for r in runs] == [("ready", 70.16)]


def test_a_start_up_that_answered_its_warmup_was_up_though_its_ready_line_is_not_shown() -> None:
    """A notebook's output may miss the ready line (a real docs-CI notebook: 'Uvicorn running', the warmup's
    'POST /generate' answered, requests served, then the notebook kills its server with exit code 9): the
    warmup answered from the machine itself is the evidence it was up, so the kill is a stop, not a death. Before
    its pool is sized, or from another machine (a client's request), such a line says nothing of this start-up."""
    lines = _started().splitlines()[:-1]  # no ready line
    warmup = '[2025-05-30 16:00:07] INFO:     127.0.0.1:52006 - "POST /generate HTTP/1.1" 200 OK'
    killed = "[2025-05-30 16:00:09] Child process unexpectedly failed with an exit code 9. pid=3018242"
    (run,) = split("\n".join([*lines, warmup, killed]))
    assert (run.ended, run.complete, run.death) == ("ready", True, None)
    assert any("ready line is not in the log" in c and "(line 7)" in c for c in run.cautions)
    embedding = warmup.replace("/generate", "/encode")  # an embedding model's warmup
    assert split("\n".join([*lines, embedding, killed]))[0].ended == "ready"
    (quiet,) = split("\n".join([*lines, warmup]))
    assert quiet.ended == "ready"
    chat = warmup.replace("/generate", "/v1/chat/completions")  # a client's traffic, whatever its address
    assert split("\n".join([*lines, chat, killed]))[0].ended == "died (line 8)"
    crashed = "[2025-05-30 16:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):"
    assert split("\n".join([*lines, warmup, crashed]))[0].ended == "ready, then died (line 8)"
    client = warmup.replace("127.0.0.1", "10.20.1.7")
    assert split("\n".join([*lines, client, killed]))[0].ended == "died (line 8)"
    failed = warmup.replace(" 200 OK", " 500 Internal Server Error")
    assert split("\n".join([*lines, failed, killed]))[0].ended == "died (line 8)"
    before_pool = split("\n".join([*lines[:3], warmup, killed]))
    assert [r.ended for r in before_pool] == ["died (line 5)"]


def test_a_server_stopped_by_its_http_server_ending_did_not_die_of_the_tracebacks_that_follow() -> None:
    """A Colab notebook's server stopped with Ctrl-C (a real log): uvicorn's 'Shutting down', then the stamped
    'ERROR: Traceback' of the KeyboardInterrupt: ready, then stopped. Before the server is up, the line (another
    server's, maybe) stops nothing; a crash before the stop is still a death."""
    stopped = "INFO:     Shutting down"
    ending = "ERROR:    Traceback (most recent call last):"
    assert [r.ended for r in split(_started(stopped, ending))] == ["ready, then stopped"]
    crashed = "Scheduler hit an exception: Traceback (most recent call last):"
    assert [r.ended for r in split(_started(crashed, stopped))] == ["ready, then died (line 8)"]
    loading = _started().splitlines()[:3]
    stamp = "[2025-05-30 16:00:04] "
    assert [r.ended for r in split("\n".join([*loading, stamp + stopped, stamp + ending]))] == ["died (line 5)"]


def test_a_bare_traceback_before_the_first_step_is_not_the_death_of_a_start_up_that_goes_on() -> None:
    """A real docs-CI notebook: the server's arguments, then the previous cell's client timing out (a traceback
    with no prefix, in the same stream), then the server's own steps: one start-up, whose arguments (a capped
    pool) are its own, not a dead start-up and a second one without arguments. A traceback after a step, or a
    stamped one, is still a death; a new launch shows its arguments first."""
    lines = _started().splitlines()
    later = [line.replace("16:00:", "16:01:") for line in lines]  # the steps a minute on: past a death's trail
    client = ["Traceback (most recent call last):", "httpx.ReadTimeout: The read operation timed out"]
    (run,) = split("\n".join([lines[0], *client, *later[1:]]))
    assert run.ended == "ready" and run.server_args["mem_fraction_static"] == 0.8
    assert any("line 2 came before its first step" in caution for caution in run.cautions)
    after_step = split("\n".join([*lines[:2], *client, *later[2:]]))
    assert [r.ended for r in after_step] == ["died (line 3)", "ready"]
    stamped = split("\n".join([lines[0], "[2025-05-30 16:00:00] " + client[0], *later[1:]]))
    assert [r.ended for r in stamped] == ["died (line 2)", "ready"]


def test_sglangs_own_sigterm_line_stops_the_start_up_up_or_not() -> None:
    """'SIGTERM received. ... Draining requests and shutting down...' (real AMD CI logs: the CI's timeout on a hung
    warmup; a server stopped after its benchmark): stopped, and what its processes print as they end is no death."""
    term = "SIGTERM received. signum=None frame=None. Draining requests and shutting down..."
    ending = "ERROR:    Traceback (most recent call last):"
    assert [r.ended for r in split(_started(term, ending))] == ["ready, then stopped"]
    hung = _started().splitlines()[:-1] + ["[2025-05-30 16:08:00] " + term, "[2025-05-30 16:08:01] " + ending]
    assert [r.ended for r in split("\n".join(hung))] == ["stopped"]


def test_a_lone_scheduler_line_says_what_it_left(tmp_path: Path) -> None:
    """A paste of the scheduler's line alone (a real issue's title, sgl-project/sglang#29575): its free memory is
    said in the answer, where no ledger can hold it."""
    log = tmp_path / "one.log"
    log.write_text(
        "[2026-06-28 15:16:45] max_total_num_tokens=2086558, chunked_prefill_size=8192, max_prefill_tokens=16384,"
        " max_running_requests=33, context_len=256000, available_gpu_mem=17.22 GB\n"
    )
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    assert out.exit_code == 2 and "missing input available_gpu_memory" in out.output  # the formula cannot run
    assert "17.22 GB is left unused at the end (line 1)." in " ".join(out.output.split())


def test_a_log_with_no_kv_line_draws_its_pools_and_what_they_left(tmp_path: Path) -> None:
    """0.4.2's docs notebook: no 'KV Cache is allocated' line, and its graphs' end prints no free memory. The bar
    was the weights alone across all 78 columns; now the weights, the pools together and what they left add up
    to the memory free before the weights. The answer says the log gives the pool's tokens, not its size."""
    stamp = "[2025-01-09 21:45:{:02d} TP0] "
    text = "\n".join(
        stamp.format(i) + line
        for i, line in enumerate([
            "Load weight begin. avail mem=78.81 GB",
            "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
            "Memory pool end. avail mem=8.34 GB",
            "Capture cuda graph begin. This can take up to several minutes.",
            "Capture cuda graph end. Time elapsed: 5.93 s",
            "max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049, context_len=131072",
        ])
    )  # fmt: skip
    (run,) = split(text)
    rows = ledger(run)
    assert [(row.item, row.gb, row.line) for row in rows] == [
        ("free before the weights", 78.81, 1), ("weights", 15.09, 2), ("pools", 55.38, 3),
        ("free after the pools", 8.34, 3),
    ]  # fmt: skip
    assert bar(rows) == "|" + "W" * 15 + "P" * 55 + "," * 8 + "|"
    (cut,) = split("\n".join(text.splitlines()[:2]))  # cut after the weights: the rest is not known
    assert [(row.item, row.gb) for row in ledger(cut)][1:] == [("weights", 15.09), ("not known", 63.72)]
    log = tmp_path / "notebook.log"
    log.write_text("[2025-01-09 21:44:58] server_args=ServerArgs(model_path='m', mem_fraction_static=0.88)\n" + text)
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    assert "the log gives its 444500 tokens, not its size" in " ".join(out.output.split())


def test_a_start_up_cut_during_its_capture_says_its_last_free_memory_is_not_its_end(tmp_path: Path) -> None:
    """A real RTX 3090 paste cut as the graphs' capture began (kvcache-ai/ktransformers#1971): the memory free then
    is the last figure the log shows, not what the start-up left unused at its end."""
    stamp = "[2026-05-02 23:01:{:02d}] "
    lines = [
        "Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=17.29 GB, mem usage=2.91 GB.",
        "KV Cache is allocated. #tokens: 122420, K size: 5.60 GB, V size: 5.60 GB",
        "Memory pool end. avail mem=5.97 GB",
        "Capture cuda graph begin. This can take up to several minutes. avail mem=5.48 GB",
    ]
    log = tmp_path / "cut.log"
    log.write_text("\n".join(stamp.format(20 + i) + line for i, line in enumerate(lines)) + "\n")
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    said = " ".join(out.output.split())
    assert "5.48 GB was free at the last figure the log shows (line 4); the log ends before the start-up did." in said
    assert "left unused" not in said
    log.write_text(log.read_text() + stamp.format(30) + "The server is fired up and ready to roll!\n")
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    assert "5.48 GB is left unused at the end (line 4)." in " ".join(out.output.split())
    begun = stamp.format(19) + "Load weight begin. avail mem=20.20 GB\n"  # the ledger's last row says the same
    (cut,) = split(begun + "\n".join(log.read_text().splitlines()[:-1]))
    (ready,) = split(begun + log.read_text())
    assert [ledger(run)[-1].item for run in (cut, ready)] == ["free at its last figure", "left at the end"]


def test_weights_the_formula_takes_from_two_rounded_figures_are_not_called_the_logs_own(tmp_path: Path) -> None:
    """A real MI355X paste (sgl-project/sglang#18262): 287.20 free before the weights less 274.42 after is 12.78,
    where its 'mem usage' says 12.79; the answer called 12.78 'of weights' beside a table that said 12.79."""
    log = tmp_path / "mi355x.log"
    lines = [
        "server_args=ServerArgs(model_path='m', mem_fraction_static=0.775, speculative_algorithm=None)",
        "Load weight begin. avail mem=287.20 GB",
        "Load weight end. elapsed=1.75 s, type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=274.42 GB,"
        " mem usage=12.79 GB.",
        "KV Cache is allocated. #tokens: 21985288, K size: 104.83 GB, V size: 104.83 GB",
    ]
    log.write_text("\n".join(f"[2026-02-04 18:14:1{i}] {line}" for i, line in enumerate(lines)) + "\n")
    out = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--no-cache", "--log", str(log)])
    said = " ".join(out.output.split())
    assert "minus 12.78 GB in use before the pool (the weights, 12.79 GB as the log rounds them) = 209.80 GB" in said


def test_a_draft_loaded_before_the_targets_pool_is_in_the_ledger_where_it_took_its_memory() -> None:
    """A real DGX Spark run (sostrowsk/dgx-spark-local-llm, sglang-versuch2.log): the draft loads between the
    target's weights and its pool. The target's other pool memory was taken from the free memory before the draft
    (3.65 GB, not 0.76) and the draft's from before the target's pool (6.11, not 0.04): rows of 123.54 GB for
    114.99 free. Now every row is taken from the free memory just before it, and the rows add up."""
    lines = [
        "Load weight begin. avail mem=114.99 GB",
        "Load weight end. elapsed=548.90 s, type=LagunaForCausalLM, quant=compressed-tensors, avail mem=22.03 GB,"
        " mem usage=92.96 GB.",
        "Load weight begin. avail mem=21.89 GB",
        "Load weight end. elapsed=12.63 s, type=DFlashLagunaForCausalLM, avail mem=19.14 GB, mem usage=2.75 GB.",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 27277, K size: 1.87 GB, V size: 1.87 GB",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 34097, K size: 0.78 GB, V size: 0.78 GB",
        "SWAKVPool mem usage: 5.31 GB, swa size: 27277, full size: 34097",
        "Memory pool end. avail mem=13.07 GB",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 34097, K size: 0.39 GB, V size: 0.39 GB",
        "Memory pool end. avail mem=12.25 GB",
    ]
    text = "\n".join(f"[2026-08-01 22:15:{i:02d}] {line}" for i, line in enumerate(lines))
    (run,) = split(text)
    assert run.draft_first
    rows = ledger(run)
    assert [(row.item, row.gb) for row in rows[1:]] == [
        ("weights", 92.96), ("draft weights", 2.75), ("KV pool", 5.31), ("other pool memory", 0.76),
        ("draft KV pool", 0.78), ("draft other pool memory", 0.04), ("not shown in the log", 0.14),
        ("free after the pools", 12.25),
    ]  # fmt: skip
    assert round(sum(row.gb for row in rows[1:]), 2) == rows[0].gb == 114.99


_MAMBA = "Mamba Cache is allocated. max_mamba_cache_size: 40, conv_state size: 0.11GB, ssm_state size: 5.77GB"


def test_a_hybrid_models_state_pool_is_its_own_row_and_tied_ranks_give_the_bars_rank() -> None:
    """A real TP2 RDNA4 run (mattbucci/2x-R9700-RDNA4-GFX1201-sglang-inference, Qwen3.6-27B-AWQ.log): the Mamba
    state was folded into 'other pool memory' (5.94 GB of 6.00), and with both ranks' figures equal the bar said
    TP1 while its rows cited TP0's lines, but one row TP1's."""
    stamp = "[2026-05-25 17:43:{:02d} {}] "
    text = _ranked(
        stamp,
        [
            ("TP0", "Load weight begin. avail mem=31.49 GB"),
            ("TP1", "Load weight begin. avail mem=31.49 GB"),
            ("TP1", "Load weight end. type=Qwen3_5ForConditionalGeneration, avail mem=17.00 GB, mem usage=14.49 GB."),
            ("TP0", "Load weight end. type=Qwen3_5ForConditionalGeneration, avail mem=17.00 GB, mem usage=14.49 GB."),
            ("TP1", _MAMBA),
            ("TP0", _MAMBA),
            ("TP1", "KV Cache is allocated. #tokens: 422310, K size: 3.22 GB, V size: 3.22 GB"),
            ("TP1", "Memory pool end. avail mem=4.62 GB"),
            ("TP0", "KV Cache is allocated. #tokens: 422310, K size: 3.22 GB, V size: 3.22 GB"),
            ("TP0", "Memory pool end. avail mem=4.62 GB"),
        ],
    )
    (run,) = split(text)
    rows = ledger(run)
    assert [(row.item, row.gb, row.rank) for row in rows[1:5]] == [
        ("weights", 14.49, "TP0"), ("KV pool", 6.44, "TP0"), ("Mamba state", 5.88, "TP0"),
        ("other pool memory", 0.06, "TP0"),
    ]  # fmt: skip
    assert ledger_lines(run, rows)[0] == "memory of one GPU (TP0, the one with the least free):"


_REFUSAL = (
    "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88. Raise"
    " --mem-fraction-static above 0.913 (minimum viable = 1 - available/pre = 0.9122). If using speculative decoding,"
    " draft weights are now counted."
)
_DIED_AT_WEIGHTS = [
    "[2026-02-27 16:20:12 TP0] Load weight begin. avail mem=94.04 GB",
    "[2026-02-27 16:24:15 TP0] Load weight end. elapsed=243.37 s, type=DeepseekV3ForCausalLM, dtype=torch.bfloat16,"
    " avail mem=21.71 GB, mem usage=72.33 GB.",
    "[2026-02-27 16:24:16 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/sgl-workspace/sglang/python/sglang/srt/mem_cache/kv_cache_configurator.py", line 3051, in profile',
    "    raise ValueError(",
]


#: A wrap is known by its head: the line holds the message's first words (messages.WRAP_HEAD).
_HEAD = len("ValueError: Loaded weights leave")


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(
    cuts=st.lists(st.integers(_HEAD, len(_REFUSAL) - 1), min_size=1, max_size=2, unique=True), at_spaces=st.booleans()
)
def test_sglangs_refusal_wrapped_over_lines_is_its_death_with_its_figures(cuts: list[int], at_spaces: bool) -> None:
    """Issue 54: the refusal printed over two or three lines, cut anywhere after its first words (a terminal's
    wrap: the pieces join as they are) or at spaces (an editor's or a page's: the space is lost), is read whole:
    the start-up died of it, with the fraction it ran and the one SGLang asks for."""
    if at_spaces:
        spaces = [i for i, c in enumerate(_REFUSAL) if c == " "]
        cuts = [min(spaces, key=lambda s: abs(s - cut)) for cut in cuts]
    pieces, last = [], 0
    for cut in sorted(set(cuts)):
        pieces.append(_REFUSAL[last:cut])
        last = cut + 1 if at_spaces else cut
    pieces.append(_REFUSAL[last:])
    assume(all(piece.strip() for piece in pieces))  # a blank line ends a wrap
    text = "\n".join([*_DIED_AT_WEIGHTS, *pieces])
    (run,) = split(text)
    assert split(relevant_lines(text.encode())) == [run]  # the stream's bytes, as a file is read
    assert run.end.died and run.death is not None and "leave no GPU memory" in run.death[1], (pieces, run.death)
    assert {name: figure.value for name, figure in run.verdicts.items()} == {
        "mem_fraction_static": 0.88,
        "fraction_needed": 0.913,
    }, pieces


def test_sglangs_wrapped_refusal_alone_is_a_start_up_that_died_of_it_in_text_and_json(tmp_path: Path) -> None:
    """A log of the traceback and the refusal, no line of the start-up before them: the refusal names the fraction
    the start-up ran, so it is one, dead of it; explain gives its fraction and SGLang's advice, and the inputs the
    lines lack (exit 2), in JSON too."""
    log = tmp_path / "refusal.log"
    log.write_text("\n".join([*_DIED_AT_WEIGHTS[2:], _REFUSAL[:60], _REFUSAL[60:130], _REFUSAL[130:]]) + "\n")
    (run,) = split(log.read_text())
    assert run.end.died and run.death is not None and run.death[0] == 4
    assert facts(run)["mem_fraction_static"] == 0.88
    text = CliRunner().invoke(cli, ["explain", "--log", str(log), str(sample_tree())])
    assert text.exit_code == 2
    assert "It died at line 4: ValueError: Loaded weights leave no GPU memory" in " ".join(text.stdout.split())
    assert "a mem_fraction_static above 0.913 leaves memory for the pool" in " ".join(text.stdout.split())
    assert "sgtrace: missing input available_gpu_memory" in text.stderr
    as_json = CliRunner().invoke(cli, ["explain", "--log", str(log), "--format", "json", str(sample_tree())])
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout)["inputs"] == {"mem_fraction_static": 0.88}


def _error_schema() -> dict[str, object]:
    """The schema docs/explain.md gives for an exit without an answer (its one JSON block after the heading)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "explain.md").read_text(encoding="utf-8")
    section = text.split("## When there is no answer", 1)[1]
    return json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("content", "args"),
    [
        ("hello\n", []),
        ("[2026-03-01 10:00:00] Scheduler hit an exception: Traceback (most recent call last):\n", []),
        ("\x00\x01\x02" * 5000, []),
        (JOURNAL.read_text(), ["--set", "mem_fraction_static=7"]),
        (JOURNAL.read_text(), ["--run", "9"]),
    ],
    ids=["no-start-up", "a-death-alone", "binary", "bad-set", "no-such-run"],
)
def test_every_exit_2_without_an_answer_is_json_the_docs_schema_holds(
    tmp_path: Path, content: str, args: list[str]
) -> None:
    import jsonschema

    log = tmp_path / "server.log"
    log.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["explain", "--log", str(log), "--format", "json", *args, str(sample_tree())])
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)
    jsonschema.Draft202012Validator(_error_schema()).validate(data)
    assert result.stderr.strip().splitlines()[-1] == f"sgtrace: error: {data['error']['message']}"
    if "start-up" in data["error"]["message"] and "no SGLang start-up" in data["error"]["message"]:
        assert data["error"]["found"]["start_ups"] == 0 and data["error"]["missing"]


def test_a_death_alone_is_listed_with_what_sglang_said_in_the_errors_json(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(_DIED_AT_WEIGHTS[2:]) + "\n")
    result = CliRunner().invoke(cli, ["explain", "--log", str(log), "--format", "json", str(sample_tree())])
    said = json.loads(result.stdout)["error"]["found"]["sglang_said"]
    assert [(s["line"], s["kind"]) for s in said] == [(1, "death")]
