"""Property tests of the doors: a log, a baseline, a launch command, server info and a model's config.json, the
options (``--set``, the sizes and bounds) and the configuration file.

Each generates what a door may be handed (numbers of every shape, JSON deep and wide with values of the wrong
type, long and repeated lines and options, cut and compressed records, NUL bytes and invalid UTF-8, files past their
bound) and runs the command in this process through click's runner on a small tree (a ServerArgs with options, and a
budget formula; a log is read against the sample's formula too, whose figures are SGLang's). The property: exit 0, 1
or 2, never an exception or an internal error (3); an exit 2 says why in one line, the only line on stderr
(``sgtrace: error: ...``, or explain's ``sgtrace: missing input NAME: ...; missing input NAME: ...``), and under
``--format json`` the same message as JSON on stdout; each example within 2 s of CPU and 300 MiB more than the
process held before it. The default profile runs 50 examples a test (each runs a command), the slow one
(``-m slow``) 10^4 (tests/examples.py).
"""

from __future__ import annotations

import gc
import gzip
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sgtrace.bounded import MAX_COMMAND_BYTES, MAX_JSON_BYTES, MAX_JSON_DEPTH
from sgtrace.cli import cli, main
from sgtrace.cli.base import MAX_DEPTH
from sgtrace.run.lines import MAX_LINE
from sgtrace.run.messages import MESSAGES
from sgtrace.sources import sample_tree
from tests.examples import DOORS, PROFILES, TALLIES

_SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

#: A small tree: a ServerArgs with options (an alias, a flag), and a budget formula with a split and a cap.
TREE = {
    "server_args.py": """\
import argparse
from dataclasses import dataclass
from typing import Optional


@dataclass
class ServerArgs:
    model_path: str = "m"
    mem_fraction_static: Optional[float] = None
    max_total_tokens: Optional[int] = None
    tp_size: int = 1
    pp_size: int = 1
    dp_size: int = 1
    page_size: int = 1
    disable_cuda_graph: bool = False

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, dest="tp_size")
        parser.add_argument("--mem-fraction-static", type=float)
        parser.add_argument("--disable-cuda-graph", action="store_true")
""",
    "runner.py": """\
class Runner:
    def __init__(self, server_args):
        self.server_args = server_args
        self.mem_fraction_static = server_args.mem_fraction_static

    def init(self, avail, total):
        rest_memory = avail - total * (1 - self.mem_fraction_static)
        self.max_total_num_tokens = int(rest_memory) // self.server_args.tp_size
        if self.server_args.max_total_tokens is not None:
            self.max_total_num_tokens = min(self.max_total_num_tokens, self.server_args.max_total_tokens)
""",
}
#: The figures the formula needs besides the budget.
FIGURES = ["--set", "avail=10", "--set", "total=20"]

#: Numbers as a door may spell them: every shape SGLang never prints (NaN, infinities, 400 and 5,000 digits, a
#: subnormal, hexadecimal, underscores, digits of other scripts), bounds and their neighbours, words and quotes.
_NUMBER_WORDS = [
    "0", "-0", "1", "-5", "0.88", "1.5", "1e400", "-1e400", "1e308", "1e-320", "nan", "NaN", "-nan", "inf", "-inf",
    "Infinity", "9" * 400, "1" + "0" * 5000, "0x10", "1_000", "+1", "\u0661", "\u00b2", "1e", ".", "", " ", "None",
    "null", "True", "false", "'x'", "'", '"', "\x00", "65536", "65537", str(1 << 31), str(1 << 63), str(1 << 64),
    "1e12", "1000000000001", "10000", "10001", "0.0000001",
]  # fmt: skip
numbers = st.one_of(
    st.sampled_from(_NUMBER_WORDS),
    st.integers().map(str),
    st.floats().map(repr),
    st.decimals().map(str),
    st.text(max_size=12),
)


