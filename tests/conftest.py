"""Shared helpers: snippet scanning, an isolated cache, the CLI runner."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections import Counter
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


#: The test modules that exercise each dependency's API, run again on the lowest versions pyproject.toml allows
#: (``.ci/run``: ``-m "floor and not release"``); the other modules test sgtrace's own analyses, which the
#: dependencies' versions do not change. tests/test_suite.py checks that every dependency has its modules.
FLOORS = {
    "libcst": ("test_parse", "test_fuzz"),
    "tree-sitter": ("test_scan", "test_parse", "test_engine_patterns", "test_findpass"),
    "tree-sitter-python": ("test_scan", "test_parse", "test_engine_patterns", "test_findpass", "test_fuzz"),
    "networkx": ("test_graph", "test_reach", "test_focus", "test_cli_graph"),
    "click": ("test_cli", "test_cli_config", "test_cli_conflicts", "test_cli_names", "test_cli_outputs",
              "test_cli_scope", "test_explain_inputs"),
    "tabulate": ("test_cli_outputs", "test_caps"),
    "tomli": ("test_config", "test_cli_config"),
    "pathspec": ("test_discover", "test_config", "test_cli_scope"),
    "jinja2": ("test_report", "test_report_browser"),
    "grandalf": ("test_report", "test_report_browser"),
    "pytest": ("test_suite",),
    "pytest-xdist": ("test_suite",),
    "hypothesis": ("test_fuzz", "test_fuzz_doors", "test_explain_filtered"),
    "hypothesmith": ("test_fuzz",),
    "import-linter": ("test_layers",),
    "mypy": ("test_layers",),
    "types-tabulate": ("test_layers",),
    "jsonschema": ("test_diff",),
    "websocket-client": ("test_report_browser",),
    "mkdocs-material": ("test_docs",),
}  # fmt: skip
_FLOOR_MODULES = {module for modules in FLOORS.values() for module in modules}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules of FLOORS are marked ``floor``. Tests marked ``slow`` run only when ``-m`` names them
    (``pytest -m slow``): the default run leaves them out."""
    for item in items:
        if item.path.stem in _FLOOR_MODULES:
            item.add_marker(pytest.mark.floor)
    if "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test (in the one process that runs them, or in xdist's controller before its workers start):
    fetch the real releases the run may read, a line a release, so that a first run does not seem to hang."""
    config = session.config
    if hasattr(config, "workerinput") or not _may_read_releases(config):
        return
    from tests.releases import prefetch

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    prefetch(reporter.write_line if reporter is not None else print)


def _may_read_releases(config: pytest.Config) -> bool:
    """Whether the run may select a test marked ``release``: its ``-m`` may (``-m "not release"`` may not),
    and it names no files, or a folder, or a file with such tests."""
    try:
        from _pytest.mark.expression import Expression  # pytest's own reading of -m (not public)

        expression = Expression.compile(config.getoption("markexpr") or "release")
        if not expression.evaluate(lambda name, **_: name == "release"):
            return False
    except (ImportError, SyntaxError, TypeError):
        return False  # each test fetches its own, as it would without this step
    named = [Path(str(arg).split("::", 1)[0]) for arg in config.args]
    return any(path.is_dir() or (path.is_file() and "mark.release" in path.read_text("utf-8")) for path in named)


#: The registry, blocked for a test that is not marked ``release`` (pip reads these in any process it runs in).
_NO_REGISTRY = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
_SAVED: dict[str, str | None] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures: a test not marked ``release`` may neither open the release cache nor reach
    the registry (``pytest -m "not release"`` fetches nothing, and a test that would is found out)."""
    from tests import releases

    if item.get_closest_marker("release") is not None:
        releases.refuse(None)
        return
    releases.refuse(f"{item.nodeid} reads a real release but is not marked release (pytest.mark.release)")
    for name, value in _NO_REGISTRY.items():
        _SAVED[name] = os.environ.get(name)
        os.environ[name] = value


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    from tests import releases

    releases.refuse(None)
    for name, value in _SAVED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED.clear()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In an xdist worker: hand what the property tests compared to the controller, which prints it."""
    from tests.examples import TALLIES

    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["tallies"] = {test: dict(tally) for test, tally in TALLIES.items()}


def pytest_testnodedown(node: object, error: object) -> None:
    """xdist's controller: add up the tallies a worker handed over (xdist calls this hook as a worker ends)."""
    from tests.examples import TALLIES

    for test, tally in getattr(node, "workeroutput", {}).get("tallies", {}).items():
        TALLIES.setdefault(test, Counter()).update(tally)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the property tests compared, for the record (tests/examples.py)."""
    from tests.examples import TALLIES

    for test, tally in sorted(TALLIES.items()):
        counts = ", ".join(f"{key} {value:,}" for key, value in sorted(tally.items()))
        terminalreporter.write_line(f"compared in {test}: {counts}")


@pytest.fixture(autouse=True)
def _isolated_cache(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own cache unless it asks for another; the tests of real releases share one in each
    process (each release is parsed and indexed once a process, not once a test)."""
    if request.node.get_closest_marker("release") is not None:
        cache = tmp_path_factory.getbasetemp() / "release-tests-cache"
    else:
        cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SGTRACE_CACHE_DIR", str(cache))


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
