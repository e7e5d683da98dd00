"""Benchmark sgtrace against grep on a real SGLang release.

    python bench/bench.py                       # newest release pinned in tests/releases.py
    python bench/bench.py --release 0.5.9 --runs 5
    python bench/bench.py --tree /path/to/tree  # any tree (no diff row)
    python bench/bench.py --baseline /tmp/old/.venv/bin/python   # an older sgtrace timed beside, alternating

Each command runs as a user runs it (a fresh process, sgtrace byte-compiled as an install leaves
it). "cold" uses a new empty cache directory for every run; "warm" reuses one filled beforehand;
"second attribute" runs ``caps --attr`` of another attribute in a cache that a ``caps`` of the first
filled (the tree warm, the query cold); "diff" compares the release before (``--old``) with this one,
both cold; "report" writes the HTML page, cold.

Prints a Markdown table: median wall seconds, the ratio to grep's median (or, for diff and report, to
the cold caps'), median CPU seconds (user + system, the workers included), the peak resident memory
of any one process of the command (as ``wait4`` reports it), and whether the goals of issue 21 hold:

| command | goal |
|---|---|
| caps cold | <= 20x grep, <= 300 MiB |
| trace cold | <= 20x grep |
| caps / trace warm | <= 3x grep |
| caps of a second attribute after the first | <= 6x grep |
| diff of two releases, both cold | <= 1.6x one cold caps |
| report cold | <= 1.2x one cold caps |
| find cold (page_size is the hardest) | <= 6x grep |
| find warm (issue 11's, kept) | <= 3x grep |
| history of --old..--release, cold (releases fetched beforehand) | <= 4x one cold caps, <= 600 MiB |
| explain with a three-start-up journal (EAGLE3), cold (issue 52) | <= 1.5x one cold caps, <= 350 MiB |
| diff --old --release with the journal, both cold (issue 52) | <= 2.5x one cold caps, <= 400 MiB |
| history of --old..--release with the journal, cold (issue 52) | <= 6x one cold caps, <= 600 MiB |

The history row also prints the files of all the releases of the range, how many distinct contents
they hold, and how many of those the run parsed (the content store's modules and scans after a run).

With ``--baseline``, every row is also timed with that interpreter's sgtrace, the runs alternating
(new, old, new, old...) so both see the same load; the table gains the old medians and new/old.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.fetch import release_dir  # noqa: E402
from tests.releases import MIDDLE, NEWEST, cache_dir  # noqa: E402

ATTRIBUTES = ("max_total_num_tokens", "page_size", "max_running_requests")
#: The attribute whose caps are asked after the first's (a cap of the scheduler's, in every release).
SECOND = "max_running_requests"
#: Commands measured; trace, caps, the second attribute, diff and report run for the first attribute only.
COMMANDS = (
    "find",
    "trace",
    "caps",
    "second",
    "diff",
    "report",
    "history",
    "explain",
    "diff-log",
    "history-log",
    "checkout",
    "history-git",
)
#: The start-ups explain, diff-log and history-log read: three, an EAGLE3 draft loaded after the target's graphs.
JOURNAL = "eagle3 journal (a draft after the target's graphs)"

#: (row kind, cache state) -> the largest ratio that meets the goal (to grep, or to a cold caps for diff/report).
GOALS = {("find", "cold"): 6.0, ("find", "warm"): 3.0, ("trace", "cold"): 20.0, ("trace", "warm"): 3.0,
         ("caps", "cold"): 20.0, ("caps", "warm"): 3.0, ("second", ""): 6.0, ("diff", ""): 1.6,
         ("report", ""): 1.2, ("history", ""): 4.0, ("explain", ""): 1.5, ("diff-log", ""): 2.5,
         ("history-log", ""): 6.0}  # fmt: skip
#: The most memory a cold caps may take, MiB.
CAPS_RSS_GOAL = 300.0
#: The most memory any one process of a history may take, MiB.
HISTORY_RSS_GOAL = 600.0
#: (row kind, cache state) -> the most memory any one process of the command may take, MiB.
RSS_GOALS = {("caps", "cold"): CAPS_RSS_GOAL, ("history", ""): HISTORY_RSS_GOAL, ("explain", ""): 350.0,
             ("diff-log", ""): 400.0, ("history-log", ""): 600.0, ("checkout", ""): 400.0,
             ("history-git", ""): 600.0}  # fmt: skip
#: Commits ``history --git`` reads in its row (issue 53): the newest releases one commit each, then commits that
#: touch a file the slice reads or only the docs, in turn.
GIT_COMMITS = 30
GIT_RELEASES = 8


@dataclass
class Timing:
    """The samples of one command with one interpreter."""

    #: Wall seconds of each run.
    wall: list[float] = field(default_factory=list)
    #: User + system CPU seconds of each run, its reaped children (the workers) included.
    cpu: list[float] = field(default_factory=list)
    #: The largest resident set of any one process of any run, MiB.
    peak: float = 0.0

    def median(self) -> float:
        return statistics.median(self.wall)


@dataclass
class Row:
    """One line of the table."""

    label: str
    kind: str
    state: str
    #: Interpreter -> its timing (the first is the sgtrace under test).
    timings: list[Timing]
    #: What the ratio is taken to: "grep" or "caps".
    unit: str = "grep"


#: Where the commands run: not a checkout, so that ``python -m sgtrace`` imports each interpreter's own sgtrace
#: (``-m`` puts the current folder first on the path: run from a checkout, every interpreter would time it).
NEUTRAL = tempfile.gettempdir()


def _run_once(command: list[str], timing: Timing) -> None:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=NEUTRAL)
    _, status, usage = os.wait4(proc.pid, 0)
    timing.wall.append(time.perf_counter() - start)
    timing.cpu.append(usage.ru_utime + usage.ru_stime)
    timing.peak = max(timing.peak, usage.ru_maxrss / 1024)  # KiB on Linux
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited with {code}")


def _time(commands: list[list[str]], runs: int, prepare: Callable[[], None] | None = None) -> list[Timing]:
    """Time each command *runs* times, alternating between them; *prepare* runs before every run."""
    timings = [Timing() for _ in commands]
    for _ in range(runs):
        for command, timing in zip(commands, timings, strict=True):
            if prepare is not None:
                prepare()
            _run_once(command, timing)
    return timings


class Bench:
    """The rows of one bench run: each sgtrace command beside grep."""

    def __init__(self, tree: Path, old: Path | None, runs: int, pythons: list[str], scratch: Path) -> None:
        self.tree, self.old, self.runs, self.pythons, self.scratch = tree, old, runs, pythons, scratch

    def sgtrace(self, *args: str, cache: Path | None = None) -> list[list[str]]:
        """The command for each interpreter (each with a cache folder of its own)."""
        commands = []
        for number, python in enumerate(self.pythons):
            folder = [] if cache is None else ["--cache-dir", f"{cache}-{number}"]
            commands.append([python, "-m", "sgtrace", *args, *folder])
        return commands

    def _empty(self, cache: Path) -> Callable[[], None]:
        def empty() -> None:
            for number in range(len(self.pythons)):
                shutil.rmtree(f"{cache}-{number}", ignore_errors=True)

        return empty

    def grep(self, attribute: str) -> Row:
        timing = _time([["grep", "-rn", f"{attribute}\\s*=", str(self.tree)]], self.runs)[0]
        return Row(f"grep -rn '{attribute}\\s*='", "grep", "", [timing] * len(self.pythons))

    def cold_and_warm(self, command: str, attribute: str) -> list[Row]:
        tree = str(self.tree)
        arguments = ["caps", tree, "--attr", attribute] if command == "caps" else [command, attribute, tree]
        cold, warm = self.scratch / f"{command}-{attribute}-cold", self.scratch / f"{command}-{attribute}-warm"
        rows = [Row(f"sgtrace {command} {attribute} (cold cache)", command, "cold",
                    _time(self.sgtrace(*arguments, cache=cold), self.runs, self._empty(cold)))]  # fmt: skip
        for each in self.sgtrace(*arguments, cache=warm):
            subprocess.run(each, capture_output=True, check=False, cwd=NEUTRAL)
        rows.append(Row(f"sgtrace {command} {attribute} (warm cache)", command, "warm",
                        _time(self.sgtrace(*arguments, cache=warm), self.runs)))  # fmt: skip
        return rows

    def second(self, first: str) -> Row:
        """caps of SECOND in a cache that caps of *first* filled: copied afresh before every run."""
        filled, cache = self.scratch / "second-filled", self.scratch / "second"
        for each in self.sgtrace("caps", str(self.tree), "--attr", first, cache=filled):
            subprocess.run(each, capture_output=True, check=False, cwd=NEUTRAL)

        def refill() -> None:
            for number in range(len(self.pythons)):
                shutil.rmtree(f"{cache}-{number}", ignore_errors=True)
                shutil.copytree(f"{filled}-{number}", f"{cache}-{number}", symlinks=True)

        arguments = ("caps", str(self.tree), "--attr", SECOND)
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, refill)
        return Row(f"sgtrace caps {SECOND} after caps {first} (tree warm, query cold)", "second", "", timings)

    def diff(self) -> Row:
        assert self.old is not None
        cache = self.scratch / "diff"
        timings = _time(self.sgtrace("diff", str(self.old), str(self.tree), cache=cache), self.runs, self._empty(cache))
        return Row(f"sgtrace diff {self.old.name} {self.tree.name} (both cold)", "diff", "", timings, "caps")

    def journal(self) -> str:
        """The journal explain, diff-log and history-log read (written once into the scratch folder)."""
        from tests.journals import SHAPES, journal

        path = self.scratch / "eagle3.journal"
        if not path.exists():
            path.write_text("\n".join(journal(SHAPES[JOURNAL])) + "\n")
        return str(path)

    def explain(self) -> Row:
        cache = self.scratch / "explain"
        arguments = ("explain", str(self.tree), "--log", self.journal())
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, self._empty(cache))
        return Row("sgtrace explain --log (EAGLE3 journal, cold cache)", "explain", "", timings, "caps")

    def diff_log(self) -> Row:
        assert self.old is not None
        cache = self.scratch / "diff-log"
        arguments = ("diff", str(self.old), str(self.tree), "--log", self.journal())
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, self._empty(cache))
        return Row(f"sgtrace diff {self.old.name} {self.tree.name} --log (both cold)", "diff-log", "", timings, "caps")

    def _span(self) -> tuple[str, list[Path]]:
        """``sglang==OLD..NEW`` and the cached tree of every release in it, oldest first."""
        from sgtrace.sources import points

        assert self.old is not None
        span = f"sglang=={_version(self.old)}..{_version(self.tree)}"
        return span, [release_dir(p.text, cache_dir()) for p in points([span], cache_dir())]

    def history(self, log: bool = False) -> Row:
        """``history sglang==OLD..NEW`` in a cache holding every release of the range (linked, fetched before);
        with *log*, with the journal."""
        span, trees = self._span()
        cache = self.scratch / "history"

        def fresh() -> None:
            for number in range(len(self.pythons)):
                folder = Path(f"{cache}-{number}")
                shutil.rmtree(folder, ignore_errors=True)
                (folder / "releases").mkdir(parents=True)
                (folder / "CACHEDIR.TAG").write_bytes((cache_dir() / "CACHEDIR.TAG").read_bytes())
                for tree in trees:
                    shutil.copytree(tree, folder / "releases" / tree.name, copy_function=os.link)

        arguments = ("history", span, *(("--log", self.journal()) if log else ()))
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, fresh)
        print(_parsed(trees, Path(f"{cache}-0") / "store"))
        kind, label = ("history-log", " --log") if log else ("history", "")
        return Row(f"sgtrace history {span}{label} ({len(trees)} releases, cold)", kind, "", timings, "caps")

    def checkout(self) -> Row:
        """explain --log on a git checkout built from the release's wheel (``python/sglang``; issue 53's memory)."""
        repository = self._repository()
        cache = self.scratch / "checkout"
        arguments = ("explain", str(repository), "--log", self.journal())
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, self._empty(cache))
        label = "sgtrace explain --log on a git checkout built from the wheel (cold)"
        return Row(label, "checkout", "", timings, "caps")

    def history_git(self) -> Row:
        """history --git over GIT_COMMITS commits of a repository built from the newest releases' wheels."""
        repository = self._repository()
        cache = self.scratch / "history-git"
        arguments = ("history", "--git", str(repository), f"HEAD~{GIT_COMMITS - 1}..HEAD")
        timings = _time(self.sgtrace(*arguments, cache=cache), self.runs, self._empty(cache))
        return Row(f"sgtrace history --git HEAD~{GIT_COMMITS - 1}..HEAD (cold)", "history-git", "", timings, "caps")

    def _repository(self) -> Path:
        """A git repository: GIT_RELEASES releases up to --release, a commit and a tag each (as
        tests/checkout.py lays them out), then commits up to GIT_COMMITS in all (built once)."""
        from tests.checkout import git, tagged_repository

        repository = self.scratch / "repository"
        if repository.exists():
            return repository
        trees = self._span()[1][-GIT_RELEASES:]
        tagged_repository({_version(tree): tree for tree in trees}, repository)
        touched = repository / "python" / "sglang" / "srt" / "managers" / "scheduler.py"
        for number in range(GIT_COMMITS - len(trees)):
            if number % 2:
                with touched.open("a") as text:
                    text.write(f"# a comment, commit {number}\n")
            else:
                (repository / "NOTES.md").write_text(f"notes {number}\n")
            git(repository, "add", "-A")
            git(repository, "commit", "-q", "-m", f"commit {number}")
        return repository

    def report(self) -> Row:
        cache = self.scratch / "report"
        page = str(self.scratch / "report.html")
        timings = _time(self.sgtrace("report", str(self.tree), "-o", page, cache=cache), self.runs, self._empty(cache))
        return Row("sgtrace report (cold cache)", "report", "", timings, "caps")


