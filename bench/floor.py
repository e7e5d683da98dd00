"""The least time a cold ``find`` or a second attribute's ``caps`` can take, beside grep: the parse floor.

    python bench/floor.py                         # the newest release pinned in tests/releases.py
    python bench/floor.py --tree /path/to/tree --runs 5

find reports a syntax error anywhere in a file that names the attribute, so every such file is parsed
whole, once, by tree-sitter (the fastest parser at hand: stdlib ``ast`` took 4.6 times as long on
0.5.23's 370 files naming ``page_size``, libcst about nineteen times: docs/speed.md). Whatever else sgtrace does, a cold
run cannot take less than

    the interpreter's start and the command's imports
    + (reading the files + tree-sitter's parse of the files that name the attribute) / the cores

(the reading and the parses spread over the cores without any cost of their own). This script
measures each term on this machine, grep beside it, and prints the floor as a multiple of grep
next to the goal of issue 21 and what ``bench/bench.py`` measures. It measures; it does not run
sgtrace's pass: the parse is tree-sitter's own ``Parser.parse``, in this process, one file after another.

A cold find reads every file (its bytes say whether it names the attribute). For the second attribute
(``caps --attr`` after a ``caps`` of the first, the tree warm) only the files that name it are read
(the tree's manifest and stored words tell which: their share of the reading is counted) and parsed
(a query's scans are not known before it is asked), and the imports are those of a command that
builds a graph (networkx among them); the slice, which that row also runs, is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.fetch import release_dir  # noqa: E402
from sgtrace.parse import parse_tree, read_file  # noqa: E402
from tests.releases import NEWEST, cache_dir  # noqa: E402

#: (row, attribute, the imports its command needs, whether it reads every file, issue 21's goal as a multiple of grep)
ROWS = (
    ("find page_size cold", "page_size", "import sgtrace.cli, sgtrace.index.scan", True, 6.0),
    ("find max_running_requests cold", "max_running_requests", "import sgtrace.cli, sgtrace.index.scan", True, 6.0),
    ("caps max_running_requests after caps max_total_num_tokens", "max_running_requests",
     "import sgtrace.cli, sgtrace.index.scan, sgtrace.graph.build, sgtrace.analyses.caps", False, 6.0),
)  # fmt: skip


def _median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", help="a tree to measure (default: the newest release pinned for the tests)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each timed process (median taken)")
    args = parser.parse_args()
    tree = Path(args.tree) if args.tree else release_dir(f"sglang=={NEWEST}", cache_dir())
    files = sorted(str(p) for p in tree.rglob("*.py") if p.is_file())
    cores = _cores()

    started = time.process_time()
    contents = [read_file(path)[0] for path in files]
    reading = time.process_time() - started

    print(f"tree: {tree} ({len(files):,} files, {sum(map(len, contents)) / 1e6:.1f} MB); cores: {cores}")
    print(f"reading every file: {reading:.3f} s of CPU\n")
    print("| row | files naming it | MB | read CPU s | parse CPU s | start + imports s | floor s | grep s "
          "| floor x grep | goal |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row, attribute, imports, every, goal in ROWS:
        needle = attribute.encode()
        naming = [data for data in contents if needle in data]
        # the tree's manifest and stored words tell a second query which files name it: only those are read
        share = 1.0 if every else sum(map(len, naming)) / max(1, sum(map(len, contents)))
        read = reading * share
        parse_tree(b"")  # the language loaded before the clock starts
        started = time.process_time()
        for data in naming:
            parse_tree(data)
        parsing = time.process_time() - started
        start = _median_seconds([sys.executable, "-c", imports], args.runs)
        grep = _median_seconds(["grep", "-rn", f"{attribute}\\s*=", str(tree)], args.runs)
        floor = start + (read + parsing) / cores
        print(
            f"| {row} | {len(naming):,} | {sum(map(len, naming)) / 1e6:.1f} | {read:.3f} | {parsing:.3f} | {start:.3f} "
            f"| {floor:.3f} | {grep:.3f} | {floor / grep:.1f} | <= {goal:g} |"
        )


if __name__ == "__main__":
    main()
