"""The report's page in headless Chromium: after its script ran, on a click, with JavaScript off, offline.

Screenshots land in build/screenshots/ (or $SGTRACE_SCREENSHOTS) for a person to look at.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from tests.browser import Browser
from tests.test_report import JOURNAL, SAMPLE, hostile_tree

#: Where the tests leave their screenshots.
SCREENSHOTS = Path(os.environ.get("SGTRACE_SCREENSHOTS", Path(__file__).resolve().parents[1] / "build" / "screenshots"))


def write_report(out: Path, tree: Path = SAMPLE, *args: str) -> Path:
    result = CliRunner().invoke(cli, ["report", str(tree), "--log", str(JOURNAL), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(tmp_path_factory.mktemp("report") / "sample.html")


def screenshot(browser: Browser, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    browser.screenshot(path)
    assert path.stat().st_size > 10_000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def offline(browser: Browser, page: Path) -> None:
    """No script error, no console error or warning, and no request but the file itself."""
    assert browser.problems() == []
    assert browser.requests() == [page.resolve().as_uri()]


def test_after_the_script_ran_the_page_shows_figures_chart_and_graph(page: Path) -> None:
    with Browser() as browser:
        browser.open(page)
        figures = browser.evaluate("[...document.querySelectorAll('.figure .value')].map(e => e.textContent)")
        assert figures[:2] == ["10.43 GB", "10.42 GB"] and "94.04 GB" in figures
        widths = browser.evaluate("[...document.querySelectorAll('#ledger .part rect')].map(r => r.getBBox().width)")
        assert len(widths) >= 5 and all(w > 0 for w in widths)
        assert sum(widths) == pytest.approx(1000, abs=1)
        nodes = browser.evaluate("[...document.querySelectorAll('#focus-frame [data-node]')].map(n => n.dataset.node)")
        assert 10 <= len(nodes) <= 60 and any(n.startswith("sglang/srt/model_executor/") for n in nodes)
        boxes = browser.evaluate(
            "[...document.querySelectorAll('#focus-frame .node')].map(n => n.getBoundingClientRect().width)"
        )
        assert all(w > 100 for w in boxes)  # drawn, at a size to read
        assert browser.evaluate("document.getElementById('focus-controls').hidden") is False  # the script ran
        offline(browser, page)
        screenshot(browser, "report-sample.png")


def test_a_click_on_a_node_shows_its_code_and_why(page: Path) -> None:
    with Browser() as browser:
        browser.open(page)
        details = json.loads(browser.evaluate("document.getElementById('focus-data').textContent"))
        ident = browser.evaluate("document.querySelector('#focus-frame .node.role-cap').id")
        browser.click(f"#{ident}")
        shown = browser.evaluate("document.getElementById('node-details').textContent")
        assert details[ident]["code"] and details[ident]["code"] in shown
        assert details[ident]["where"] in shown and details[ident]["why"] in shown
        assert browser.evaluate(f"document.getElementById('{ident}').classList.contains('selected')")
        lit = browser.evaluate("document.querySelectorAll('#focus-frame .edge.lit').length")
        assert lit >= 1
        offline(browser, page)


def test_the_whole_slice_opens_and_is_searched_by_name(page: Path) -> None:
    with Browser() as browser:
        browser.open(page)
        browser.click("#slice summary")
        browser.evaluate("new Promise(done => setTimeout(done, 100))")  # the toggle event fits the slice
        assert browser.evaluate("document.getElementById('slice').open")
        assert browser.evaluate("document.querySelector('#slice .controls').hidden") is False
        total = browser.evaluate("document.querySelectorAll('#slice-frame .node').length")
        browser.evaluate(
            "(() => { const s = document.getElementById('slice-search'); s.value = 'mem_fraction_static';"
            " s.dispatchEvent(new Event('input')); })()"
        )
        found = browser.evaluate("document.querySelectorAll('#slice-frame .node.match').length")
        assert 0 < found < total
        assert browser.evaluate("document.getElementById('slice-found').textContent") == f"{found} found"
        before = browser.evaluate("document.querySelector('#slice-frame svg').getAttribute('width')")
        browser.click("#slice .controls button[data-zoom='in']")
        after = browser.evaluate("document.querySelector('#slice-frame svg').getAttribute('width')")
        assert float(after) == pytest.approx(float(before) * 1.25, rel=0.01)
        offline(browser, page)


def test_code_from_the_tree_stays_text_in_the_browser(tmp_path: Path) -> None:
    page = write_report(tmp_path / "hostile.html", hostile_tree(tmp_path))
    with Browser() as browser:
        browser.open(page)
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        ident = browser.evaluate(
            "[...document.querySelectorAll('#focus-frame .node')].find(n => n.textContent.includes('onerror')"
            " || n.querySelector('title').textContent.includes('onerror')).id"
        )
        browser.click(f"#{ident}")
        shown = browser.evaluate("document.getElementById('node-details').textContent")
        assert "</script><img src=x onerror=alert(1)>" in shown
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        assert not [e for e in browser.events if e.get("method") == "Page.javascriptDialogOpening"]
        offline(browser, page)


def test_with_javascript_off_the_page_and_the_graph_still_show(page: Path) -> None:
    with Browser(scripts=False) as browser:
        browser.open(page)
        assert "10.43 GB" in browser.evaluate("document.getElementById('answer').innerText")
        boxes = browser.evaluate(
            "[...document.querySelectorAll('#focus-frame .node rect')].map(r => r.getBoundingClientRect().width)"
        )
        assert boxes and all(w > 100 for w in boxes)
        assert browser.evaluate("document.getElementById('focus-controls').hidden") is True
        assert browser.evaluate("document.querySelectorAll('#caps tbody tr').length") >= 5
        assert browser.requests() == [page.resolve().as_uri()]
        screenshot(browser, "report-sample-no-script.png")
