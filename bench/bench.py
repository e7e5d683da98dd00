"""Benchmark sgtrace against grep on a real SGLang release.

    python bench/bench.py                       # newest release pinned in tests/releases.py
    python bench/bench.py --release 0.5.9 --runs 5
    python bench/bench.py --tree /path/to/tree  # any tree

Each command runs as a user runs it (a fresh process, sgtrace byte-compiled
as an install leaves it). "cold" uses a new empty cache directory for every
run; "warm" reuses one filled beforehand.
Prints a Markdown table: median seconds, the ratio to grep's median, peak RSS,
and whether the goals hold (find: cold <= 10x grep, warm <= 3x; trace and caps:
cold <= 60x, warm <= 8x; a cold caps within 1 GiB of memory).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.fetch import release_dir  # noqa: E402
from tests.releases import NEWEST, cache_dir  # noqa: E402

ATTRIBUTES = ("max_total_num_tokens", "page_size", "max_running_requests")
#: Commands measured; trace runs for the first attribute only.
COMMANDS = ("find", "trace", "caps")
Row = tuple[str, float, float]


#: Peak resident memory (MiB) of any command run so far, by command label.
PEAKS: dict[str, float] = {}
#: (command, cache state) -> the largest ratio to grep that meets the goal.
GOALS = {("find", "cold"): 10.0, ("find", "warm"): 3.0, ("trace", "cold"): 60.0, ("trace", "warm"): 8.0,
         ("caps", "cold"): 60.0, ("caps", "warm"): 8.0}  # fmt: skip
#: The most memory a cold caps may take, MiB.
CAPS_RSS_GOAL = 1024.0


def verdict(label: str, ratio: float, peak: float) -> str:
    """``ok``/``over`` against the goals for a row's command and cache state ("" for grep)."""
    for (command, state), most in GOALS.items():
        if label.startswith(f"sgtrace {command} ") and f"({state} cache)" in label:
            over = ratio > most or (command == "caps" and state == "cold" and peak > CAPS_RSS_GOAL)
            limit = f"<= {most:g}x" + (f", <= {CAPS_RSS_GOAL:.0f} MiB" if (command, state) == ("caps", "cold") else "")
            return f"{'over' if over else 'ok'} ({limit})"
    return ""


def _time(command: list[str], runs: int, prepare: object = None, label: str = "") -> float:
    """Median wall time of *runs* fresh processes; their peak RSS goes into PEAKS."""
    samples = []
    for _ in range(runs):
        if callable(prepare):
            prepare()
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        samples.append(time.perf_counter() - start)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited with {code}")
        name = label or command[0]
        PEAKS[name] = max(PEAKS.get(name, 0.0), usage.ru_maxrss / 1024)  # KiB on Linux
    return statistics.median(samples)


def _sgtrace(*args: str) -> list[str]:
    return [sys.executable, "-m", "sgtrace", *args]


def _arguments(command: str, attribute: str, tree: Path) -> list[str]:
    if command == "caps":
        return ["caps", str(tree), "--attr", attribute]
    return [command, attribute, str(tree)]


def _cold_and_warm(command: str, attribute: str, tree: Path, runs: int, scratch: Path, grep: float) -> list[Row]:
    cold_dir = scratch / f"{command}-cold"
    warm_dir = scratch / f"{command}-warm"

    def empty() -> None:
        shutil.rmtree(cold_dir, ignore_errors=True)

    arguments = _arguments(command, attribute, tree)
    cold_label = f"sgtrace {command} {attribute} (cold cache)"
    warm_label = f"sgtrace {command} {attribute} (warm cache)"
    cold = _time(_sgtrace(*arguments, "--cache-dir", str(cold_dir)), runs, empty, cold_label)
    subprocess.run(_sgtrace(*arguments, "--cache-dir", str(warm_dir)), capture_output=True, check=False)
    warm = _time(_sgtrace(*arguments, "--cache-dir", str(warm_dir)), runs, None, warm_label)
    return [(cold_label, cold, cold / grep), (warm_label, warm, warm / grep)]


def bench(tree: Path, runs: int, attributes: tuple[str, ...], commands: tuple[str, ...]) -> list[Row]:
    """(label, median seconds, ratio to grep) for each measured command."""
    rows: list[Row] = []
    scratch = Path(tempfile.mkdtemp(prefix="sgtrace-bench-"))
    try:
        for attribute in attributes:
            grep = _time(["grep", "-rn", f"{attribute}\\s*=", str(tree)], runs, None, "grep")
            rows.append((f"grep -rn '{attribute}\\s*='", grep, 1.0))
            for command in commands:
                if command == "find" or attribute == attributes[0]:
                    rows.extend(_cold_and_warm(command, attribute, tree, runs, scratch, grep))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _compile_sgtrace() -> None:
    """Byte-compile the sgtrace being timed, as ``pip install`` does: an editable checkout run with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every module on every run (~40 ms)."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("sgtrace")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", default=NEWEST, help="SGLang version to fetch (default: %(default)s)")
    parser.add_argument("--tree", type=Path, help="analyse this tree instead of a release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--attribute", action="append", help="attribute(s) to find (default: three)")
    parser.add_argument("--command", action="append", choices=COMMANDS, help="command(s) to time (default: all)")
    options = parser.parse_args()
    _compile_sgtrace()
    tree = options.tree or release_dir(f"sglang=={options.release}", cache_dir())
    files = list(tree.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(
        f"tree: {options.tree or 'sglang==' + options.release}: {len(files)} files, {lines:,} lines; "
        f"median of {options.runs} runs; {shutil.which('grep')}\n"
    )
    print("| command | median s | x grep | peak RSS MiB | goal |\n|---|---:|---:|---:|---|")
    commands = tuple(options.command or COMMANDS)
    for label, seconds, ratio in bench(tree, options.runs, tuple(options.attribute or ATTRIBUTES), commands):
        peak = PEAKS.get(label, PEAKS.get("grep", 0.0))
        print(f"| {label} | {seconds:.3f} | {ratio:.1f} | {peak:.0f} | {verdict(label, ratio, peak)} |")


if __name__ == "__main__":
    main()
