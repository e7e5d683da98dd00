"""Time and peak memory of sgtrace on hostile files, one tree per file.

    python bench/hostile.py                 # every case, every command
    python bench/hostile.py --case chain    # one case
    python bench/hostile.py --timeout 60

Each case is one module written into a tree of its own, shaped so that the
hostile part lies on the slice's path (inside the function that computes the
pool size from ``mem_fraction_static``), then ``find``, ``trace`` and ``caps``
run on it as fresh processes with an empty cache. Prints a Markdown table:
seconds, peak RSS (``wait4``), exit code, bytes written to stdout, and the
first line of stderr. The cases are those of ``tests/hostile_cases.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile_cases import CASES  # noqa: E402

COMMANDS = {
    "find": ["find", "max_total_num_tokens"],
    "trace": ["trace", "max_total_num_tokens"],
    "caps": ["caps"],
}


def run(arguments: list[str], timeout: float) -> tuple[float, float, int | str, int, str]:
    """(seconds, peak RSS MiB, exit code or 'timeout', stdout bytes, first stderr line) of one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "sgtrace", *arguments], stdout=out, stderr=err)
        deadline = start + timeout
        code: int | str = "timeout"
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                peak = usage.ru_maxrss / 1024
                break
            if time.monotonic() > deadline:
                proc.kill()
                _, _, usage = os.wait4(proc.pid, 0)
                peak = usage.ru_maxrss / 1024
                break
            time.sleep(0.02)
        elapsed = time.monotonic() - start
        out.seek(0, os.SEEK_END)
        err.seek(0)
        first = err.readline(300).decode("utf-8", "replace").strip()
        return elapsed, peak, code, out.tell(), first


def write_case(name: str, path: Path) -> int:
    """Write one case's module in a child process (a large case would otherwise raise the high-water mark
    of memory that every later child inherits from this process: ``ru_maxrss`` survives fork and exec)."""
    path.parent.mkdir(parents=True)
    script = "import sys; from tests.hostile_cases import CASES; open(sys.argv[2], 'w').write(CASES[sys.argv[1]]())"
    subprocess.run([sys.executable, "-c", script, name, str(path)], cwd=ROOT, check=True)
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="run only this case (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is killed")
    args = parser.parse_args()
    print("| case | file KB | command | s | peak MiB | exit | stdout bytes | stderr (first line) |")
    print("|---|---:|---|---:|---:|---|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        for name in args.case or sorted(CASES):
            tree = Path(work) / name
            length = write_case(name, tree / "pkg" / "runner.py")
            for command, words in COMMANDS.items():
                cache = Path(work) / f"cache-{name}-{command}"
                seconds, peak, code, size, first = run([*words, str(tree), "--cache-dir", str(cache)], args.timeout)
                print(
                    f"| {name} | {length // 1024} | {command} | {seconds:.2f} | {peak:.0f} | {code} | {size} "
                    f"| {first[:90].replace('|', '/')} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
