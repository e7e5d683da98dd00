"""Every failure to write an answer is one line and exit 2 (issue 18, item 2): every command, every output.

Standard output is tested in a process of its own (a full disk is ``/dev/full``, a closed pipe is a pipe
whose reading end is closed before sgtrace starts, as ``| head`` leaves it); files through ``main``.
Running as root, a read-only folder cannot be made: a missing folder, a file where the folder should
be, a folder where the file should be and a full disk stand for the places that cannot be written.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.cli import main
from sgtrace.sources import sample_tree

SAMPLE = str(sample_tree())
FIGURES = ["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]

#: Every command, as it writes its answer to standard output ({baseline}: a baseline of the sample).
TO_STDOUT = {
    "find": ["find", "max_total_num_tokens", SAMPLE],
    "trace": ["trace", "max_total_num_tokens", SAMPLE],
    "graph": ["graph", SAMPLE],
    "caps": ["caps", SAMPLE],
    "explain": ["explain", SAMPLE, *FIGURES],
    "diff": ["diff", SAMPLE, SAMPLE],
    "check": ["check", SAMPLE, "--baseline", "{baseline}"],
    "report": ["report", SAMPLE, "-o", "-"],
    "cache-info": ["cache", "info"],
    "cache-clear": ["cache", "clear"],
}

#: Every option that names a file to write, with the command it belongs to ({out}: the file).
TO_FILE = {
    "graph-o": ["graph", SAMPLE, "-o", "{out}"],
    "graph-json-o": ["graph", SAMPLE, "--json", "-o", "{out}"],
    "graph-render-o": ["graph", SAMPLE, "--render", "svg", "-o", "{out}"],
    "check-write-baseline": ["check", SAMPLE, "--write-baseline", "{out}"],
    "report-o": ["report", SAMPLE, "-o", "{out}"],
}

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture()
def sgtrace(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``sgtrace ARGS`` in this process: (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture()
def baseline(tmp_path: Path, sgtrace: Run) -> Path:
    path = tmp_path / "baseline.json"
    code, _, err = sgtrace("check", SAMPLE, "--write-baseline", str(path))
    assert code == 0, err
    return path


def _in_process(args: list[str], stdout: int, cache: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "SGTRACE_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "sgtrace", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, env=environment
    )


def _one_line(stderr: str, message: str) -> None:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    [line] = stderr.strip().splitlines()
    assert line.startswith("sgtrace: error: ") and message in line, line


@pytest.mark.parametrize("name", sorted(TO_STDOUT))
def test_a_full_disk_under_standard_output_is_one_line(name: str, baseline: Path, tmp_path: Path) -> None:
    args = [a.replace("{baseline}", str(baseline)) for a in TO_STDOUT[name]]
    with open("/dev/full", "w") as full:
        proc = _in_process(args, full.fileno(), tmp_path / "cache")
    assert proc.returncode == 2
    _one_line(proc.stderr, "cannot write to standard output: No space left on device")


@pytest.mark.parametrize("name", sorted(TO_STDOUT))
def test_a_closed_pipe_is_one_line(name: str, baseline: Path, tmp_path: Path) -> None:
    """``sgtrace ... | head``, when head has gone: no traceback, no "Exception ignored"."""
    args = [a.replace("{baseline}", str(baseline)) for a in TO_STDOUT[name]]
    reading, writing = os.pipe()
    os.close(reading)
    try:
        proc = _in_process(args, writing, tmp_path / "cache")
    finally:
        os.close(writing)
    assert proc.returncode == 2
    _one_line(proc.stderr, "cannot write to standard output: it was closed before everything was written")


def _places(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Places a file cannot be written to: name -> (path, what the error says)."""
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    missing = tmp_path / "no" / "such" / "dir"
    return {
        "missing-folder": (str(missing / "x.out"), f"the folder {missing} does not exist"),
        "file-as-folder": (str(tmp_path / "a-file" / "x.out"), f"{tmp_path / 'a-file'} is not a folder"),
        "folder-as-file": (str(tmp_path / "a-folder"), "a-folder"),
        "full-disk": ("/dev/full", "cannot write /dev/full: No space left on device"),
    }


#: Graphviz writes a picture itself (its failure is one line: test_cli_graph); the folder is judged before.
_FILE_CASES = [
    (name, place)
    for name in sorted(TO_FILE)
    for place in ("missing-folder", "file-as-folder", "folder-as-file", "full-disk")
    if (name, place) != ("graph-render-o", "full-disk")
]


@pytest.mark.parametrize(("name", "place"), _FILE_CASES)
def test_an_output_file_that_cannot_be_written_is_one_line(
    sgtrace: Run, tmp_path: Path, name: str, place: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-graphviz"))  # --render: the output is judged before dot is
    path, message = _places(tmp_path)[place]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = sgtrace(*[a.replace("{out}", path) for a in TO_FILE[name]])
    assert code == 2 and out == ""
    _one_line(err, message)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing made, no temporary file left


def test_a_missing_folder_is_found_before_the_analysis_runs(sgtrace: Run, tmp_path: Path) -> None:
    code, _, err = sgtrace("check", "/no/such/tree", "--write-baseline", str(tmp_path / "no" / "b.json"))
    assert code == 2 and "--write-baseline" in err and "does not exist" in err and "/no/such/tree" not in err


def test_a_baseline_that_cannot_be_written_leaves_the_old_one_whole(
    sgtrace: Run, baseline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = baseline.read_bytes()

    def full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("sgtrace.cli.output.os.replace", full)
    code, _, err = sgtrace("check", SAMPLE, "--write-baseline", str(baseline), "--no-cache")
    assert code == 2
    _one_line(err, f"cannot write {baseline}: No space left on device")
    assert baseline.read_bytes() == before
    assert sorted(p.name for p in baseline.parent.iterdir()) == ["baseline.json"]


def test_a_written_file_keeps_the_usual_permissions_and_writes_through_a_link(sgtrace: Run, tmp_path: Path) -> None:
    target = tmp_path / "real.dot"
    link = tmp_path / "link.dot"
    link.symlink_to(target)
    code, _, _ = sgtrace("graph", SAMPLE, "-o", str(link), "--no-cache")
    assert code == 0 and link.is_symlink() and target.read_text().startswith("digraph")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_cache_that_cannot_be_written_is_said_once(
    sgtrace: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("sgtrace.cache._UNWRITABLE", set())
    monkeypatch.setattr(tempfile, "mkstemp", full)
    cache = tmp_path / "cache"
    code, out, err = sgtrace("caps", SAMPLE, "--cache-dir", str(cache))
    assert code == 0 and "caps (" in out
    assert (
        err == f"sgtrace: warning: cannot write to the cache {cache}: No space left on device; this run's "
        "results are not kept\n"
    )


def test_a_cache_folder_that_cannot_be_made_says_why(sgtrace: Run, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    cache = tmp_path / "a-file" / "cache"
    code, _, err = sgtrace("caps", SAMPLE, "--cache-dir", str(cache))
    assert code == 0
    assert err == (
        f"sgtrace: warning: cannot use {cache} as the cache: {tmp_path / 'a-file'} is not a folder; "
        "name another folder with --cache-dir; running without a cache\n"
    )
    code, _, err = sgtrace("caps", SAMPLE, "--cache-dir", str(tmp_path / "a-file"))  # a file: the answer all the same
    assert code == 0
    assert err == (
        f"sgtrace: warning: cannot use {tmp_path / 'a-file'} as the cache: it is not a folder; "
        "name another folder with --cache-dir; running without a cache\n"
    )
