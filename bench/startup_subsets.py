"""Random subsets of real-shaped journals: does any start-up hold figures of two start-ups without saying so?

    python bench/startup_subsets.py              # 2000 subsets per journal form and share
    python bench/startup_subsets.py --per 500

The journals and forms are the property test's (tests/test_explain_filtered.py: both fixtures in
journald's short and -o cat forms, and the Kimi one with restarts 38 s and 27 s after the previous
start-up ended). Each line is kept with probability *share*; a start-up of the subset that holds
figures from two start-ups of the whole journal is a mix unless it carries a doubt. Prints a
Markdown table: mixes (the goal is 0) and subsets with a doubt, per form and share.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgtrace.run.startups import split  # noqa: E402
from tests.test_explain_filtered import FORMS, _figures, _owners  # noqa: E402

SHARES = (0.01, 0.02, 0.04, 0.1, 0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per", type=int, default=2000, help="Subsets per journal form and share.")
    per = parser.parse_args().per
    start = time.perf_counter()
    total = mixes_total = 0
    print("| journal | share | subsets | mixes | with a doubt |")
    print("|---|---|---|---|---|")
    for form, lines in FORMS.items():
        owner = _owners(split("\n".join(lines)))
        for share in SHARES:
            mixes = doubted = 0
            for seed in range(per):
                draw = random.Random(seed * 7919 + int(share * 1000))
                kept = [n for n in range(1, len(lines) + 1) if draw.random() < share]
                runs = split("\n".join(lines[n - 1] for n in kept))
                doubted += any(run.doubts for run in runs)
                for run in runs:
                    if len({owner(kept[f.line - 1]) for f in _figures(run)}) > 1 and not run.doubts:
                        mixes += 1
            total += per
            mixes_total += mixes
            print(f"| {form} | {share} | {per} | {mixes} | {doubted} |")
    print(f"\n{total} subsets, {mixes_total} mixes, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
