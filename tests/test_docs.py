"""Every command example in README.md and docs/ is run, so none can rot; the site builds with --strict.

An example is a line of a fenced block that runs ``sgtrace`` (``$ sgtrace ...`` in a block that shows
the output, or a plain ``sgtrace ...`` line). Placeholders a reader replaces with their own
(``server.log``, ``~/src/sglang``, ``/path/to/sglang/python``, a local wheel) are replaced with real
things of the same kind. Each example must end with an answer (exit 0 or 1; 2 where the output shown
is an error), and every line of the output shown must be in what the command printed (``...`` alone on
a line elides lines, inside a line any text).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from sgtrace.sources import sample_tree
from tests import engines, releases

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
JOURNAL = ROOT / "tests" / "fixtures" / "logs" / "h20_three_startups.journal"
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Example:
    """One command of a document, with the output the document shows for it."""

    document: str
    command: str
    shown: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.document}: {self.command[:80]}"


def examples() -> list[Example]:
    """Every sgtrace command in a fenced block of README.md and docs/*.md, in order."""
    found = []
    for document in DOCUMENTS:
        for block in _FENCE.finditer(document.read_text(encoding="utf-8")):
            if block["lang"] in ("yaml", "toml", "json", "diff", "markdown", "python"):
                continue
            found.extend(_commands(document.relative_to(ROOT).as_posix(), block["body"].splitlines()))
    return found


def _commands(document: str, lines: list[str]) -> list[Example]:
    found: list[Example] = []
    prompt = any(line.startswith("$ ") for line in lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if prompt and line.startswith("$ sgtrace "):
            shown = []
            while index < len(lines) and not lines[index].startswith("$ "):
                shown.append(lines[index])
                index += 1
            found.append(Example(document, line[2:], tuple(shown)))
        elif not prompt and line.startswith("sgtrace "):
            found.append(Example(document, shlex.join(shlex.split(line, comments=True)), ()))
    return found


def test_every_document_has_its_examples_found() -> None:
    """The collector itself: README's five commands and the docs' examples are all seen."""
    found = examples()
    assert sum(e.document == "README.md" for e in found) >= 5
    assert {e.document for e in found} >= {"README.md", "docs/find.md", "docs/caps.md", "docs/explain.md"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A folder to run the examples in, with what their placeholders name, and a cache holding the releases."""
    work = tmp_path_factory.mktemp("docs")
    cache = work / ".cache"
    for version in (releases.OLDEST, releases.MIDDLE, releases.NEWEST):
        _link_tree(releases.release(version), cache / "releases" / f"sglang-{version}")
    for spec in engines.ALL:
        _link_tree(engines.engine(spec), cache / "releases" / spec.replace("==", "-"))
    (work / "tests" / "fixtures" / "logs").mkdir(parents=True)
    shutil.copy(JOURNAL, work / "tests" / "fixtures" / "logs" / JOURNAL.name)
    shutil.copy(JOURNAL.parent / "kimi_three_startups.journal", work / "tests" / "fixtures" / "logs")
    shutil.copytree(JOURNAL.parent.parent / "models", work / "tests" / "fixtures" / "models")
    shutil.copy(JOURNAL, work / "server.log")
    wheel = work / "sglang-0.5.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in sorted(releases.release(releases.MIDDLE).rglob("*.py")):
            archive.write(path, path.relative_to(releases.release(releases.MIDDLE)).as_posix())
    return {
        "work": str(work),
        "cache": str(cache),
        "~/src/sglang": str(_checkout(work / "checkout")),
        "/path/to/sglang/python": str(releases.release(releases.MIDDLE)),
    }


def _link_tree(source: Path, destination: Path) -> None:
    """A copy by hard links (a cache entry that is a symbolic link is refused), or by copies across devices."""

    def link(from_: str, to: str) -> None:
        try:
            os.link(from_, to)
        except OSError:
            shutil.copy2(from_, to)

    if not destination.exists():
        shutil.copytree(source, destination, copy_function=link)


def _checkout(root: Path) -> Path:
    """A small SGLang-shaped git checkout (package under python/, tests beside it) with tags v0.5.9 and v0.5.23."""
    shutil.copytree(sample_tree() / "sglang", root / "python" / "sglang")
    (root / "python" / "pyproject.toml").write_text("[project]\nname = 'sglang'\n")
    (root / "test").mkdir()
    (root / "test" / "test_pool.py").write_text(
        "class T:\n    def setUp(self):\n        self.max_total_num_tokens = 8\n"
    )
    git = ["git", "-C", str(root), "-c", "user.name=docs", "-c", "user.email=docs@example.invalid"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "0.5.9"], check=True)
    subprocess.run([*git, "tag", "v0.5.9"], check=True)
    runner = next((root / "python").rglob("model_runner_kv_cache_mixin.py"))
    runner.write_text(runner.read_text() + "\n# a later release\n")
    subprocess.run([*git, "commit", "-q", "-am", "0.5.23"], check=True)
    subprocess.run([*git, "tag", "v0.5.23"], check=True)
    return root


@pytest.mark.release
@pytest.mark.parametrize("example", examples(), ids=str)
def test_the_example_runs_and_prints_what_the_document_shows(example: Example, world: dict[str, str]) -> None:
    words = shlex.split(example.command)[1:]
    words = [world.get(word, word) for word in words]
    proc = subprocess.run(
        [sys.executable, "-m", "sgtrace", *words],
        cwd=world["work"], env={**os.environ, "SGTRACE_CACHE_DIR": world["cache"], "COLUMNS": "300"},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    printed = (proc.stdout + proc.stderr).splitlines()
    error = any(line.startswith("sgtrace: error") for line in example.shown)
    assert proc.returncode in ((2,) if error else (0, 1)), (proc.returncode, proc.stderr[-3000:])
    for line in example.shown:
        if line.strip() in ("", "..."):
            continue
        pattern = ".*".join(re.escape(part) for part in line.rstrip().split("..."))
        assert any(re.search(pattern, actual) for actual in printed), (line, proc.stdout[:3000], proc.stderr[-2000:])


def test_the_site_builds_with_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the navigation, every link and image found."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.fail("mkdocs is missing: install the test extras (pip install -e '.[test]')")
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "security" / "index.html").read_text().count("No code runs") >= 1
