"""Shared helpers: snippet scanning, an isolated cache, the CLI runner."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from sgtrace.index.scan import scan_file
from sgtrace.model import Access
from sgtrace.sources import sample_tree

FIXTURES = Path(__file__).parent / "fixtures"


def scan(source: str, attribute: str = "max_total_num_tokens") -> list[Access]:
    """Scan a dedented snippet; accesses in source order."""
    data = textwrap.dedent(source).encode("utf-8")
    return list(scan_file("snippet.py", data, attribute).accesses)


def writes(source: str, attribute: str = "max_total_num_tokens") -> list[tuple[int, str]]:
    """(line, kind) of every write in a snippet, bare names included."""
    return [(a.line, a.kind) for a in scan(source, attribute) if a.kind not in ("read", "getattr", "del")]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run only when ``-m`` names them (``pytest -m slow``): the default run leaves them out."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the property tests compared, for the record (tests/examples.py)."""
    from tests.examples import TALLIES

    for test, tally in sorted(TALLIES.items()):
        counts = ", ".join(f"{key} {value:,}" for key, value in sorted(tally.items()))
        terminalreporter.write_line(f"compared in {test}: {counts}")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own cache unless it asks for another."""
    monkeypatch.setenv("SGTRACE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


_TEST_WRITE = "class TestPool:\n    def setUp(self):\n        self.max_total_num_tokens = 8\n"


@pytest.fixture()
def small_checkout(tmp_path: Path) -> Path:
    """A small checkout: the sample package under python/, a test script, a stale build copy."""
    root = tmp_path / "repo"
    shutil.copytree(sample_tree() / "sglang", root / "python" / "sglang")
    shutil.copytree(sample_tree() / "sglang", root / "python" / "build" / "lib" / "sglang")
    (root / "python" / "pyproject.toml").write_text("[project]\nname = 'sglang'\n")
    (root / "test" / "srt").mkdir(parents=True)
    (root / "test" / "srt" / "test_pool.py").write_text(_TEST_WRITE)
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root
