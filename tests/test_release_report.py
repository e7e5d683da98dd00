"""``sgtrace report`` on real releases: the issue's "done when" on 0.5.9, the upgrade from 0.5.9 to 0.5.23.

Releases are read from the test cache as specs (``sglang==0.5.9`` with ``--cache-dir``), so the links go upstream.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from networkx import descendants

from sgtrace import api
from sgtrace.analyses.focus import ROLE
from sgtrace.cli import cli
from sgtrace.index.findpass import RunOptions
from sgtrace.model import TraceQuery
from sgtrace.sources import Target
from tests import releases
from tests.browser import Browser
from tests.test_report import JOURNAL, Elements
from tests.test_report_browser import SCREENSHOTS, offline, screenshot

pytestmark = pytest.mark.release
#: A few MB at most for the newest release (the issue's bound).
MOST_BYTES = 4 * 1024 * 1024


def _cache(tmp_path: Path, *versions: str) -> Path:
    """A cache holding the test releases (hard links: a cache entry that is a symbolic link is refused), so specs
    resolve without fetching; its other parts are new."""
    cache = tmp_path / "cache"
    (cache / "releases").mkdir(parents=True)
    for version in versions:
        shutil.copytree(releases.release(version), cache / "releases" / f"sglang-{version}", copy_function=_link)
    return cache


def _link(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another file system
        shutil.copy2(source, destination)


def _report(tmp_path: Path, version: str, *args: str, versions: tuple[str, ...] = ()) -> tuple[Path, str]:
    cache = _cache(tmp_path, version, *versions)
    out = tmp_path / f"report-{version}.html"
    result = CliRunner().invoke(
        cli, ["report", f"sglang=={version}", "--log", str(JOURNAL), "-o", str(out), "--cache-dir", str(cache), *args]
    )
    assert result.exit_code == 0, result.output
    return out, out.read_text(encoding="utf-8")


@pytest.mark.parametrize("version", [releases.OLDEST, releases.MIDDLE, releases.NEWEST])
def test_the_focused_graph_has_what_a_person_needs(version: str) -> None:
    root = releases.release(version)
    view = api.focus(TraceQuery("max_total_num_tokens"), "mem_fraction_static", Target(str(root), version),
                     RunOptions()).graph  # fmt: skip
    # a graph a person reads whole: 0.5.23's has 62 nodes (29 caps, its KV-shard scratch and DSV4 state among them)
    assert 15 <= view.number_of_nodes() <= 64, view.number_of_nodes()
    roles = {view.nodes[n][ROLE] for n in view.nodes}
    assert roles == {"knob", "budget", "cap", "pool", "reader"}
    knob = next(n for n in view.nodes if view.nodes[n].get("why") == "the budget knob")
    caps = [n for n in view.nodes if view.nodes[n][ROLE] == "cap"]
    reached = descendants(view, knob)
    assert sum(1 for c in caps if c in reached) >= len(caps) // 2  # the knob leads to the caps


def test_done_when_on_0_5_9(tmp_path: Path) -> None:
    page_path, page = _report(tmp_path, releases.MIDDLE)
    for figure in ("10.43 GB", "10.42 GB", "94.04 GB"):
        assert figure in page
    parsed = Elements(page)
    parts = [a["data-item"] for t, a in parsed.tags if t == "g" and "part" in a.get("class", "").split()]
    assert parts[:2] == ["weights", "KV pool"] and "draft KV pool" in parts
    statuses = re.findall(r'<span class="status">([^<]+)</span>', page)
    assert {"applies", "not reached"} <= set(statuses) <= {"applies", "did not bind", "not reached", "unknown"}
    mixin = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
    placed = {a["data-node"] for t, a in parsed.tags if t == "g" and a.get("id", "").startswith("f")}
    lines = (releases.release(releases.MIDDLE) / mixin).read_text().splitlines()
    writes = {f"{mixin}:{i}" for i, text in enumerate(lines, 1) if re.match(r"\s*self\.max_total_num_tokens = ", text)}
    assert len(writes) >= 5 and writes <= placed  # the mixin's writes are nodes, with their path:line
    assert f"https://github.com/sgl-project/sglang/blob/v{releases.MIDDLE}/python/{mixin}#L" in page
    with Browser() as browser:
        browser.open(page_path)
        offline(browser, page_path)
        ident = browser.evaluate(f"document.querySelector('#focus-frame [data-node^=\"{mixin}:\"]').id")
        browser.click(f"#{ident}")
        assert mixin in browser.evaluate("document.getElementById('node-details').textContent")
        screenshot(browser, f"report-{releases.MIDDLE}.png")


def test_upgrade_from_0_5_9_to_0_5_23(tmp_path: Path) -> None:
    against = f"sglang=={releases.MIDDLE}"
    page_path, page = _report(
        tmp_path, releases.NEWEST, "--against", against, "--set", "mm_reservation_gb=0", versions=(releases.MIDDLE,)
    )
    assert page_path.stat().st_size < MOST_BYTES
    assert 'id="upgrade"' in page and f"Upgrade from {against}" in page
    assert re.search(r'<p class="verdict (review|same)">', page)
    assert f"10.43 GB on {against}, 9.50 GB on sglang=={releases.NEWEST}" in page
    for kind in ("Moved", "Changed", "Added", "Removed"):
        assert re.search(rf"<h3>{kind} caps \(\d+\)</h3>", page), kind
    moved = page[page.index("<h3>Moved caps") : page.index("<h3>Added caps")]
    for code in ("token_capacity = tensor.item()", "total_rest_memory - mamba_state_memory"):
        assert code in moved, code  # the pipeline-parallel reduce, the mamba state reservation: moved, not added
    with Browser() as browser:
        browser.open(page_path)
        offline(browser, page_path)
        assert browser.evaluate("document.querySelectorAll('#focus-frame [data-node]').length") <= 64
        screenshot(browser, f"report-{releases.NEWEST}-against-{releases.MIDDLE}.png")


def test_history_section_on_the_releases_from_0_5_9(tmp_path: Path) -> None:
    """--history: the pool on each release as a chart (the draft's weights taken from 0.5.19 on), the steps listed."""
    versions = (releases.MIDDLE, "0.5.19", releases.NEWEST)
    span = "sglang==" + ",".join(versions)
    page_path, page = _report(tmp_path, releases.NEWEST, "--history", span, "--set", "mm_reservation_gb=0",
                              versions=versions[:-1])  # fmt: skip
    section = page[page.index('<section id="history">') :]
    assert section.count("<circle") == 3 and ">10.43 GB</text>" in section and ">9.50 GB</text>" in section
    assert "now load before the pool is sized (sglang/srt/managers/scheduler.py:" in section
    with Browser(1200, 700) as browser:
        browser.open(page_path)
        offline(browser, page_path)
        box = browser.evaluate(
            "(() => { const r = document.querySelector('svg.history-chart').getBoundingClientRect();"
            " return [r.width, r.height]; })()"
        )
        assert box[0] > 600 and box[1] > 100, box  # drawn, at a readable size
        marked = browser.evaluate("document.querySelectorAll('svg.history-chart .marked circle').length")
        assert marked >= 1
        browser.evaluate("document.getElementById('history').scrollIntoView()")
        shot = SCREENSHOTS / f"report-history-{releases.MIDDLE}-{releases.NEWEST}.png"
        browser.screenshot(shot, full=False)  # the section, as a person scrolled to it sees it
        assert shot.stat().st_size > 10_000


def test_the_page_is_the_same_bytes_in_every_process(tmp_path: Path) -> None:
    """The layout does not depend on where objects land in memory, nor on the hash seed (grandalf's components
    once handed their edges over as a set ordered by the objects' addresses: the newest release's focused
    graph came out 2758 or 2841 px tall from one run to the next)."""
    import subprocess
    import sys

    cache = _cache(tmp_path, releases.NEWEST)
    pages = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"report-{seed}.html"
        subprocess.run(
            [sys.executable, "-m", "sgtrace", "report", f"sglang=={releases.NEWEST}", "--log", str(JOURNAL),
             "-o", str(out), "--cache-dir", str(cache)],
            check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed},
        )  # fmt: skip
        pages.append(out.read_bytes())
    assert pages[0] == pages[1] == pages[2]