@pytest.fixture()
def tally(request: pytest.FixtureRequest) -> Counter[str]:
    """What the test's examples ended in, printed at the end of the run (tests/examples.py)."""
    return TALLIES.setdefault(request.node.nodeid, Counter())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * MAX_DEPTH + 2000))  # as main() sets it, once
    folder = tmp_path_factory.mktemp("doors")
    for name, text in TREE.items():
        (folder / "tree" / name).parent.mkdir(exist_ok=True)
        (folder / "tree" / name).write_text(text)
    return folder / "tree"


@pytest.fixture(scope="module")
def cache(tree: Path) -> str:
    """A cache warmed on the tree: each example costs the door, not the parse."""
    folder = str(tree.parent / "cache")
    warmed = CliRunner().invoke(cli, ["explain", str(tree), *FIGURES, "--set", "mem_fraction_static=0.5",
                                      "--cache-dir", folder])  # fmt: skip
    assert warmed.exit_code == 0, warmed.output
    return folder


@pytest.fixture(scope="module")
def baseline(tree: Path, cache: str) -> dict[str, Any]:
    """The baseline check writes of the tree."""
    path = tree.parent / "baseline.json"
    wrote = CliRunner().invoke(cli, ["check", str(tree), "--write-baseline", str(path), "--cache-dir", cache])
    assert wrote.exit_code == 0, wrote.output
    sound: dict[str, Any] = json.loads(path.read_text())
    assert sound["caps"] and sound["budget_sites"]
    return sound


def _memory_kib(field: str, reset: bool = False) -> int:
    """This process's VmRSS or VmHWM, KiB (0 without /proc); *reset* sets the high-water mark back to what it holds
    (Linux's clear_refs), so that each example's is its own."""
    try:
        if reset:
            Path("/proc/self/clear_refs").write_text("5")
        found = re.search(rf"^{field}:\s+(\d+)", Path("/proc/self/status").read_text(), re.MULTILINE)
    except OSError:
        return 0
    return int(found.group(1)) if found else 0


@dataclass(frozen=True)
class Outcome:
    """What a command ended in."""

    #: Its exit code.
    code: int
    #: What it wrote on stdout and stderr.
    stdout: str
    stderr: str


def _answered(arguments: list[str], tally: Counter[str]) -> Outcome:
    """The command's outcome (through ``main``, as the process runs it: a usage error is one line), failing unless it
    is an answer or one line of error, within 2 s of CPU and 300 MiB more than the process held before it (its
    high-water mark, set back to what it holds before each example). An exception fails the example as it is. The
    objects alive before it are frozen, as the program freezes its own: a collection during the example walked the
    test process's heap (a 100,000-deep JSON once took 4.2 s of CPU after 1,287 examples, 0.7 s in a fresh process)."""
    held = _memory_kib("VmRSS", reset=True)
    gc.freeze()  # as the program's run() does: a collection then walks the example's objects, not the test's heap
    start = time.process_time()
    try:
        with CliRunner().isolation() as (out, err, _):
            try:
                main(arguments)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        took = time.process_time() - start
        gc.unfreeze()
    grown = _memory_kib("VmHWM") - held
    done = Outcome(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))
    said = done.stderr.rstrip("\n").splitlines()  # a message may end in a space: compared as it is
    assert done.code in (0, 1, 2), (done.code, said[-3:])
    assert not any("internal error" in line or "Traceback" in line for line in said), said[-3:]
    missing = done.code == 2 and said[-1:] != [] and said[-1].startswith("sgtrace: missing input ")
    if done.code == 2:  # why, in one line: the inputs explain's answer (on stdout) lacks, or the error
        assert len(said) == 1 and said[0].startswith(("sgtrace: missing input ", "sgtrace: error: ")), said[-5:]
    if missing:
        assert done.stdout.strip(), said
        if _json_asked(arguments):
            assert sorted(json.loads(done.stdout)["missing"]) == sorted(re.findall(_MISSING, said[0]))
        event("exit 2: missing inputs")
    elif done.code == 2:
        event("exit 2: " + said[0][16:].split(":")[0][:40])
        if _json_asked(arguments):
            message = said[0].removeprefix("sgtrace: error: ")
            payload = json.loads(done.stdout)  # the error, or an answer the error line says is none
            error = payload.get("error")  # with what was found and is missing, where the input error says
            assert error is None or (error["exit_code"], error["message"]) == (2, message), payload
            assert "error" in payload or "attribute" in payload, payload
    else:
        event(f"exit {done.code}")
    assert took < 2, f"{took:.2f} s of CPU"
    assert grown < 300 << 10, f"{grown >> 10} MiB more"
    kind = "missing inputs" if done.code == 2 and missing else "error" if done.code == 2 else "answer"
    tally.update({"examples": 1, f"exit {done.code} ({kind})": 1})
    tally["most CPU ms"] = max(tally["most CPU ms"], round(took * 1000))
    tally["most MiB more"] = max(tally["most MiB more"], grown >> 10)
    return done


