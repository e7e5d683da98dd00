"""The suite's own rules: which tests may fetch, which run again on the dependencies' floors."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from sgtrace.fetch import FetchError, release_dir
from tests import releases
from tests.conftest import FLOORS

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the floors' Python
    import tomli as tomllib


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def test_every_dependency_has_the_tests_that_run_on_its_floor() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = _names(project["dependencies"]) | _names(project["optional-dependencies"]["test"])
    assert named == set(FLOORS), (named - set(FLOORS), set(FLOORS) - named)
    modules = {module for modules in FLOORS.values() for module in modules}
    assert {module for module in modules if not (ROOT / "tests" / f"{module}.py").is_file()} == set()


def test_a_test_not_marked_release_can_neither_open_the_cache_nor_reach_the_registry(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="is not marked release"):
        releases.release(releases.MIDDLE)
    with pytest.raises(pytest.fail.Exception, match="is not marked release"):
        releases.cache_dir()
    with pytest.raises(FetchError):  # pip, run as sgtrace runs it, finds no index to ask
        release_dir(f"sglang=={releases.NEWEST}", tmp_path / "cache")
    assert not (tmp_path / "cache" / "releases" / f"sglang-{releases.NEWEST}").exists()


@pytest.mark.release
def test_a_test_marked_release_reads_a_release_from_the_shared_cache() -> None:
    tree = releases.release(releases.MIDDLE)
    assert (tree / "sglang" / "srt").is_dir()
    assert tree.parent.parent == releases.location()
    with pytest.raises(pytest.fail.Exception, match="not among the releases"):
        releases.release("0.4.5")  # a release no list names: the prefetch would not have fetched it
