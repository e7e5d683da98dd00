"""Measure diff's pairing on real releases: the similarity of true pairs and of the nearest false ones.

    python bench/diff_pairs.py              # the upgrades in tests/upgrade_pairs.py
    python bench/diff_pairs.py --all        # also every candidate of each old cap, best first

Runs diff's pairing with no threshold (every same-category candidate, taken best first, as
``compare`` takes them) and marks each pair taken against the pairs a reviewer reads in the code
(tests/upgrade_pairs.py). The threshold (sgtrace.analyses.likeness.THRESHOLD) must lie above every
false pair and at or below every true one; the figures printed are what docs/diff.md reports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.analyses import diff as diff_module  # noqa: E402
from sgtrace.analyses.likeness import THRESHOLD, parts, shape, similarity  # noqa: E402
from sgtrace.api import caps  # noqa: E402
from sgtrace.fetch import release_dir  # noqa: E402
from sgtrace.index.findpass import RunOptions  # noqa: E402
from sgtrace.model import Cap, CapsResult, TraceQuery  # noqa: E402
from sgtrace.sources import Target  # noqa: E402
from tests.releases import cache_dir  # noqa: E402
from tests.upgrade_pairs import PAIRS, UPGRADES  # noqa: E402

ATTRIBUTE = "max_total_num_tokens"


def _caps(version: str, cache: Path) -> CapsResult:
    root = release_dir(f"sglang=={version}", cache_dir())
    return caps(TraceQuery(ATTRIBUTE), "mem_fraction_static", Target(str(root), version), RunOptions(cache_dir=cache))


def _name(cap: Cap) -> str:
    return f"{cap.category} {cap.path.rsplit('/', 1)[-1]}:{cap.line}"


def _row(score: float, old: Cap, new: Cap) -> str:
    form, words, conditions, knobs = parts(shape(old, ATTRIBUTE), shape(new, ATTRIBUTE))
    return (
        f"| {score:.3f} | {form:.2f} | {words:.2f} | {conditions:.2f} | {knobs:.2f} | "
        f"{_name(old)} | {new.path.rsplit('/', 1)[-1]}:{new.line} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="also list every candidate of each old cap")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "sgtrace")
    args = parser.parse_args()
    diff_module.THRESHOLD = 0.0  # take every candidate, best first, to see where the false ones start
    true_scores: list[tuple[float, str]] = []
    false_scores: list[tuple[float, str]] = []
    shadowed: list[tuple[float, str]] = []
    header = "| score | form | words | conditions | knobs | old | new |\n|---|---|---|---|---|---|---|"
    for old_version, new_version in UPGRADES:
        before, after = _caps(old_version, args.cache_dir), _caps(new_version, args.cache_dir)
        truth = PAIRS[(old_version, new_version)]
        result = diff_module.compare(before.caps, after.caps, (), (), ATTRIBUTE)
        print(f"\n### {old_version} -> {new_version}: pairs taken with no threshold\n\n{header}")
        for pair in sorted((*result.changed, *result.moved), key=lambda p: -p.score):
            good = (pair.new.path, pair.new.line) in truth.get((pair.old.path, pair.old.line), frozenset())
            (true_scores if good else false_scores).append((pair.score, f"{old_version}->{new_version} "
                                                            f"{_name(pair.old)} -> {_name(pair.new)}"))  # fmt: skip
            print(_row(pair.score, pair.old, pair.new) + ("" if good else " false"))
        paired = (*result.changed, *result.moved)  # with no threshold: every cap left after the unchanged ones
        left = (*result.removed, *(p.old for p in paired))
        right = (*result.added, *(p.new for p in paired))
        shadowed += _shadowed(left, right, truth, f"{old_version}->{new_version}")
        if args.all:
            _candidates(before.caps, after.caps)
    print(f"\ntrue pairs: {len(true_scores)}, lowest {min(true_scores)[0]:.3f} ({min(true_scores)[1]})")
    worst = max(false_scores) if false_scores else (0.0, "none")
    print(f"false pairs taken without a threshold: {len(false_scores)}, highest {worst[0]:.3f} ({worst[1]})")
    print(f"threshold {THRESHOLD}: margins {min(true_scores)[0] - THRESHOLD:+.3f} / {THRESHOLD - worst[0]:+.3f}")
    above = sorted((s for s in shadowed if s[0] >= THRESHOLD), reverse=True)
    print(f"false candidates at or above the threshold, not taken because a better pair holds one of their caps: "
          f"{len(above)}" + "".join(f"\n  {score:.3f} {name}" for score, name in above))  # fmt: skip


def _shadowed(
    old: tuple[Cap, ...], new: tuple[Cap, ...], truth: dict[tuple[str, int], frozenset[tuple[str, int]]], label: str
) -> list[tuple[float, str]]:
    """Every same-category candidate among the caps that reach pairing that is not a true pair, with its score."""
    found = []
    for cap in old:
        for other in new:
            if other.category != cap.category:
                continue
            if (other.path, other.line) in truth.get((cap.path, cap.line), frozenset()):
                continue
            score = similarity(shape(cap, ATTRIBUTE), shape(other, ATTRIBUTE))
            found.append((score, f"{label} {_name(cap)} -> {_name(other)}"))
    return found


def _candidates(old: tuple[Cap, ...], new: tuple[Cap, ...]) -> None:
    print("\nevery candidate, best first per old cap:\n")
    for cap in old:
        ranked = sorted(
            ((similarity(shape(cap, ATTRIBUTE), shape(other, ATTRIBUTE)), other) for other in new
             if other.category == cap.category),
            key=lambda item: -item[0],
        )  # fmt: skip
        print(f"{_name(cap)}: " + ", ".join(f"{score:.3f} {_name(other)}" for score, other in ranked[:4]))


if __name__ == "__main__":
    main()