def bench(bench: Bench, attributes: tuple[str, ...], commands: tuple[str, ...]) -> list[Row]:
    """Every row asked for, grep first for each attribute."""
    rows: list[Row] = []
    first = attributes[0]
    for attribute in attributes:
        rows.append(bench.grep(attribute))
        for command in ("find", "trace", "caps"):
            if command in commands and (command == "find" or attribute == first):
                rows.extend(bench.cold_and_warm(command, attribute))
        if attribute == first and "second" in commands:
            rows.append(bench.second(first))
        if attribute == first and "diff" in commands and bench.old is not None:
            rows.append(bench.diff())
        if attribute == first and "report" in commands:
            rows.append(bench.report())
        if attribute == first and "history" in commands and bench.old is not None:
            rows.append(bench.history())
        if attribute == first and "explain" in commands:
            rows.append(bench.explain())
        if attribute == first and "diff-log" in commands and bench.old is not None:
            rows.append(bench.diff_log())
        if attribute == first and "history-log" in commands and bench.old is not None:
            rows.append(bench.history(log=True))
        if attribute == first and "checkout" in commands:
            rows.append(bench.checkout())
        if attribute == first and "history-git" in commands and bench.old is not None:
            rows.append(bench.history_git())
    return rows


def verdict(row: Row, ratio: float, peak: float) -> str:
    """``ok``/``over`` against the goal of a row's command and cache state ("" for grep and unmeasured goals)."""
    most = GOALS.get((row.kind, row.state))
    memory = RSS_GOALS.get((row.kind, row.state))
    if most is None and memory is None:
        return ""
    over = (most is not None and ratio > most) or (memory is not None and peak > memory)
    goals = [f"<= {most:g}x {row.unit}"] if most is not None else []
    limit = ", ".join(goals + ([f"<= {memory:.0f} MiB"] if memory else []))
    return f"{'over' if over else 'ok'} ({limit})"


