"""The start-up's order on every SGLang release of the registry, three ways: the table read by hand
(tests/release_table.py), the independent ``ast`` reader (tests/test_release_table.py) and the evaluator
(``sgtrace explain --format json``'s ``order``, for an EAGLE3 run).

    python bench/release_table.py                   # every release from 0.4.0 to the newest, fetched into ~/.cache
    python bench/release_table.py --cache DIR --json results.json

Each release is fetched (its wheel's .py files) and explained in a fresh process, one at a time. Prints a line a
release as it goes, then a Markdown table: version | reader | evaluator | table | agree (the three draft_first
answers), and whether the evaluator's sizing function is the table's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from packaging.version import Version  # noqa: E402
from tabulate import tabulate  # noqa: E402

from sgtrace.fetch import every_version, release_dir  # noqa: E402
from tests.release_table import TABLE, row  # noqa: E402
from tests.releases import location  # noqa: E402
from tests.test_release_table import reader_draft_first  # noqa: E402

EXPLAIN = ("--format", "json", "--set", "mem_fraction_static=0.88")
#: An EAGLE3 run; a release without speculative decoding (the table says which) is explained without it.
EAGLE3 = ("--set", "speculative_algorithm=EAGLE3")


def evaluator(tree: Path, speculative: bool) -> tuple[dict[str, Any] | None, float]:
    """The evaluator's ``order`` for *tree* and its wall seconds, in a fresh process."""
    began = time.monotonic()
    run = EAGLE3 if speculative else ()
    command = [sys.executable, "-m", "sgtrace", "explain", str(tree), *EXPLAIN, *run]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    try:
        order: dict[str, Any] | None = json.loads(done.stdout)["order"]
    except (json.JSONDecodeError, KeyError):
        order = {"error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    return order, time.monotonic() - began


def measure(version: str, cache: Path) -> dict[str, Any]:
    """The three answers for ``sglang==version``."""
    tree = release_dir(f"sglang=={version}", cache)
    try:
        reader: bool | None = reader_draft_first(tree)
    except (OSError, SyntaxError, StopIteration, KeyError) as exc:
        reader = None
        print(f"  reader: {type(exc).__name__}: {exc}", flush=True)
    held = row(version)
    order, seconds = evaluator(tree, held.speculative)
    return {
        "version": version,
        "reader": reader,
        "evaluator": None if order is None else order.get("draft_first"),
        "evaluator_sizing": None if order is None else order.get("sizing", order.get("error")),
        "table": held.draft_first,
        "table_sizing": held.sizing,
        "seconds": round(seconds, 1),
    }


def versions(cache: Path, oldest: str) -> list[str]:
    """Every sglang release the registry lists from *oldest* on, oldest first."""
    listed = [v for v in every_version("sglang", cache) if Version(v) >= Version(oldest)]
    return sorted(listed, key=Version)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=location(), help="where releases are fetched (default: the tests')"
    )
    parser.add_argument("--oldest", default=TABLE[0].since)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--render", type=Path, help="print the table of a --json file against the table as it is now")
    options = parser.parse_args()
    if options.render:
        render(json.loads(options.render.read_text()))
        return
    results = []
    for version in versions(options.cache, options.oldest):
        result = measure(version, options.cache)
        results.append(result)
        print(json.dumps(result), flush=True)
        if options.json:
            options.json.write_text(json.dumps(results, indent=1) + "\n")
    render(results)


def render(results: list[dict[str, Any]]) -> None:
    """The Markdown table of *results*, the table's answers taken as the table is now."""
    rows = []
    for r in results:
        r = {**r, "table": row(r["version"]).draft_first, "table_sizing": row(r["version"]).sizing}
        agree = r["reader"] == r["evaluator"] == r["table"]
        sizing = "same" if r["evaluator_sizing"] == r["table_sizing"] else str(r["evaluator_sizing"])
        rows.append((r["version"], r["reader"], r["evaluator"], r["table"], "yes" if agree else "NO", sizing))
    print(
        tabulate(
            rows, headers=("version", "reader", "evaluator", "table", "agree", "evaluator's sizing"), tablefmt="github"
        )
    )
    disagree = sum(1 for row_ in rows if row_[4] == "NO")
    print(f"{len(rows)} releases, {disagree} disagree")


if __name__ == "__main__":
    main()
