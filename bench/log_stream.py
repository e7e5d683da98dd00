"""Time and peak memory of ``sgtrace explain`` on a generated 1 GB journal, and on a gzip bomb.

    python bench/log_stream.py                 # 1 GB journal, a 4 MB gzip bomb
    python bench/log_stream.py --gb 0.2        # a smaller journal
    python bench/log_stream.py --keep DIR      # keep the generated files in DIR

The journal is what months of ``journalctl -u sglang`` look like: request
traffic (one ``Prefill``/``Decode batch`` or HTTP line after another) with a
start-up of the three-start-up fixture (tests/fixtures/logs) every ~5 MB, its
clock moved on each time. The gzip bomb is 4 MB of gzip that unpacks to text
lines far past the default bound (2 GiB). Each command runs as a user runs it,
a fresh process on the sample tree shipped with sgtrace (the log is the work);
its wall time and peak RSS (getrusage of the child) are printed as Markdown.
Goals (issue 18): the 1 GB journal within 200 MB of memory, time linear in the
size; the bomb stops at the bound with one line.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "logs" / "kimi_three_startups.journal"
TRAFFIC = (
    "{stamp} h20-node-03 python3[{pid}]: [{when} TP0] Decode batch. #running-req: {n}, #token: {t}, token usage: 0.21,"
    " cuda graph: True, gen throughput (token/s): 412.77, #queue-req: 0\n",
    '{stamp} h20-node-03 python3[{pid}]: [{when}] INFO:     10.20.1.{n}:52210 - "POST /v1/chat/completions HTTP/1.1"'
    " 200 OK\n",
    "{stamp} h20-node-03 python3[{pid}]: [{when} TP0] Prefill batch. #new-seq: 1, #new-token: {t}, #cached-token: 0,"
    " token usage: 0.21, #running-req: {n}, #queue-req: 0\n",
)
_SHORT = re.compile(r"^(?P<stamp>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<rest>.*)$")
_SGLANG = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


def journal(path: Path, size: int) -> int:
    """Write a journal of about *size* bytes to *path*; the number of start-ups written."""
    fixture = FIXTURE.read_text().splitlines()
    moment = datetime(2026, 1, 1)
    written = startups = 0
    with path.open("w") as out:
        while written < size:
            block = _start_up(fixture, moment)
            out.write(block)
            written += len(block)
            startups += 1
            moment += timedelta(days=1)
            for i in range(40_000):  # about 5 MB of traffic
                when = moment + timedelta(seconds=i)
                line = TRAFFIC[i % 3].format(
                    stamp=f"{when:%b %d %H:%M:%S}", when=f"{when:%Y-%m-%d %H:%M:%S}", pid=33907, n=i % 97, t=i % 9000
                )
                out.write(line)
                written += len(line)
            moment += timedelta(days=1)
    return startups * 3  # the fixture holds three start-ups


def _start_up(fixture: list[str], moment: datetime) -> str:
    """The fixture's lines with both clocks moved to begin at *moment*."""
    first = datetime(2026, 2, 27, 16, 20, 5)
    shift = moment - first

    def sglang(match: re.Match[str]) -> str:
        return "[" + f"{datetime.fromisoformat(match.group(1)) + shift:%Y-%m-%d %H:%M:%S}"

    lines = []
    for line in fixture:
        part = _SHORT.match(line)
        assert part is not None, line
        stamp = datetime.strptime(f"2026 {part['stamp']}", "%Y %b %d %H:%M:%S") + shift
        lines.append(f"{stamp:%b %d %H:%M:%S} {_SGLANG.sub(sglang, part['rest'])}\n")
    return "".join(lines)


def bomb(path: Path, packed: int = 4 << 20) -> int:
    """Write about *packed* bytes of gzip of text lines (``a`` repeated: text, not binary); the bytes it unpacks to."""
    chunk = (b"a" * 4095 + b"\n") * 4096
    unpacked = 0
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
        while raw.tell() < packed:
            for _ in range(32):
                out.write(chunk)
                unpacked += len(chunk)
    return unpacked


def run(command: list[str]) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MiB, exit code, last line of stderr) of one fresh process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        last = (errors.read().decode(errors="replace").strip().splitlines() or [""])[-1]
    return seconds, usage.ru_maxrss / 1024, child.returncode, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.0, help="Size of the generated journal (GB).")
    parser.add_argument("--keep", type=Path, help="Write the files here and keep them.")
    options = parser.parse_args()
    folder = options.keep or Path(tempfile.mkdtemp(prefix="sgtrace-log-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    sample = str(ROOT / "sgtrace" / "sample")
    base = [sys.executable, "-m", "sgtrace", "explain", sample, "--no-cache", "--runs", "--log"]
    print("| input | size | start-ups | seconds | MB/s | peak RSS MiB | exit | last stderr line |")
    print("|---|---|---|---|---|---|---|---|")
    path = folder / "journal.log"
    made = time.perf_counter()
    startups = journal(path, int(options.gb * 1e9))
    print(f"<!-- journal written in {time.perf_counter() - made:.0f} s -->", file=sys.stderr)
    size = path.stat().st_size
    seconds, peak, code, last = run([*base, str(path)])
    print(f"| journal | {size / 1e9:.2f} GB | {startups} | {seconds:.1f} | {size / 1e6 / seconds:.0f} | {peak:.0f} "
          f"| {code} | {last[:60]} |")  # fmt: skip
    small = folder / "bomb.gz"
    unpacked = bomb(small)
    seconds, peak, code, last = run([*base, str(small)])
    print(f"| gzip bomb | {small.stat().st_size / 1e6:.1f} MB -> {unpacked / 1e9:.1f} GB | 0 | {seconds:.1f} "
          f"| - | {peak:.0f} | {code} | {last[:90]} |")  # fmt: skip
    if options.keep is None:
        for item in (path, small):
            os.unlink(item)
        folder.rmdir()


if __name__ == "__main__":
    main()
