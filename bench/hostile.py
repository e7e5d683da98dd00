"""Time and peak memory of sgtrace on hostile files, one tree per file.

    python bench/hostile.py                 # every case, every command
    python bench/hostile.py --case chain    # one case
    python bench/hostile.py --timeout 60
    python bench/hostile.py --curves        # each growing shape at 100, 300, 1,000 and 3,000
    python bench/hostile.py --curves --shape mixin_methods --sizes 1000,3000

Each case is one module written into a tree of its own, shaped so that the
hostile part lies on the slice's path (inside the function that computes the
pool size from ``mem_fraction_static``), then ``find``, ``trace`` and ``caps``
run on it as fresh processes with an empty cache. Prints a Markdown table:
seconds, peak RSS (``wait4``), exit code, bytes written to stdout, and the
first line of stderr. The cases are those of ``tests/hostile_cases.py``.

With ``--curves``, the growing shapes of ``tests/hostile_cases.py`` (``SHAPES``: chained targets,
inheritance chains and diamonds, mixins of many methods, many writes in one function, wide unpackings,
fans of calls, long operand chains; each a small tree with the budget flowing through it) run ``caps``
(and ``find``) at each size, ``--max-nodes 1000000`` so the slice reaches the whole form: how the time
and memory grow with the size is the curve, which must stay linear or n log n.
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

from tests.hostile_cases import CASES, SHAPES  # noqa: E402

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


def curves(shapes: list[str], sizes: list[int], timeout: float) -> None:
    """The growing shapes: one row per shape, size and command."""
    print("| shape | n | files KB | command | s | peak MiB | exit | stdout bytes | stderr (first line) |")
    print("|---|---:|---:|---|---:|---:|---|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        for name in shapes:
            for n in sizes:
                tree = Path(work) / f"{name}-{n}"
                length = write_shape(name, n, tree)
                for command, words in {"find": COMMANDS["find"], "caps": ["caps", "--max-nodes", "1000000"]}.items():
                    cache = Path(work) / f"cache-{name}-{n}-{command}"
                    arguments = [*words, str(tree), "--cache-dir", str(cache)]
                    seconds, peak, code, size, first = run(arguments, timeout)
                    print(
                        f"| {name} | {n} | {length // 1024} | {command} | {seconds:.2f} | {peak:.0f} | {code} | {size} "
                        f"| {first[:90].replace('|', '/')} |",
                        flush=True,
                    )


def write_shape(name: str, n: int, tree: Path) -> int:
    """Write one growing shape's tree in a child process (as :func:`write_case`); its bytes."""
    tree.mkdir(parents=True)
    script = (
        "import sys, pathlib; from tests.hostile_cases import SHAPES\n"
        "for f, text in SHAPES[sys.argv[1]][0](int(sys.argv[2])).items():\n"
        "    pathlib.Path(sys.argv[3], f).write_text(text)"
    )
    subprocess.run([sys.executable, "-c", script, name, str(n), str(tree)], cwd=ROOT, check=True)
    return sum(p.stat().st_size for p in tree.iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="run only this case (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is killed")
    parser.add_argument("--curves", action="store_true", help="the growing shapes at each of --sizes")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="with --curves: only this shape")
    parser.add_argument("--sizes", default="100,300,1000,3000", help="with --curves: the sizes (comma-separated)")
    args = parser.parse_args()
    if args.curves:
        curves(args.shape or list(SHAPES), [int(n) for n in args.sizes.split(",")], args.timeout)
        return
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
