"""Where the time of a cold ``caps``, ``diff`` or ``report`` goes, by stage.

    python bench/profile.py                        # caps and diff on the newest release(s), cold
    python bench/profile.py --command caps --runs 3
    python bench/profile.py --warm                 # the same, in a cache filled by a first run
    python bench/profile.py --command second       # caps of another attribute after a caps of the first
    python bench/profile.py --command report       # the page, cold (written into a temporary folder)

Runs the command in this process (as ``python -m sgtrace`` would, output thrown away), with a fresh
cache folder, after wrapping the functions that make up each stage. A stage's time is its own: the
time spent in a stage nested in it (a module parsed while the slice runs) is the inner stage's.
Wall and CPU time (this process's thread) are both shown: on a busy machine the wall time of a
stage grows with the load, its CPU time much less. Worker processes are not seen; the time the
parent waits for them is a stage of its own (whether there are workers depends on the cores idle
when the run starts: see sgtrace.index.findpass.spare_cpus). A function handed to the workers is not
wrapped (it must pickle by name). The imports of the command's modules are timed first, apart (they
are what a fresh process loads).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The attribute asked about second (as bench.py asks it).
SECOND = "max_running_requests"

#: (module, object path, stage): the functions that make up each stage, innermost wins.
STAGES = (
    ("sgtrace.api", "_discover", "discover the tree"),
    ("sgtrace.index.findpass", "scan_tree", "find: read, prefilter, digest"),
    ("sgtrace.index.findpass", "_job", "find: scan inline"),
    ("concurrent.futures._base", "Future.result", "find/index: wait for workers"),
    ("sgtrace.index.identifiers", "IdentifierIndex.__init__", "identifier index"),
    ("sgtrace.index.project", "Project._load", "modules: load (cache or parse)"),
    ("sgtrace.parse", "parse", "parse: tree-sitter + error check"),
    ("sgtrace.parse", "parse_tree", "parse: tree-sitter again (kept trees dropped)"),
    ("sgtrace.index.outline", "outline", "modules: outline"),
    ("sgtrace.index.body", "read_body", "bodies and statements"),
    ("sgtrace.index.body", "read_statement", "bodies and statements"),
    ("sgtrace.index.project", "Project.matching", "byte search of the tree"),
    ("sgtrace.graph.slicer", "Slicer.run", "slice (and type questions)"),
    ("sgtrace.graph.build", "calls_within_classes", "slice (and type questions)"),
    ("sgtrace.graph.reach", "reach", "reach (explain's way in)"),
    ("sgtrace.analyses.caps", "check", "caps analysis"),
    ("sgtrace.analyses.diff", "compare", "diff: pairing"),
    ("sgtrace.analyses.focus", "focus", "report: the focused view"),
    ("sgtrace.report.layout", "layout", "report: layout (grandalf)"),
    ("sgtrace.report.html", "render", "report: the page (templates, SVG)"),
    ("sgtrace.graph.store", "to_data", "graph to/from JSON"),
    ("sgtrace.graph.store", "from_data", "graph to/from JSON"),
    ("sgtrace.cache", "JsonCache.get", "cache: read"),
    ("sgtrace.cache", "JsonCache.put", "cache: write"),
    ("sgtrace.cache", "Manifest.__init__", "cache: read"),
    ("sgtrace.cache", "Manifest.save", "cache: write"),
)
#: Stages of issue 21's modules, when sgtrace has them (named here so both profiles read the same).
OPTIONAL_STAGES = (
    ("sgtrace.index.chunks", "index_tree", "find: read, prefilter, digest"),
    ("sgtrace.index.chunks", "Workers.submit", "find/index: chunks read inline, or handed out"),
    ("sgtrace.index.identifiers", "IdentifierIndex.get", "byte search of the tree"),
    ("sgtrace.parse", "parse_range", "parse: a function's bytes alone"),
    ("sgtrace.index.project", "Project.prefetch", "modules: handed to the workers"),
    ("sgtrace.index.project", "Project.save", "cache: write"),
)


class Clock:
    """Exclusive wall and CPU time per stage, kept with a stack of the stages entered."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[str] = ["other (CLI, rendering, glue)"]
        self.mark = (time.perf_counter(), time.thread_time())

    def switch(self, stage: str | None) -> None:
        """Charge the time since the last switch to the stage on top, then push *stage* (None: pop)."""
        now = (time.perf_counter(), time.thread_time())
        top = self.stack[-1]
        self.wall[top] = self.wall.get(top, 0.0) + now[0] - self.mark[0]
        self.cpu[top] = self.cpu.get(top, 0.0) + now[1] - self.mark[1]
        self.mark = now
        if stage is None:
            self.stack.pop()
        else:
            self.stack.append(stage)
            self.calls[stage] = self.calls.get(stage, 0) + 1

    def wrap(self, function: Callable[..., Any], stage: str) -> Callable[..., Any]:
        """*function*, its time charged to *stage* (a call inside the same stage is not pushed again)."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.stack[-1] == stage:
                return function(*args, **kwargs)
            self.switch(stage)
            try:
                return function(*args, **kwargs)
            finally:
                self.switch(None)

        timed.__wrapped__ = function  # type: ignore[attr-defined]
        return timed


def _patch(clock: Clock, module_name: str, path: str, stage: str) -> bool:
    """Wrap one function where it is defined and wherever a module imported it by name."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return False
    owner: Any = module
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part, None)
        if owner is None:
            return False
    original = getattr(owner, name, None)
    if original is None:
        return False
    timed = clock.wrap(original, stage)
    setattr(owner, name, timed)
    if not parents:
        for loaded in list(sys.modules.values()):
            space = getattr(loaded, "__dict__", {})
            for key, value in list(space.items()):
                if value is original:
                    setattr(loaded, key, timed)
    return True


