"""What the package registry answered, read from pip's own words: the versions it has, the nearest ones.

pip's error for a version it cannot find lists the versions it could have taken (``Could not find a
version that satisfies the requirement sglang==9.9.9 (from versions: 0.1.3, ..., 0.5.23)``): read
from there, no web page is scraped and no second client is needed. Versions are ordered as PEP 440
orders them, closely enough to name neighbours (packaging is not a dependency).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

#: pip's list of the versions it saw, in the error for a requirement it cannot satisfy.
_FROM_VERSIONS = re.compile(r"\(from versions: ([^)]*)\)")
#: A version as PEP 440 spells it: release, pre-release, post-release, development release, local part.
_VERSION = re.compile(
    r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+[a-z0-9.]*)?$",
    re.IGNORECASE,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
#: A release spec typed with one ``=``, another comparison, ``@``, ``:``, ``-`` or a space: name, dotted version.
_NEAR_SPEC = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*(?:-[A-Za-z][A-Za-z0-9._]*)*)\s*(?:={1,3}|~=|>=|<=|>|<|!=|@|:|-|\s)\s*"
    r"(?P<version>v?\d[A-Za-z0-9+!_-]*(?:\.[A-Za-z0-9+!_-]+)+)$"
)


def pip_versions(stderr: str) -> list[str] | None:
    """The versions pip's error lists (``[]`` for "none"), or None if it lists none (another failure)."""
    found = _FROM_VERSIONS.search(stderr)
    if found is None:
        return None
    listed = found.group(1).strip()
    return [] if listed == "none" else [v.strip() for v in listed.split(",") if v.strip()]


def version_key(version: str) -> tuple[object, ...]:
    """A sort key ordering versions as PEP 440 does (dev < a < b < rc < final < post); odd ones last."""
    match = _VERSION.match(version.strip())
    if match is None:
        return (1, version)
    release, pre, pre_number, post, dev = match.groups()
    numbers = tuple(int(part) for part in release.split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]  # 1.0 is 1
    if pre:
        stage = (_PRE[pre.lower()], int(pre_number or 0))
    else:
        stage = (-1, 0) if dev is not None and post is None else (3, 0)
    return (0, numbers, stage, -1 if post is None else int(post or 0), 1 if dev is None else 0)


def same_version(one: str, other: str) -> bool:
    """Whether two spellings name one version (``0.5.9`` and ``0.5.9.0``)."""
    return version_key(one) == version_key(other)


def nearest(wanted: str, versions: Iterable[str], each_side: int = 2) -> list[str]:
    """The versions nearest to *wanted* in order, *each_side* below it and above it, oldest first."""
    ordered = sorted(set(versions), key=version_key)
    key = version_key(wanted)
    below = [v for v in ordered if version_key(v) < key][-each_side:]
    above = [v for v in ordered if version_key(v) > key][:each_side]
    return below + above


def likely(wanted: str, versions: Sequence[str]) -> str:
    """The version most like *wanted* as it is spelt (``0.5.90`` -> ``0.5.9``), or ""."""
    close = difflib.get_close_matches(wanted, list(versions), n=1, cutoff=0.8)
    return close[0] if close else ""


def spec_hint(text: str) -> str:
    """The release spec *text* probably means (``sglang=0.5.9`` -> ``sglang==0.5.9``), or ""."""
    match = _NEAR_SPEC.match(text.strip())
    if match is None:
        return ""
    return f"{match['name']}=={match['version'].lstrip('v')}"


def is_pre(version: str) -> bool:
    """Whether *version* is a pre-release or a development release (``0.5.0rc1``, ``1.0.dev3``)."""
    match = _VERSION.match(version.strip())
    return match is not None and (match.group(2) is not None or match.group(5) is not None)


def between(versions: Iterable[str], low: str, high: str, pre: bool = False) -> list[str]:
    """The versions from *low* to *high*, both included, oldest first (pre-releases only with *pre*, or
    when an end is one); a version spelt twice (``0.5.9``, ``0.5.9.0``) once."""
    first, last = version_key(low), version_key(high)
    if first > last:
        first, last = last, first
    kept: dict[tuple[object, ...], str] = {}
    for version in versions:
        key = version_key(version)
        if first <= key <= last and (pre or not is_pre(version) or key in (first, last)):
            kept.setdefault(key, version)
    return [kept[key] for key in sorted(kept)]