#: An input explain's line says is missing: ``missing input NAME: how; missing input NAME: how``.
_MISSING = re.compile(r"(?:^sgtrace: |; )missing input (\S+?): ")


def _json_asked(arguments: list[str]) -> bool:
    return any(a == "--format" and b == "json" for a, b in zip(arguments, arguments[1:], strict=False))


def _formats() -> st.SearchStrategy[list[str]]:
    return st.sampled_from([[], ["--format", "json"]])


# -- a launch command (--command) ----------------------------------------------------------------------------

_OPTIONS = [
    "--mem-fraction-static", "--mem-frac", "--mem", "--m", "--tp", "--tp-size", "--tensor-parallel-size",
    "--pp-size", "--dp-size", "--max-total-tokens", "--page-size", "--disable-cuda-graph", "--model-path", "--",
    "---", "--x", "-m", "--t", "--p", "--mem_fraction_static", "--tp-size=", "--dp",
]  # fmt: skip
_PREFIXES = [
    "", "python -m sglang.launch_server ", "ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m ",
    "sglang serve ", "#!/bin/sh\nexec python3 -m sglang.launch_server \\\n  ",
    "  PID TTY CMD\n 1 ? python3 -m sglang.launch_server ",
]  # fmt: skip
_NOISE = [b"\x00", b"\xff\xfe", b"\r\n", b"\\\n", b"'", b'"', b" ", b"\t", b"#", b"\n"]
_option = st.tuples(st.sampled_from(_OPTIONS), st.sampled_from([" ", "=", ""]), numbers).map("".join)
_piece = st.one_of(_option.map(str.encode), st.sampled_from(_NOISE), st.binary(max_size=8))


@dataclass(frozen=True)
class Made:
    """A file as a strategy draws it: a head, a body repeated, a tail, and the size it is cut or padded to, made whole
    only in the test (hypothesis keeps what a strategy returns: 400 files of 16 MB held 6 GB)."""

    head: bytes
    body: bytes = b""
    times: int = 0
    tail: bytes = b""
    #: The size it is cut to, or padded to with spaces; None: as it is.
    size: int | None = None

    def data(self) -> bytes:
        """The file's bytes."""
        whole = self.head + self.body * self.times + self.tail
        return whole if self.size is None else whole[: self.size] + b" " * (self.size - len(whole))


@st.composite
def commands(draw: st.DrawFn) -> Made:
    """A file holding a launch command: a prefix, options of any value, noise, the whole repeated up to past the
    door's bound."""
    head = draw(st.sampled_from(_PREFIXES)).encode()
    body = b" ".join(draw(st.lists(_piece, max_size=12))) + b" "
    if draw(st.integers(0, 99)) == 0:  # a megabyte costs a second or two: one example in a hundred
        return Made(
            head, body, MAX_COMMAND_BYTES // len(body) + 2, size=MAX_COMMAND_BYTES + draw(st.sampled_from([-1, 0, 1]))
        )
    return Made(head, body, draw(st.integers(1, 40)))