def table(rows: list[Row], baseline: bool) -> str:
    """The Markdown table of the rows (ratios to the grep of the same attribute, or to the cold caps)."""
    head = "| command | median s | x grep | x caps | CPU s | peak RSS MiB | goal |"
    rule = "|---|---:|---:|---:|---:|---:|---|"
    if baseline:
        head += " old median s | old x | old CPU s | new/old |"
        rule += "---:|---:|---:|---:|"
    lines = [head, rule]
    grep: list[float] = [1.0, 1.0]
    caps: list[float] = [1.0, 1.0]
    for row in rows:
        medians = [t.median() for t in row.timings]
        if row.kind == "grep":
            grep = medians * 2
        if (row.kind, row.state) == ("caps", "cold"):
            caps = medians
        to_grep = [m / g for m, g in zip(medians, grep, strict=False)]
        to_caps = [m / c for m, c in zip(medians, caps, strict=False)] if row.unit == "caps" else []
        ratio = to_caps[0] if to_caps else to_grep[0]
        first = row.timings[0]
        shown = f"{to_caps[0]:.2f}" if to_caps else ""
        cpu = statistics.median(first.cpu)
        line = f"| {row.label} | {medians[0]:.3f} | {to_grep[0]:.1f} | {shown} | {cpu:.2f} | {first.peak:.0f} | "
        line += f"{verdict(row, ratio, first.peak)} |"
        if baseline:
            old_ratio = to_caps[1] if to_caps else to_grep[1]
            old_cpu = statistics.median(row.timings[1].cpu)
            digits = 2 if to_caps else 1
            line += f" {medians[1]:.3f} | {old_ratio:.{digits}f} | {old_cpu:.2f} | {medians[0] / medians[1]:.2f} |"
        lines.append(line)
    return "\n".join(lines)


