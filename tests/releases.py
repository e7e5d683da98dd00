"""Real SGLang releases for tests, fetched with pip (through sgtrace's own fetcher) into one cache.

Every release a test reads is listed here (``wanted``); a run that may select the ``release`` tests fetches
the missing ones first, a line a release (``tests/conftest.py``), then each test reads its own from the
cache. Only a test marked ``release`` may open the cache: for any other test ``cache_dir`` fails the test
(the conftest says which test runs), so ``pytest -m "not release"`` fetches nothing. In CI (``CI`` set) a
release that cannot be fetched fails the test; elsewhere, with no registry in reach, the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sgtrace.fetch import FetchError, release_dir

#: The releases the real-release tests read; the newest is the newest on the registry when written.
OLDEST = "0.4.6"
EARLY_05 = "0.5.2"
MIDDLE = "0.5.9"
NEWEST = "0.5.23"
#: The releases read beside those: the newest but one (0.5.19), the first after MIDDLE (0.5.10), and the
#: change points of tests/release_table.py (0.4.0 ... 0.5.18; 0.5.14 is the first whose draft loads before the
#: target's pool is sized).
OTHERS = ("0.4.0", "0.4.1.post4", "0.5.3.post2", "0.5.7", "0.5.10", "0.5.11", "0.5.14", "0.5.16", "0.5.18", "0.5.19")
#: ``history``'s tests read every release the registry lists from MIDDLE to NEWEST.
SPAN = f"sglang=={MIDDLE}..{NEWEST}"
#: The real logs' manifest: each log is explained by the release its thread names (or ``run_against``).
MANIFEST = Path(__file__).parent / "fixtures" / "logs" / "real" / "manifest.json"

#: Why the running test may not open the cache (None: it may): set by the conftest around each test.
_REFUSED: str | None = None


def cache_dir() -> Path:
    """Where fetched releases are kept between test runs (``SGTRACE_TEST_RELEASES``, else ~/.cache)."""
    if _REFUSED is not None:
        pytest.fail(_REFUSED, pytrace=False)
    return location()


def location() -> Path:
    """The cache's folder, for what is kept beside it (no release is opened)."""
    explicit = os.environ.get("SGTRACE_TEST_RELEASES")
    return Path(explicit) if explicit else Path.home() / ".cache" / "sgtrace-test-releases"


def refuse(why: str | None) -> None:
    """Refuse the cache to the test about to run (*why* is the failure's message), or allow it (None)."""
    global _REFUSED
    _REFUSED = why


def release(version: str) -> Path:
    """The unpacked source of ``sglang==version``, which must be one of ``wanted()``."""
    spec = f"sglang=={version}"
    if version not in fixed_versions() and not _in_span(version):
        pytest.fail(f"{spec} is not among the releases tests/releases.py lists (add it to OTHERS)", pytrace=False)
    return fetched(spec)


def fetched(spec: str) -> Path:
    """The unpacked source of *spec* (``name==version``), fetched on first use."""
    try:
        return release_dir(spec, cache_dir())
    except FetchError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must reach the package registry: {exc}")
        pytest.skip(f"registry not reachable outside CI: {exc}")


def fixed_versions() -> list[str]:
    """The SGLang versions the tests name, the real logs' releases among them (the span's aside)."""
    logs = json.loads(MANIFEST.read_text())
    named = {entry["release"] or entry["run_against"] for entry in logs}
    return sorted({OLDEST, EARLY_05, MIDDLE, NEWEST, *OTHERS, *named})


def _in_span(version: str) -> bool:
    from sgtrace.registry import version_key

    return version_key(MIDDLE) <= version_key(version) <= version_key(NEWEST)


def wanted() -> list[str]:
    """Every release spec the suite reads: the fixed versions, the span's releases (the registry lists them,
    so this asks it), the other engines'."""
    from sgtrace.sources import points
    from tests.engines import ALL

    spanned = [f"sglang=={point.label}" for point in points([SPAN], location())]
    fixed = [f"sglang=={version}" for version in fixed_versions()]
    return sorted(set(fixed + spanned), key=_order) + list(ALL)


def _order(spec: str) -> tuple[object, ...]:
    from sgtrace.registry import version_key

    return tuple(version_key(spec.split("==", 1)[1]))


def prefetch(say: Callable[[str], None]) -> None:
    """Fetch every release the suite reads that the cache lacks, saying which and how far it has got."""
    cache = location()
    start = time.monotonic()
    try:
        specs = wanted()
    except FetchError as exc:
        say(f"releases: cannot list the registry's releases ({exc}); each test fetches its own")
        return
    missing = [spec for spec in specs if not (cache / "releases" / spec.replace("==", "-")).is_dir()]
    if not missing:
        return
    say(f"releases: fetching {len(missing)} of the {len(specs)} the tests read into {cache} (wheels' .py files only)")
    for number, spec in enumerate(missing, 1):
        began = time.monotonic()
        try:
            tree = release_dir(spec, cache)
        except FetchError as exc:
            say(f"releases: [{number}/{len(missing)}] {spec}: not fetched ({exc}); its tests say so")
            continue
        size = sum(path.stat().st_size for path in tree.rglob("*.py")) / 1e6
        say(f"releases: [{number}/{len(missing)}] {spec}: {size:.0f} MB of Python in {time.monotonic() - began:.1f} s")
    say(f"releases: fetched in {time.monotonic() - start:.0f} s")


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