@pytest.mark.parametrize("profile", PROFILES)
def test_any_launch_command_is_an_answer_or_one_line_of_error(
    profile: str, tally: Counter[str], tree: Path, cache: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("commands")

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(commands(), st.sampled_from([[], ["--set", "mem_fraction_static=0.5"]]), _formats())
    def answered(made: Made, budget: list[str], fmt: list[str]) -> None:
        path = folder / "sglang.service"
        data = made.data()
        path.write_bytes(data)
        event(f"{len(data) >> 10} KB" if len(data) > MAX_COMMAND_BYTES // 2 else "small")
        _answered(["explain", str(tree), *FIGURES, *budget, "--command", str(path), *fmt, "--cache-dir", cache], tally)

    answered()


#: What a launch command's words are made of: blanks, quotes, escapes, NUL, text.
_SHELL = st.text(alphabet=st.sampled_from(list(" \t\r\n'\"\\ab-=\x00\u00e9$`#\v\f")), max_size=40)


@settings(_SETTINGS, max_examples=2000)
@given(_SHELL)
def test_a_command_is_split_into_words_as_shlex_splits_it(text: str) -> None:
    """split_words reads a command in linear time (shlex copied its word at each character: a megabyte of NUL bytes
    took 8 s); its words are shlex's, and it refuses what shlex refuses."""
    import shlex

    from sgtrace.analyses.launch import split_words

    try:
        expected: list[str] | None = shlex.split(text, comments=False)
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ValueError):
            split_words(text)
    else:
        assert split_words(text) == expected


# -- JSON: server info, a model's config.json ---------------------------------------------------------------

_KEYS = [
    "version", "mem_fraction_static", "tp_size", "pp_size", "dp_size", "max_total_num_tokens", "max_total_tokens",
    "page_size", "disable_cuda_graph", "model_path", "format", "caps", "budget_sites", "num_hidden_layers",
    "architectures", "", "\x00", "\ud800", "a" * 300,
]  # fmt: skip
#: A JSON number or literal as written: every shape (json reads 1e400 as infinity, NaN and Infinity as Python's).
_JSON_NUMBERS = st.one_of(
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 400, "1" + "0" * 5000, "-0", "1e-320",
                     "0", "-5", "0.88", "1", "65537", str(1 << 63), "true", "false", "null", "01", "1.", ".5", "+1"]),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)  # fmt: skip
_STRINGS = st.one_of(st.text(max_size=10), st.sampled_from(['"\\u0000"', '"\\ud800"', '"\\"', '"\\x"'])).map(
    lambda text: text if text.startswith('"') else json.dumps(text)
)