COMMAND_MODULES = (
    "sgtrace.cli",
    "sgtrace.api",
    "sgtrace.index.findpass",
    "sgtrace.index.project",
    "sgtrace.index.scan",
    "sgtrace.graph.build",
    "sgtrace.graph.store",
    "sgtrace.analyses.caps",
    "sgtrace.analyses.diff",
    "sgtrace.report.caps_text",
    "sgtrace.report.diff_text",
    "networkx",
)


def profile(arguments: list[str], cache: Path, warm: bool, first: list[str] | None = None) -> tuple[float, Clock]:
    """Run one command in this process: (its wall time, the stages' clock). *first* (or, when *warm*, the
    command itself) runs before, in the same cache, untimed."""
    from sgtrace.cli import main

    shutil.rmtree(cache, ignore_errors=True)
    sink = io.StringIO()
    for before in [first] if first else [arguments] if warm else []:
        with (
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(io.StringIO()),
            contextlib.suppress(SystemExit),
        ):
            main([*before, "--cache-dir", str(cache)])
    _reset_memos()
    clock = Clock()
    undo = []
    for module_name, path, stage in STAGES + OPTIONAL_STAGES:
        undo.append((module_name, path, _original(module_name, path)))
        _patch(clock, module_name, path, stage)
    start = time.perf_counter()
    clock.mark = (start, time.thread_time())
    try:
        with contextlib.redirect_stdout(sink), contextlib.suppress(SystemExit):
            main([*arguments, "--cache-dir", str(cache)])
    finally:
        clock.switch(None)
        for module_name, path, original in undo:
            if original is not None:
                _restore(module_name, path, original)
    return time.perf_counter() - start, clock


def _original(module_name: str, path: str) -> Any:
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    for part in path.split("."):
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    return owner


def _restore(module_name: str, path: str, original: Any) -> None:
    owner: Any = importlib.import_module(module_name)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    current = getattr(owner, name)
    setattr(owner, name, original)
    if not parents:
        for loaded in list(sys.modules.values()):
            space = getattr(loaded, "__dict__", {})
            for key, value in list(space.items()):
                if value is current:
                    setattr(loaded, key, original)


def _reset_memos() -> None:
    """Forget what an earlier run in this process decided about cache folders (each run starts afresh)."""
    from sgtrace import cache, cachedir

    cachedir._JUDGED.clear()
    cache._MADE.clear()


def _imports() -> float:
    start = time.perf_counter()
    for name in COMMAND_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    return time.perf_counter() - start


def _table(title: str, runs: list[tuple[float, Clock]], imports: float) -> str:
    stages = sorted(
        {s for _, c in runs for s in c.wall}, key=lambda s: -statistics.median(c.wall.get(s, 0) for _, c in runs)
    )
    total = statistics.median(t for t, _ in runs)
    lines = [f"### {title}: {total:.2f} s (median of {len(runs)}), and {imports:.2f} s of imports before", "",
             "| stage | wall s | share | CPU s | calls |", "|---|---:|---:|---:|---:|"]  # fmt: skip
    for stage in stages:
        wall = statistics.median(c.wall.get(stage, 0.0) for _, c in runs)
        cpu = statistics.median(c.cpu.get(stage, 0.0) for _, c in runs)
        calls = statistics.median(c.calls.get(stage, 0) for _, c in runs)
        lines.append(f"| {stage} | {wall:.3f} | {wall / total:.0%} | {cpu:.3f} | {calls:.0f} |")
    return "\n".join(lines)


def main() -> None:
    from sgtrace.fetch import release_dir
    from tests.releases import MIDDLE, NEWEST, cache_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", default=NEWEST, help="the release of caps, and diff's new one")
    parser.add_argument("--old", default=MIDDLE, help="diff's old release")
    parser.add_argument("--command", choices=("caps", "diff", "second", "report"), action="append")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", action="store_true", help="time a run in a cache filled by a first run")
    parser.add_argument("--jobs", help="-j for the command (default: as many workers as cores idle)")
    options = parser.parse_args()
    imports = _imports()
    new = str(release_dir(f"sglang=={options.release}", cache_dir()))
    old = str(release_dir(f"sglang=={options.old}", cache_dir()))
    scratch = Path(tempfile.mkdtemp(prefix="sgtrace-profile-"))
    commands = {
        "caps": ["caps", new],
        "diff": ["diff", old, new],
        "second": ["caps", new, "--attr", SECOND],
        "report": ["report", new, "-o", str(scratch / "report.html")],
    }
    if options.jobs:
        commands = {name: [*arguments, "-j", options.jobs] for name, arguments in commands.items()}
    state = "warm" if options.warm else "cold"
    try:
        for name in options.command or ("caps", "diff"):
            first = ["caps", new] if name == "second" else None
            runs = [profile(commands[name], scratch / "cache", options.warm, first) for _ in range(options.runs)]
            print(_table(f"{' '.join(commands[name][:1])} {state} ({' -> '.join(commands[name][1:])})", runs, imports))
            print()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
