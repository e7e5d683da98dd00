"""How many examples a property test runs: about 500 in the default run, 10^4 in the slow profile.

A property test takes ``profile`` from ``PROFILES``: its ``slow`` case is marked ``slow``, which the
default run leaves out (see conftest); ``python -m pytest -m slow`` runs those alone, as CI does when
``SGTRACE_SLOW=1``. What a run compared is tallied in ``TALLIES`` and printed at the end of the run.
"""

from __future__ import annotations

from collections import Counter

import pytest

EXAMPLES = {"default": 500, "slow": 10_000}
#: The doors' property tests (tests/test_fuzz_doors.py) run a command an example: fewer by default.
DOORS = {"default": 50, "slow": 10_000}
PROFILES = [pytest.param("default", id="default"), pytest.param("slow", id="slow", marks=pytest.mark.slow)]
#: test id -> what its examples compared (programs, writes, writes of each kind...), for the run's summary.
TALLIES: dict[str, Counter[str]] = {}
