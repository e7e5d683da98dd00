"""Every command on every shape a user gives a release in: a spec, the package folder, a checkout
(``python/sglang``), the checkout's package folder, the folder above the package, and a single file.

Each must answer (exit 0 or 1) with output that parses as its format says; no shape may crash a
command (a reader in a top-level module of a package folder once crashed ``report``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from tests import releases
from tests.hostile_cases import SHAPES as SHAPES_OF_CODE
from tests.test_report import JOURNAL

pytestmark = pytest.mark.release


def _json(text: str) -> bool:
    json.loads(text)
    return True


def _dot(text: str) -> bool:
    return text.startswith("digraph") and text.rstrip().endswith("}")


def _graphml(text: str) -> bool:
    return ElementTree.fromstring(text).tag.endswith("graphml")


def _text(text: str) -> bool:
    return bool(text.strip())


#: name -> (arguments before the tree, arguments after it, what the output must be; the file it writes).
COMMANDS: dict[str, tuple[list[str], list[str], Callable[[str], bool]]] = {
    "find": (["find", "max_total_num_tokens"], [], _text),
    "find json": (["find", "max_total_num_tokens"], ["--format", "json"], _json),
    "trace": (["trace", "max_total_num_tokens"], [], _text),
    "trace json": (["trace", "max_total_num_tokens"], ["--format", "json"], _json),
    "graph dot": (["graph", "max_total_num_tokens"], ["--dot"], _dot),
    "graph json": (["graph", "max_total_num_tokens"], ["--json"], _json),
    "graph graphml": (["graph", "max_total_num_tokens"], ["--graphml"], _graphml),
    "graph focus": (["graph", "max_total_num_tokens"], ["--focus", "budget"], _dot),
    "caps": (["caps"], [], _text),
    "caps json": (["caps"], ["--format", "json"], _json),
    "caps sarif": (["caps"], ["--format", "sarif"], _json),
    "explain": (["explain"], ["--log", str(JOURNAL)], _text),
    "explain json": (["explain"], ["--log", str(JOURNAL), "--format", "json"], _json),
}


SHAPES = ["spec", "package folder", "folder above", "checkout", "checkout package", "single file"]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """shape -> the tree as the user names it."""
    release = releases.release(releases.MIDDLE)
    checkout = tmp_path_factory.mktemp("checkout")
    shutil.copytree(release / "sglang", checkout / "python" / "sglang")
    (checkout / "python" / "pyproject.toml").write_text('[project]\nname = "sglang"\n')
    return {
        "spec": f"sglang=={releases.MIDDLE}",
        "package folder": str(release / "sglang"),
        "folder above": str(release),
        "checkout": str(checkout),
        "checkout package": str(checkout / "python" / "sglang"),
        "single file": str(release / "sglang" / "srt" / "model_executor" / "model_runner_kv_cache_mixin.py"),
    }


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return releases.linked_cache(tmp_path_factory.mktemp("shapes"), releases.MIDDLE)


def _invoke(arguments: list[str], cache: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*arguments, "--cache-dir", str(cache)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_answers_on_every_shape(shapes: dict[str, str], cache: Path, shape: str, command: str) -> None:
    before, after, parses = COMMANDS[command]
    code, output = _invoke([*before, shapes[shape], *after], cache)
    assert code in (0, 1), (command, shape, output[-2000:])
    assert parses(output) or (code == 1 and not output), (command, shape, output[:500])


@pytest.mark.parametrize("shape", SHAPES)
def test_diff_check_and_report_answer_on_every_shape(
    shapes: dict[str, str], cache: Path, shape: str, tmp_path: Path
) -> None:
    tree = shapes[shape]
    code, output = _invoke(["diff", tree, tree, "--log", str(JOURNAL), "--format", "json"], cache)
    assert code in (0, 1) and _json(output), output[-2000:]
    baseline = tmp_path / "baseline.json"
    code, _ = _invoke(["check", tree, "--write-baseline", str(baseline)], cache)
    assert code == 0 and _json(baseline.read_text())
    code, output = _invoke(["check", tree, "--baseline", str(baseline), "--format", "json"], cache)
    assert code == 0 and _json(output), output[-2000:]
    page = tmp_path / "report.html"
    code, _ = _invoke(["report", tree, "--log", str(JOURNAL), "-o", str(page)], cache)
    assert code == 0
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")


@pytest.mark.parametrize("name", sorted(SHAPES_OF_CODE))
def test_a_hostile_shape_inside_a_release_is_answered_with_the_release(name: str, tmp_path: Path) -> None:
    """Each growing shape of tests/hostile_cases.py, put inside a copy of 0.5.9 (its writes are the slice's
    seeds), costs the slice no more than its own size: caps answers with the release's caps and the shape's."""
    release = releases.release(releases.MIDDLE)
    command = [sys.executable, "-m", "sgtrace", "caps", str(release), "--format", "json"]
    alone = subprocess.run([*command, "--cache-dir", str(tmp_path / "c0")], capture_output=True, text=True, check=True)
    own = {(c["path"], c["line"], c["category"]) for c in json.loads(alone.stdout)["caps"]}
    tree = tmp_path / "tree"
    shutil.copytree(release, tree, copy_function=os.link)
    make, largest = SHAPES_OF_CODE[name]
    folder = tree / "sglang" / "srt" / f"hostile_{name}"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for file, text in make(min(largest, 300)).items():
        (folder / file).write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "sgtrace", "caps", str(tree), "--format", "json", "--max-nodes", "1000000",
         "--cache-dir", str(tmp_path / "c1")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = {(c["path"], c["line"], c["category"]) for c in json.loads(proc.stdout)["caps"]}
    assert own <= found
    assert any(path.startswith(f"sglang/srt/hostile_{name}/") for path, _, _ in found - own)
