"""Releases of two other LLM-serving engines for tests, fetched with pip (through sgtrace's own fetcher).

They share the cache of :mod:`tests.releases`. In CI (``CI`` set) a release that
cannot be fetched fails the test; elsewhere, with no registry in reach, the test
is skipped. Run as a script (``python -m tests.engines``) to fetch them ahead of
the tests. What each release's caps and budget sites are is in
``docs/engines-notes.md``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from sgtrace.fetch import FetchError, release_dir
from tests.releases import cache_dir

#: vLLM's last line with the V0 engine as default: ``Type[ExecutorBase]``, ``Optional[WorkerBase]``
#: filled from a class named by a string, ``min`` over ranks, ``//= pipeline_parallel_size``.
#: Pool size ``num_gpu_blocks``, budget ``gpu_memory_utilization``; wheel 201 MB.
VLLM = "vllm==0.6.6.post1"

#: LMDeploy's PyTorch engine: reservations and the fraction in list comprehensions,
#: ``return min(num_gpu_blocks)``, an early return keeping a user-given ``num_gpu_blocks``.
#: Pool size ``num_gpu_blocks``, budget ``cache_max_entry_count``; wheel 107 MB (CPython 3.11).
LMDEPLOY = "lmdeploy==0.18.0"

#: Every engine release the tests read.
ALL = (VLLM, LMDEPLOY)


def engine(spec: str) -> Path:
    """The unpacked source of an engine release, ``name==version``."""
    try:
        return release_dir(spec, cache_dir())
    except FetchError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must reach the package registry: {exc}")
        pytest.skip(f"registry not reachable outside CI: {exc}")


def main() -> int:
    """Fetch every engine release into the test cache; print where each lies."""
    failed = 0
    for spec in ALL:
        try:
            print(f"{spec}\t{release_dir(spec, cache_dir())}")
        except FetchError as exc:
            print(f"{spec}\t{exc}", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