def _json_texts(leaves: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """JSON text, nested and wide, with values of every type at every key."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=5).map(lambda items: "[" + ",".join(items) + "]"),
            st.lists(st.tuples(st.sampled_from(_KEYS).map(json.dumps), children), max_size=6).map(
                lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"
            ),
        ),
        max_leaves=30,
    )


_VALUES = _json_texts(st.one_of(_JSON_NUMBERS, _STRINGS))


#: The shapes of a JSON file, as often as each is drawn: 16 MB ("big") costs a tenth of a second, so it is rare.
_SHAPES = ["object"] * 12 + ["any"] * 4 + ["deep"] * 4 + ["wide", "cut", "bytes"] * 3 + ["big"]


@st.composite
def json_files(draw: st.DrawFn, sound: dict[str, Any] | None = None) -> Made:
    """A JSON file: an object of known keys with hostile values (or *sound* with some of its values replaced),
    text of any shape, nested to any depth, 20,000 keys of one name, cut short, past the size bound, with NUL and
    invalid UTF-8."""
    shape = draw(st.sampled_from(_SHAPES))
    event(shape)
    if shape == "deep":
        depth = draw(st.sampled_from([MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, 100_000]))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        return Made(b'{"version": "0.5.9", "mem_fraction_static": ', opener, depth, b"1" + closer * depth + b"}")
    if shape == "any":
        return Made(draw(_VALUES).encode("utf-8", "surrogatepass"))
    if shape == "bytes":
        return Made(draw(st.binary(max_size=64)))
    noise = draw(st.sampled_from([b"", b"\x00", b"\xff", b"\xef\xbb\xbf"]))
    data = (noise if draw(st.booleans()) else b"") + _object(draw, sound).encode("utf-8", "surrogatepass")
    if shape == "wide":
        return Made(data[:-1] + b"," * (data[-2:] != b"{}"), b'"k": [1], ', 20_000, b'"k": [1]}')
    if shape == "cut":
        return Made(data, size=draw(st.integers(0, len(data))))
    return Made(data, size=MAX_JSON_BYTES + draw(st.sampled_from([0, 1])) if shape == "big" else None)


def _object(draw: st.DrawFn, sound: dict[str, Any] | None) -> str:
    """An object's text: *sound*'s (or one of known keys) with some values replaced by hostile JSON text."""
    if sound is None:
        pairs = draw(st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), max_size=8))
        return "{" + ",".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"
    data = json.loads(json.dumps(sound))
    places = list(_places(data))
    chosen = draw(st.lists(st.integers(0, len(places) - 1), max_size=4, unique=True))
    replacements = {}
    values = draw(st.sampled_from([_VALUES, _STRINGS]))  # strings: the type most fields hold, read further
    for index, (holder, key) in enumerate(places[place] for place in chosen):
        marker = f"@@{index}@@"
        replacements[json.dumps(marker)] = draw(values)
        holder[key] = marker
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    for marker, value in replacements.items():
        text = text.replace(marker, value)
    return text


def _places(value: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every value inside *value*, nested ones too."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield value, key
        yield from _places(child)


@pytest.mark.parametrize("door", ["--server-info", "--model-config"])
@pytest.mark.parametrize("profile", PROFILES)
def test_any_json_a_door_reads_is_an_answer_or_one_line_of_error(
    profile: str, door: str, tally: Counter[str], tree: Path, cache: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("json")

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(json_files(), st.sampled_from([[], ["--set", "mem_fraction_static=0.5"]]), _formats())
    def answered(made: Made, budget: list[str], fmt: list[str]) -> None:
        path = folder / "info.json"
        path.write_bytes(made.data())
        _answered(["explain", str(tree), *FIGURES, *budget, door, str(path), *fmt, "--cache-dir", cache], tally)

    answered()


# -- a log (explain --log, check --log) -----------------------------------------------------------------------

#: A start-up of the sample as SGLang logs it (its pool 10.43 GB at 0.88), some of whose lines begin each log.
_SOUND = [
    b"[2026-02-28 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1, mem_fraction_static=0.88)",
    b"[2026-02-28 10:00:01 TP0] Load weight begin. avail mem=94.04 GB",
    b"[2026-02-28 10:00:05 TP0] Load weight end. type=X, dtype=torch.bfloat16, avail mem=21.71 GB, mem usage=72.33 GB.",
    b"[2026-02-28 10:00:06 TP0] KV Cache is allocated. #tokens: 273152, K size: 5.21 GB, V size: 5.21 GB",
    b"[2026-02-28 10:00:07 TP0] max_total_num_tokens=273152, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    b"max_running_requests=4096, context_len=131072",
    b"[2026-02-28 10:00:09] The server is fired up and ready to roll!",
]
_STAMPS = [b"", b"[2026-02-28 10:00:01 TP0] ", b"[2026-02-28 10:00:01 PP3 TP7] ", b"[2026-02-28 10:00:01] "]
#: What a log's line is made of: SGLang's forms filled with numbers of any shape, the table's words, text and bytes
#: of any kind (NUL, invalid UTF-8), colours and carriage returns.
_LOG_PIECES = st.one_of(
    st.tuples(st.sampled_from([form for message in MESSAGES for form in message.forms]), numbers).map(
        lambda pair: pair[0].replace("{}", pair[1]).encode("utf-8", "surrogatepass")
    ),
    st.sampled_from([m.literal for m in MESSAGES if m.literal]).map(str.encode),
    st.sampled_from([b"\x00", b"\xff\xfe", b"\x1b[31m", b"\r", b"=", b"'", b"(", b"[", b", a=1", b"<model>"]),
    st.binary(max_size=20),
    st.text(max_size=20).map(lambda text: text.encode("utf-8", "surrogatepass")),
)


@dataclass(frozen=True)
class Log:
    """A log as a strategy draws it: the sound lines it begins with, hostile lines (a stamp, pieces repeated) and where
    each goes among them, and its form; made whole only in the test (see Made)."""

    sound: int
    #: (where among the sound lines, stamp, pieces, how many times they repeat).
    lines: tuple[tuple[int, bytes, bytes, int], ...]
    #: plain, docker's json-file (records cut every *cut* characters), gzip of either, or a gzip cut short.
    form: str
    cut: int

    def data(self) -> bytes:
        """The log's bytes."""
        lines = list(_SOUND[: self.sound])
        for place, stamp, pieces, times in sorted(self.lines, key=lambda line: -line[0]):
            lines.insert(place, stamp + pieces * times)
        data = _docker(lines, self.cut) if "docker" in self.form else b"\n".join(lines) + b"\n"
        if "gzip" in self.form:
            data = gzip.compress(data, 1)
        return data[: len(data) // 2] if self.form == "cut-gzip" else data


def _docker(lines: list[bytes], cut: int) -> bytes:
    """docker's json-file of *lines*, each cut into records of *cut* characters (none but a line's last ends in a
    newline)."""
    records = []
    for line in lines:
        text = line.decode("utf-8", errors="replace")
        pieces = [text[i : i + cut] for i in range(0, len(text), cut)] or [""]
        for index, piece in enumerate(pieces):
            end = "\n" if index == len(pieces) - 1 else ""
            records.append(json.dumps({"log": piece + end, "stream": "stderr", "time": "2026-11-02T10:00:01Z"}))
    return "\n".join(records).encode()


@st.composite
def logs(draw: st.DrawFn) -> Log:
    """A log: some of a sound start-up, and long and repeated lines of SGLang's forms with numbers of any shape,
    NUL and invalid UTF-8, as a file, docker's cut records, gzip (whole or cut short)."""
    sound = draw(st.integers(0, len(_SOUND)))
    hostile = st.tuples(
        st.integers(0, sound), st.sampled_from(_STAMPS), st.lists(_LOG_PIECES, max_size=5).map(b"".join),
        st.sampled_from([1, 1, 1, 2, 10, 1000, 5000]),
    )  # fmt: skip
    form = draw(st.sampled_from(["plain"] * 4 + ["docker", "gzip", "docker-gzip", "cut-gzip"]))
    event(form)
    lines = [(place, stamp, pieces, min(times, max(1, _LONGEST // max(1, len(pieces)))))
             for place, stamp, pieces, times in draw(st.lists(hostile, max_size=8))]  # fmt: skip
    size = sum(len(stamp) + len(pieces) * times for _, stamp, pieces, times in lines)
    cut = draw(st.integers(1, 20_000))
    return Log(sound, tuple(lines), form, max(cut, size // _RECORDS + 1) if "docker" in form else cut)


#: The longest line a log is drawn with (twice the reader's bound on a line, MAX_LINE), and the most records of
#: docker's its lines are cut into. The reading is linear, and a log larger than 2 s of it is no test of the door:
#: a line of 5,000-digit numbers 5,000 times was 25 MB, and one of a megabyte cut into records of a character each
#: (66 MB of JSON) took 4.7 s (records are read at 15-20 MB/s, docker's own of 16 KB at 300).
_LONGEST = 2 * MAX_LINE
_RECORDS = 1 << 16


@pytest.fixture(scope="module")
def sample_cache(cache: str) -> str:
    """The cache warmed on the sample too: a log's figures are read against a formula SGLang's lines name."""
    warmed = CliRunner().invoke(cli, ["explain", str(sample_tree()), "--set", "mem_fraction_static=0.88",
                                      "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71",
                                      "--cache-dir", cache])  # fmt: skip
    assert warmed.exit_code == 0 and "10.43 GB" in warmed.stdout, warmed.output
    return cache


@pytest.mark.parametrize("profile", PROFILES)
def test_any_log_is_an_answer_or_one_line_of_error(
    profile: str,
    tally: Counter[str],
    tree: Path,
    sample_cache: str,
    baseline: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The log door (a 100 KB server_args= line took 43 s, 'Capture ' 50,000 times and 20 MB of docker's cut records
    ran past 60 s, a fraction of NaN was a traceback): explain of the sample, and check of the small tree against
    its baseline, with the log's start-up."""
    folder = tmp_path_factory.mktemp("logs")
    baseline = str(tree.parent / "baseline.json")

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(logs(), st.sampled_from(["explain", "check"]), st.sampled_from([[], ["--set", "mem_fraction_static=0.88"]]),
           _formats())  # fmt: skip
    def answered(log: Log, command: str, budget: list[str], fmt: list[str]) -> None:
        path = folder / ("server.log.gz" if "gzip" in log.form else "server.log")
        path.write_bytes(log.data())
        arguments = {
            "explain": ["explain", str(sample_tree())],
            "check": ["check", str(tree), "--baseline", baseline],
        }[command]
        _answered([*arguments, "--log", str(path), *budget, *fmt, "--cache-dir", sample_cache], tally)
        path.unlink()

    answered()


# -- a baseline (check --baseline) --------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_any_baseline_is_a_verdict_or_one_line_of_error(
    profile: str,
    tally: Counter[str],
    tree: Path,
    cache: str,
    baseline: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The tree's own baseline with values replaced by JSON of any type and shape (a line of 1e400, an owner that
    is a list, NUL in a path), and files of any shape: check's verdict (0 or 1) or one line naming the file."""
    folder = tmp_path_factory.mktemp("baselines")

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(json_files(baseline), _formats())
    def answered(made: Made, fmt: list[str]) -> None:
        path = folder / "baseline.json"
        path.write_bytes(made.data())
        done = _answered(["check", str(tree), "--baseline", str(path), *fmt, "--cache-dir", cache], tally)
        if done.code == 2 and "cannot read baseline" in done.stderr:
            assert f"cannot read baseline {path}: " in done.stderr

    answered()


# -- options: --set and the bounds ----------------------------------------------------------------------------

_NAMES = [
    "mem_fraction_static", "avail", "total", "tp_size", "pp_size", "dp_size", "max_total_tokens", "page_size",
    "weights_gb", "avail_after_weights_gb", "avail_before_weights_gb", "kv_gb", "kv_tokens", "gpu_gb",
    "max_total_num_tokens", "draft_weights_gb", "disable_cuda_graph", "model_path", "unknown_name", "", "1x", "a b",
]  # fmt: skip
_settings = st.lists(
    st.one_of(st.tuples(st.sampled_from(_NAMES), numbers).map("=".join), st.text(max_size=12)), max_size=6
).map(lambda pairs: [word for pair in pairs for word in ("--set", pair)])
_SIZES = st.one_of(
    numbers,
    st.tuples(numbers, st.sampled_from(["", "B", "k", "KB", "KiB", "MB", "m", "GiB", "T", "TiB", "x", " MB"])).map(
        "".join
    ),
)
_NUMERIC_OPTIONS = ["--max-log-mb", "--max-depth", "--max-nodes", "--jobs", "--want-tokens", "--want-kv-gb", "--run",
                    "--env"]  # fmt: skip
#: Options with a value, and the values they may be given.
_BOUNDS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["--max-file-size", "--max-unpacked-size"]), _SIZES),
        st.tuples(st.sampled_from(_NUMERIC_OPTIONS), numbers),
    ),
    max_size=3,
).map(lambda pairs: [word for pair in pairs for word in pair])


@pytest.mark.parametrize("profile", PROFILES)
def test_any_option_value_is_an_answer_or_one_line_of_error(
    profile: str, tally: Counter[str], tree: Path, cache: str
) -> None:
    """--set NAME=VALUE of any name and value, given once or twice, and the sizes and bounds of any spelling
    (400 digits of --max-file-size was an OverflowError)."""

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(_settings, _BOUNDS, st.sampled_from([[], ["--set", "mem_fraction_static=0.5"]]), _formats())
    def answered(pairs: list[str], bounds: list[str], budget: list[str], fmt: list[str]) -> None:
        _answered(["explain", str(tree), *FIGURES, *budget, *pairs, *bounds, *fmt, "--cache-dir", cache], tally)

    answered()


# -- the configuration file ([tool.sgtrace] in pyproject.toml) ------------------------------------------------

_CONFIG_KEYS = [
    "max-file-size", "max_unpacked_size", "max-log-mb", "max-depth", "max-nodes", "jobs", "set", "exclude",
    "include", "format", "fail-on", "budget", "attr", "cache-dir", "no-cache", "debug", "want-tokens", "env",
    "follow-links", "explain", "check", "unknown", "command", "server-info", "model-config",
]  # fmt: skip
_TOML_VALUES = st.recursive(
    st.one_of(
        st.sampled_from(["nan", "inf", "-inf", "1e400", "9" * 400, "1" + "0" * 5000, "-5", "0", "1_000", "0x10",
                         "true", "false", "1979-05-27", "07:32:00", '"10MB"', '"-5"', '"\\u0000"', "''", "'1e400'"]),
        st.integers().map(str),
        st.floats().map(lambda f: repr(f).replace("inf", "inf").replace("nan", "nan")),
        st.text(max_size=10).map(json.dumps),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(st.sampled_from(_CONFIG_KEYS), children), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{json.dumps(k)} = {v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=8,
)  # fmt: skip


@st.composite
def configurations(draw: st.DrawFn) -> bytes:
    """A pyproject.toml with a [tool.sgtrace] table (and sub-tables) of known and unknown keys, values of every
    TOML type and shape; or text of any bytes that names sgtrace."""
    if draw(st.integers(0, 9)) == 0:
        return b"[tool.sgtrace]\n" + draw(st.binary(max_size=40))
    lines = ["[tool.sgtrace]"]
    for table in draw(st.lists(st.sampled_from(["", "explain", "check", "caps"]), min_size=1, max_size=3)):
        if table:
            lines.append(f"[tool.sgtrace.{table}]")
        pairs = draw(st.lists(st.tuples(st.sampled_from(_CONFIG_KEYS), _TOML_VALUES), max_size=4))
        lines += [f"{json.dumps(key)} = {value}" for key, value in pairs]
    return "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"


@pytest.mark.parametrize("profile", PROFILES)
def test_any_configuration_is_an_answer_or_one_line_of_error(
    profile: str,
    tally: Counter[str],
    tree: Path,
    cache: str,
    baseline: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """[tool.sgtrace] of any keys and values (a size of -5, true or 10^23 was taken as a bound), read from the
    current folder: an answer, or one line naming the file."""
    folder = tmp_path_factory.mktemp("configured")
    monkeypatch.chdir(folder)

    @settings(_SETTINGS, max_examples=DOORS[profile])
    @given(configurations(), st.sampled_from(["explain", "check"]))
    def answered(data: bytes, command: str) -> None:
        (folder / "pyproject.toml").write_bytes(data)
        arguments = {
            "explain": ["explain", str(tree), *FIGURES, "--set", "mem_fraction_static=0.5"],
            "check": ["check", str(tree), "--baseline", str(tree.parent / "baseline.json")],
        }[command]
        _answered([*arguments, "--cache-dir", cache], tally)

    answered()
