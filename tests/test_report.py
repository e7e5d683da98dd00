"""``sgtrace report`` through the command line on the sample tree: the page's parts, escaping, links, errors.

What the page does in a browser (scripts run, clicks, no request, JavaScript off) is in test_report_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli, main
from sgtrace.report.html import links_for
from sgtrace.sources import Target, sample_tree
from tests.conftest import FIXTURES

SAMPLE = sample_tree()
JOURNAL = FIXTURES / "logs" / "h20_three_startups.journal"
MIXIN = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
#: Code in the analysed tree that would be markup if the page did not escape it.
HOSTILE = '"</script><img src=x onerror=alert(1)>"'


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and the text of its scripts."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    def having(self, attribute: str) -> list[dict[str, str]]:
        return [attrs for _, attrs in self.tags if attribute in attrs]


def report(tmp_path: Path, *args: str, tree: Path = SAMPLE) -> tuple[int, str, str]:
    """Run ``sgtrace report`` into a file; (exit code, the page, stderr)."""
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(tree), "-o", str(out), *args])
    return result.exit_code, out.read_text(encoding="utf-8") if out.exists() else "", result.stderr


def hostile_tree(tmp_path: Path) -> Path:
    """The sample tree with a cap whose guard and code hold a closing script tag and an image with a handler."""
    root = tmp_path / "hostile"
    shutil.copytree(SAMPLE, root)
    mixin = root / MIXIN
    text = mixin.read_text()
    anchor = "        self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)\n"
    assert anchor in text
    injected = (
        f"        if server_args.attention_backend == {HOSTILE}:\n"
        f"            self.max_total_num_tokens = min(self.max_total_num_tokens, len({HOSTILE}))\n"
    )
    mixin.write_text(text.replace(anchor, anchor + injected))
    return root


def test_the_page_has_every_section_with_the_answer_and_the_ledger(tmp_path: Path) -> None:
    code, page, err = report(tmp_path, "--log", str(JOURNAL))
    assert code == 0, err
    assert re.search(r"sgtrace: wrote .*r\.html \(\d+ KB; \d+ nodes in the focused graph\)", err)
    for section in ("answer", "ledger", "caps", "graph", "slice"):
        assert f'id="{section}"' in page
    assert 'id="upgrade"' not in page  # only with --against
    for figure in ("10.43 GB", "10.42 GB", "94.04 GB", "total_gpu_memory"):
        assert figure in page
    parsed = Elements(page)
    parts = [a for t, a in parsed.tags if t == "g" and "part" in a.get("class", "").split()]
    items = [a["data-item"] for a in parts]
    assert items[:2] == ["weights", "KV pool"] and items[-1] == "left at the end"
    assert "Load weight end." in page  # the ledger cites its log lines' text


def test_every_graph_node_carries_its_place(tmp_path: Path) -> None:
    _, page, _ = report(tmp_path, "--log", str(JOURNAL))
    nodes = [a for t, a in Elements(page).tags if t == "g" and "node" in a.get("class", "").split()]
    focus = [a for a in nodes if a["id"].startswith("f")]
    assert 10 <= len(focus) <= 60 and len(nodes) > len(focus)
    placed = {a["data-node"] for a in focus}
    lines = (SAMPLE / MIXIN).read_text().splitlines()
    base = next(i for i, text in enumerate(lines, 1) if "= self.profile_max_num_token(" in text)
    assert f"{MIXIN}:{base}" in placed
    assert "server_args.mem_fraction_static" in placed  # a knob is named, it has no line
    assert all(re.fullmatch(r"[\w./-]+:\d+|[\w.()]+", where) for where in placed)


def test_everything_is_inline_and_the_script_is_allowed_by_its_hash(tmp_path: Path) -> None:
    _, page, _ = report(tmp_path, "--log", str(JOURNAL))
    parsed = Elements(page)
    assert not [a for t, a in parsed.tags if t in ("script", "img", "iframe") and a.get("src")]
    assert not [a for t, a in parsed.tags if t == "link" and a.get("rel") == "stylesheet"]
    assert all(a["href"].startswith(("#", "file:", "data:")) for a in parsed.having("href"))
    [policy] = [
        a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert "default-src 'none'" in policy
    code = next(s for s, (t, a) in zip(parsed.scripts, [x for x in parsed.tags if x[0] == "script"], strict=True)
                if not a.get("type"))  # fmt: skip
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
    assert f"'sha256-{digest}'" in policy


def test_code_from_the_tree_is_text_never_markup(tmp_path: Path) -> None:
    code, page, err = report(tmp_path, "--log", str(JOURNAL), tree=hostile_tree(tmp_path))
    assert code == 0, err
    parsed = Elements(page)
    assert not [t for t, _ in parsed.tags if t == "img"]
    assert "<img" not in page and "</script><img" not in page
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page  # shown, escaped, in the caps' table
    assert page.count("</script>") == page.count("<script")  # no script closed early
    assert "\\u003c/script\\u003e\\u003cimg" in page  # and in the nodes' details (JSON)


def test_without_a_run_the_page_says_how_to_get_the_answer(tmp_path: Path) -> None:
    code, page, _ = report(tmp_path)
    assert code == 0
    assert "No run was given" in page and "no run given" in page
    assert 'class="part"' not in page


def test_settings_alone_give_the_answer(tmp_path: Path) -> None:
    code, page, _ = report(
        tmp_path, "--set", "mem_fraction_static=0.88", "--set", "avail_before_weights_gb=94.04",
        "--set", "avail_after_weights_gb=21.71",
    )  # fmt: skip
    assert code == 0 and "10.43 GB" in page


def test_standard_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(SAMPLE), "-o", "-"])
    assert result.exit_code == 0 and result.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "nonsense"], "--set expects NAME=VALUE"),
        (["--run", "2"], "--run needs --log"),
        (["--set", "no_such_input=1"], "not an input of this release"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["report", str(SAMPLE), "-o", str(tmp_path / "r.html"), *args])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not (tmp_path / "r.html").exists()


def test_a_missing_tree_is_exit_2(tmp_path: Path) -> None:
    code, page, err = report(tmp_path, tree=tmp_path / "nowhere")
    assert code == 2 and page == "" and "no such file or directory" in err


def test_links_go_upstream_for_a_known_release_else_to_local_files(tmp_path: Path) -> None:
    release = links_for(Target(str(tmp_path), "sglang==0.5.9"))
    assert release.url(MIXIN, 143) == ("https://github.com/sgl-project/sglang/blob/v0.5.9/python/" + MIXIN + "#L143")
    assert "upstream" in release.note
    local = links_for(Target(str(tmp_path), str(tmp_path)))
    assert local.url("a/b.py", 3) == (tmp_path / "a" / "b.py").resolve().as_uri()
    assert "local files" in local.note
    other = links_for(Target(str(tmp_path), "vllm==0.6.6"))
    assert other.url("x.py", 1).startswith("file:")


def test_the_whole_slice_laid_out_in_another_process_gives_the_same_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a core idle, the whole slice is laid out in a process of its own while the rest is worked out."""
    import sgtrace.index.findpass as findpass
    from sgtrace.report import html

    handed: list[bool] = []
    start = html.WholeAhead.start

    def noted(self: html.WholeAhead, graph: object) -> None:
        start(self, graph)
        handed.append(self._future is not None)

    monkeypatch.setattr(html.WholeAhead, "start", noted)
    pages = []
    for spare in (2, 1):
        monkeypatch.setattr(findpass, "spare_cpus", lambda spare=spare: spare)
        folder = tmp_path / str(spare)
        folder.mkdir()
        code, page, _ = report(folder, "--log", str(JOURNAL), "--cache-dir", str(folder / "cache"))
        assert code == 0
        pages.append(page)
    monkeypatch.setattr(findpass, "spare_cpus", lambda: 2)
    code, page, _ = report(tmp_path, "--log", str(JOURNAL), "-j", "1")  # -j 1: no other process, whatever is idle
    assert code == 0
    assert handed == [True, False, False]
    assert pages[0] == pages[1] == page
