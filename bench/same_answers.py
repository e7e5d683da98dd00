"""Record sgtrace's answers on real releases, or check that they are byte-equal to a recording.

    python bench/same_answers.py record /tmp/answers-before     # with the code as it is now
    python bench/same_answers.py check /tmp/answers-before      # after a change: exit 1 on any difference

Every command (find, trace, caps, explain, diff, report, graph) runs as a user runs it, in a fresh
process, in text and JSON (and the other formats a command has), on 0.4.6, 0.5.9 and 0.5.23. Each
runs twice: once with an empty cache of its own ("cold"), and once in a cache shared, in order, by
every command on every release ("shared": what one run learnt of a file is reused by the next, across
queries and releases). Both must give the recorded bytes: stdout, exit code, and stderr with the cache
folder's path put as ``<cache>``.

In the shared cache, find's count of the files it parsed (on stderr) is not compared: a file whose
bytes an earlier release had is not parsed again.

A report's drawing is compared with its coordinates (decimal numbers) masked: its layout changes from
run to run of the same code (grandalf's ``Graph`` keeps each component's edges in a set of objects
hashed by their address, graphs.py:728), everything else on the page is compared byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.fetch import release_dir  # noqa: E402
from tests.releases import MIDDLE, NEWEST, OLDEST, cache_dir  # noqa: E402

RELEASES = (OLDEST, MIDDLE, NEWEST)
LOG = ROOT / "tests" / "fixtures" / "logs" / "h20_three_startups.journal"


def commands(trees: dict[str, str]) -> dict[str, list[str]]:
    """Name -> arguments, for every answer recorded."""
    found: dict[str, list[str]] = {}
    for version in RELEASES:
        tree = trees[version]
        each = {
            "find": ["find", "max_total_num_tokens", tree],
            "find-json": ["find", "max_total_num_tokens", tree, "--format", "json"],
            "find-page_size-reads": ["find", "page_size", tree, "--reads", "--names", "--format", "json"],
            "trace": ["trace", "max_total_num_tokens", tree],
            "trace-json": ["trace", "max_total_num_tokens", tree, "--format", "json"],
            "caps": ["caps", tree],
            "caps-json": ["caps", tree, "--format", "json"],
            "caps-sarif": ["caps", tree, "--format", "sarif"],
            "caps-page_size": ["caps", tree, "--attr", "page_size", "--format", "json"],
            "caps-max_running_requests": ["caps", tree, "--attr", "max_running_requests", "--format", "json"],
            "explain": ["explain", tree, "--log", str(LOG)],
            "explain-json": ["explain", tree, "--log", str(LOG), "--format", "json"],
            "explain-nolog-json": ["explain", tree, "--format", "json"],
            "graph-json": ["graph", "max_total_num_tokens", tree, "--json"],
            "graph-focus": ["graph", "max_total_num_tokens", tree, "--focus", "budget"],
            "report": ["report", tree, "-o", "-"],
            "report-log": ["report", tree, "--log", str(LOG), "-o", "-"],
        }
        found.update({f"{version}/{name}": arguments for name, arguments in each.items()})
    for old, new in ((OLDEST, MIDDLE), (MIDDLE, NEWEST)):
        pair = f"{old}-{new}"
        a, b = trees[old], trees[new]
        found[f"diff/{pair}"] = ["diff", a, b]
        found[f"diff/{pair}-json"] = ["diff", a, b, "--format", "json"]
        found[f"diff/{pair}-markdown"] = ["diff", a, b, "--format", "markdown"]
        found[f"diff/{pair}-log-json"] = ["diff", a, b, "--log", str(LOG), "--format", "json"]
    found[f"report/{MIDDLE}-{NEWEST}-against"] = ["report", trees[NEWEST], "--against", trees[MIDDLE], "-o", "-"]
    return found


def run(arguments: list[str], cache: Path) -> bytes:
    """stdout, exit code and stderr of one run, as one document (the cache's path put as ``<cache>``)."""
    done = subprocess.run(  # not from a checkout: -m would import the sgtrace of the current folder
        [sys.executable, "-m", "sgtrace", *arguments, "--cache-dir", str(cache)],
        capture_output=True,
        check=False,
        cwd=cache.parent,
    )
    err = done.stderr.replace(str(cache).encode(), b"<cache>")
    return b"exit %d\n--- stderr\n%s--- stdout\n%s" % (done.returncode, err, done.stdout)


def answers(trees: dict[str, str], only: str | None) -> dict[str, bytes]:
    """Every answer, cold and in the shared cache."""
    found: dict[str, bytes] = {}
    scratch = Path(tempfile.mkdtemp(prefix="sgtrace-answers-"))
    try:
        shared = scratch / "shared"
        for name, arguments in commands(trees).items():
            if only and only not in name:
                continue
            cold = scratch / "cold"
            shutil.rmtree(cold, ignore_errors=True)
            found[f"{name}.cold"] = run(arguments, cold)
            found[f"{name}.shared"] = run(arguments, shared)
            print(f"{name}: {len(found[f'{name}.cold'])} bytes", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return found


def same(name: str, recorded: bytes, found: bytes) -> bool:
    """Whether an answer is the recorded one (a report's coordinates masked: see the module's docstring)."""
    if "report" in name:
        recorded, found = (_DECIMAL.sub(b"#", data) for data in (recorded, found))
    if name.endswith(".shared"):
        recorded, found = (_PARSED.sub(b", # parsed", data) for data in (recorded, found))
    return recorded == found


_DECIMAL = re.compile(rb"-?\d+\.\d+")
_PARSED = re.compile(rb", \d+ parsed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("record", "check"))
    parser.add_argument("folder", type=Path, help="where the recording is (or goes)")
    parser.add_argument("--only", help="only the answers whose name contains this")
    options = parser.parse_args()
    trees = {v: str(release_dir(f"sglang=={v}", cache_dir())) for v in RELEASES}
    found = answers(trees, options.only)
    if options.action == "record":
        options.folder.mkdir(parents=True, exist_ok=True)
        for name, data in found.items():
            path = options.folder / (name.replace("/", "_"))
            path.write_bytes(data)
        index = {name: hashlib.sha256(data).hexdigest() for name, data in found.items()}
        (options.folder / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True))
        print(f"recorded {len(found)} answers in {options.folder}")
        return
    differ = []
    for name, data in sorted(found.items()):
        path = options.folder / name.replace("/", "_")
        if not path.exists() or not same(name, path.read_bytes(), data):
            differ.append(name)
            (options.folder / "new").mkdir(exist_ok=True)
            (options.folder / "new" / path.name).write_bytes(data)
    print(f"{len(found) - len(differ)} of {len(found)} answers byte-equal" + (f"; differ: {differ}" if differ else ""))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
