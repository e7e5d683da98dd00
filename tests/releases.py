"""Real SGLang releases for tests, fetched with pip (through sgtrace's own fetcher) into a cache.

In CI (``CI`` set) a release that cannot be fetched fails the test; elsewhere,
with no registry in reach, the test is skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sgtrace.fetch import FetchError, release_dir

#: The releases the real-release tests read; the newest is the newest on the registry when written.
OLDEST = "0.4.6"
EARLY_05 = "0.5.2"
MIDDLE = "0.5.9"
NEWEST = "0.5.23"


def cache_dir() -> Path:
    """Where fetched releases are kept between test runs."""
    explicit = os.environ.get("SGTRACE_TEST_RELEASES")
    return Path(explicit) if explicit else Path.home() / ".cache" / "sgtrace-test-releases"


def release(version: str) -> Path:
    """The unpacked source of ``sglang==version``."""
    try:
        return release_dir(f"sglang=={version}", cache_dir())
    except FetchError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must reach the package registry: {exc}")
        pytest.skip(f"registry not reachable outside CI: {exc}")