def _version(tree: Path) -> str:
    """The version of a release's cached tree (``.../sglang-0.5.23`` -> ``0.5.23``)."""
    return tree.name.partition("-")[2]


def _parsed(trees: list[Path], store: Path) -> str:
    """The files of all the trees, their distinct contents, and what the store holds after a run."""
    import hashlib
    import json

    total, distinct = 0, set()
    for tree in trees:
        for path in tree.rglob("*.py"):
            total += 1
            distinct.add(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())
    modules = scans = 0
    for entry in store.rglob("*.json"):
        try:
            data = json.loads(entry.read_text()).get("data")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(data, dict) and "outline" in data:
            modules += 1
        elif isinstance(data, dict) and "accesses" in data:
            scans += 1
    return (
        f"history: {total:,} files in the {len(trees)} releases, {len(distinct):,} distinct contents; "
        f"parsed: {modules:,} modules outlined for the slices, {scans:,} files scanned for the attribute"
    )


def _compile_sgtrace(python: str) -> str:
    """Byte-compile the sgtrace being timed, as ``pip install`` does (an editable checkout run with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every module on every run, ~40 ms); its folder."""
    script = (
        "import compileall, importlib.util\n"
        "spec = importlib.util.find_spec('sgtrace')\n"
        "for folder in spec.submodule_search_locations or ():\n"
        "    compileall.compile_dir(folder, quiet=1)\n"
        "    print(folder)\n"
    )
    done = subprocess.run([python, "-c", script], check=True, cwd=NEUTRAL, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", default=NEWEST, help="SGLang version to fetch (default: %(default)s)")
    parser.add_argument("--old", default=MIDDLE, help="the release diff compares it with (default: %(default)s)")
    parser.add_argument("--tree", type=Path, help="analyse this tree instead of a release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--attribute", action="append", help="attribute(s) to find (default: three)")
    parser.add_argument("--command", action="append", choices=COMMANDS, help="command(s) to time (default: all)")
    parser.add_argument("--baseline", help="a Python whose sgtrace is timed beside this one, runs alternating")
    options = parser.parse_args()
    pythons = [sys.executable, *([options.baseline] if options.baseline else [])]
    timed = [f"{python} -> {_compile_sgtrace(python)}" for python in pythons]
    tree = options.tree or release_dir(f"sglang=={options.release}", cache_dir())
    old = None if options.tree else release_dir(f"sglang=={options.old}", cache_dir())
    files = list(tree.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(
        f"tree: {options.tree or 'sglang==' + options.release}: {len(files)} files, {lines:,} lines; "
        f"median of {options.runs} runs; {shutil.which('grep')}; load average {os.getloadavg()[0]:.1f} at the start"
    )
    print("timed: " + "; ".join(timed) + "\n")
    scratch = Path(tempfile.mkdtemp(prefix="sgtrace-bench-"))
    try:
        runner = Bench(tree, old, options.runs, pythons, scratch)
        rows = bench(runner, tuple(options.attribute or ATTRIBUTES), tuple(options.command or COMMANDS))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(table(rows, options.baseline is not None))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
