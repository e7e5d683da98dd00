"""Real SGLang releases for tests, fetched with pip (through sgtrace's own fetcher) into a cache.

In CI (``CI`` set) a release that cannot be fetched fails the test; elsewhere,
with no registry in reach, the test is skipped.
"""

from __future__ import annotations

import os
import shutil
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


def linked_cache(folder: Path, *versions: str) -> Path:
    """A new cache under *folder* holding the releases (hard links: a cache entry that is a symbolic link is
    refused), so that ``sglang==X`` resolves without fetching; its other parts start empty."""
    cache = folder / "cache"
    (cache / "releases").mkdir(parents=True)
    for version in versions:
        shutil.copytree(release(version), cache / "releases" / f"sglang-{version}", copy_function=_link)
    return cache


def _link(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another file system
        shutil.copy2(source, destination)
