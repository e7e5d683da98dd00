"""SECURITY.md's promises, one repro each: no code run, nothing read outside the tree, nothing deleted
that sgtrace did not write, odd names and damaged caches handled as one file's problem."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cachedir import TAG_NAME
from sgtrace.cli import cli

SGTRACE = shutil.which("sgtrace", path=str(Path(sys.executable).parent)) or shutil.which("sgtrace")
#: A pool sized from the budget: caps has a budget site to start from.
WRITE = (
    "class R:\n"
    "    def f(self, total, mem_fraction_static):\n"
    "        self.max_total_num_tokens = int(total * mem_fraction_static)\n"
)


def _marker_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('ran')\n"


def _demo_wheel(folder: Path) -> Path:
    """A wheel pip can download from a local folder (``demo==1.0``)."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/__init__.py", "")
        archive.writestr("demo/runner.py", WRITE)
        archive.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        archive.writestr(
            "demo-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr("demo-1.0.dist-info/RECORD", "")
    return wheel


@pytest.mark.skipif(SGTRACE is None, reason="the sgtrace command is installed with the package")
@pytest.mark.parametrize("planted", ["pip.py", "pip/__init__.py", "sitecustomize.py", "usercustomize.py"])
def test_fetching_a_release_runs_nothing_from_the_current_folder_or_the_tree(tmp_path: Path, planted: str) -> None:
    assert SGTRACE is not None
    index = tmp_path / "index"
    _demo_wheel(index)
    here = tmp_path / "pull-request-checkout"
    marker = tmp_path / "PWNED"
    for folder in (here, here / "tree"):
        (folder / planted).parent.mkdir(parents=True, exist_ok=True)
        (folder / planted).write_text(_marker_code(marker))
    environment = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)}
    for name in ("PIP_INDEX_URL", "PYTHONPATH"):  # (a PYTHONPATH would be sgtrace's own process's to obey)
        environment.pop(name, None)
    command = [SGTRACE, "find", "max_total_num_tokens", "demo==1.0", "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.run(command, cwd=here, env=environment, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "demo/runner.py" in proc.stdout
    assert not marker.exists()


def _project_folder(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "pyproject.toml").write_text('[tool.sgtrace]\ncache-dir = "."\n')
    (root / "index").mkdir()
    (root / "index" / "mine.txt").write_text("not sgtrace's")
    return root


def test_cache_clear_refuses_a_folder_that_is_not_sgtraces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project_folder(tmp_path / "project")
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    monkeypatch.chdir(project)  # its [tool.sgtrace] table names "." as the cache
    monkeypatch.delenv("SGTRACE_CACHE_DIR")
    result = CliRunner().invoke(cli, ["cache", "clear"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "is not an sgtrace cache" in result.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_a_run_does_not_write_into_a_folder_that_is_not_sgtraces(tmp_path: Path) -> None:
    project = _project_folder(tmp_path / "project")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "m.py").write_text(WRITE)
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    result = CliRunner().invoke(
        cli, ["find", "max_total_num_tokens", str(tmp_path / "tree"), "--cache-dir", str(project)]
    )
    assert result.exit_code == 0
    assert "running without a cache" in result.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_cache_clear_removes_only_sgtraces_parts_and_no_link_target(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text(WRITE)
    cache = tmp_path / "cache"
    runner = CliRunner()
    assert runner.invoke(cli, ["caps", str(tree), "--cache-dir", str(cache)]).exit_code in (0, 1)
    assert (cache / TAG_NAME).is_file()
    (cache / "notes.txt").write_text("mine")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (cache / "graph").rename(cache / "graph-old")
    (cache / "graph").symlink_to(outside)
    result = runner.invoke(cli, ["cache", "clear", "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in cache.iterdir()) == [TAG_NAME, "graph-old", "notes.txt"]
    assert (outside / "keep.txt").read_text() == "keep"


def test_a_cache_part_that_is_a_link_leading_out_is_not_written_through(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text(WRITE)
    cache = tmp_path / "cache"
    cache.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    for part in ("manifest", "index", "graph", "caps"):
        (cache / part).symlink_to(outside)
    result = CliRunner().invoke(cli, ["caps", str(tree), "--cache-dir", str(cache)])
    assert result.exit_code in (0, 1), result.output
    assert "not writing through a symbolic link" in result.stderr
    assert list(outside.iterdir()) == []


def _tree_with_a_link_out(tmp_path: Path) -> tuple[Path, Path]:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text(WRITE)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.py").write_text('o.max_total_num_tokens = "SECRET"\n')
    (secret / "pyproject.toml").write_text("[tool.setuptools]\n")
    (tree / "pkg" / "r").symlink_to(secret)
    (tree / "pkg" / "s.py").symlink_to(secret / "s.py")
    (tree / "pkg" / "inside").symlink_to(tree / "pkg" / "a.py")  # a link inside: followed
    (tree / ".gitignore").symlink_to(secret / "s.py")
    return tree, secret


def test_links_leading_out_of_the_tree_are_not_followed_unless_asked(tmp_path: Path) -> None:
    tree, _ = _tree_with_a_link_out(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli, ["find", "max_total_num_tokens", str(tree), "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert {w["path"] for w in json.loads(result.stdout)["writes"]} == {"pkg/a.py"}
    assert "SECRET" not in result.stdout
    [warning] = [line for line in result.stderr.splitlines() if "lead out of it" in line]
    assert "3 symbolic links" in warning and "--follow-links" in warning
    followed = runner.invoke(cli, ["find", "max_total_num_tokens", str(tree), "--follow-links", "--no-cache"])
    assert "SECRET" in followed.stdout


def test_nothing_outside_the_tree_is_opened(tmp_path: Path) -> None:
    """Evidence from the interpreter itself: every open() and directory listing, seen by an audit hook."""
    tree, secret = _tree_with_a_link_out(tmp_path)
    (tree / "pkg" / "etc").symlink_to("/etc")
    script = (
        "import sys\n"
        "seen = []\n"
        "def hook(event, args):\n"
        "    if event in ('open', 'os.scandir', 'os.listdir') and args and isinstance(args[0], (str, bytes)):\n"
        "        seen.append(args[0] if isinstance(args[0], str) else args[0].decode('utf-8', 'replace'))\n"
        "sys.addaudithook(hook)\n"
        "from sgtrace.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(seen), file=sys.stderr)\n"
    )
    for command in (["find", "max_total_num_tokens"], ["caps"], ["trace", "max_total_num_tokens"]):
        proc = subprocess.run(
            [sys.executable, "-c", script, *command, str(tree), "--jobs", "1", "--cache-dir", str(tmp_path / "c")],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        opened = proc.stderr.splitlines()
        assert any(str(tree) in line for line in opened)  # the hook saw the tree being read
        assert not [line for line in opened if str(secret) in line or line.startswith("/etc/")], command


def test_odd_file_names_are_analysed_and_printed_escaped(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    names = [b"caf\xe9.py", b"new\nline.py", b"tab\tbed.py", b"bell\x07.py", "r\u202etl.py".encode()]
    for name in names:
        with open(os.path.join(os.fsencode(tree), name), "wb") as handle:
            handle.write(WRITE.encode())
    (tree / "plain.py").write_text(WRITE)
    runner = CliRunner()
    found = runner.invoke(cli, ["find", "max_total_num_tokens", str(tree), "--format", "json", "--no-cache"])
    assert found.exit_code == 0, found.output
    found.stdout_bytes.decode("utf-8")  # valid UTF-8
    paths = {w["path"] for w in json.loads(found.stdout)["writes"]}
    assert paths == {"caf\\xe9.py", "new\\nline.py", "tab\\tbed.py", "bell\\x07.py", "r\\u202etl.py", "plain.py"}
    text = runner.invoke(cli, ["find", "max_total_num_tokens", str(tree), "--no-cache"])
    assert "new\\nline.py" in text.stdout and "line.py\n" not in text.stdout.replace("new\\nline.py\n", "")
    baseline = tmp_path / "baseline.json"
    for command in (
        ["caps", "--format", "json"], ["trace", "max_total_num_tokens", "--format", "json"], ["graph"],
        ["check", "--write-baseline", str(baseline)], ["check", "--baseline", str(baseline)],
    ):  # fmt: skip
        result = runner.invoke(cli, [*command, str(tree), "--cache-dir", str(tmp_path / "cache")])
        assert result.exit_code in (0, 1), (command, result.output)
        result.stdout_bytes.decode("utf-8")
        if "json" in command:
            json.loads(result.stdout)


@pytest.mark.parametrize("line", ["[z-a]", "!", "a\\", "\\"])
def test_an_ignore_line_git_tolerates_is_tolerated(tmp_path: Path, line: str) -> None:
    tree = tmp_path / "repo"
    tree.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text(f"{line}\nskipped.py\n")
    (tree / "kept.py").write_text(WRITE)
    (tree / "skipped.py").write_text(WRITE)
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(tree), "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert [w["path"] for w in json.loads(result.stdout)["writes"]] == ["kept.py"]
    assert f".gitignore:1: pattern {line!r} ignored, as git ignores it" in result.stderr


def test_a_bad_pattern_on_the_command_line_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(WRITE)
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(tmp_path), "--exclude", "[z-a]"])
    assert result.exit_code == 2
    assert result.stderr.startswith("sgtrace: error: --exclude '[z-a]' is not a valid gitignore-style pattern")
    assert result.stderr.count("\n") == 1


def test_a_cache_entry_nested_past_the_stack_is_discarded_and_rebuilt(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text(WRITE)
    cache = tmp_path / "cache"
    runner = CliRunner()
    command = ["caps", str(tree), "--format", "json", "--cache-dir", str(cache)]
    first = runner.invoke(cli, command)
    entries = [p for p in cache.rglob("*.json") if "releases" not in p.parts]
    assert entries
    for entry in entries:
        entry.write_bytes(b"[" * 200_000)
    again = runner.invoke(cli, command)
    assert again.exit_code == first.exit_code and again.stdout == first.stdout
    assert "nested too deeply" in again.stderr
    third = runner.invoke(cli, command)
    assert "damaged" not in third.stderr  # rebuilt


def test_a_file_that_is_not_python_given_as_the_tree_is_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# sglang\n\nself.max_total_num_tokens = 1\n")
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(readme)])
    assert result.exit_code == 2
    assert result.stderr == f"sgtrace: error: not a directory or a Python file: {readme}\n"


def test_an_internal_error_has_its_own_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text(WRITE)

    def broken(*_: object, **__: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("sgtrace.api._find", broken)
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(tmp_path), "--no-cache"])
    assert result.exit_code == 3
    assert result.stderr.startswith("sgtrace: internal error: RecursionError")


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "0", "ten", "1e400"])
def test_sizes_that_are_not_sizes_are_usage_errors(tmp_path: Path, value: str) -> None:
    command = [sys.executable, "-m", "sgtrace", "find", "x", str(tmp_path), "--max-file-size", value]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("sgtrace: error: Invalid value for '--max-file-size'")
    assert proc.stderr.count("\n") == 1


# -- a repository's git configuration names no program that runs ---------------------------------------------

#: kind -> (the repository's own configuration (key, value), files it holds besides the code). Each
#: program writes a marker named after its kind; none may be written.
HOOKS: dict[str, tuple[list[tuple[str, str]], dict[str, str]]] = {
    "smudge filter": ([("filter.probe.smudge", "{probe} cat")], {".gitattributes": "*.py filter=probe\n"}),
    "clean filter": ([("filter.probe.clean", "{probe} cat")], {".gitattributes": "*.py filter=probe\n"}),
    "process filter": (
        [("filter.probe.process", "{probe} cat"), ("filter.probe.required", "true")],
        {".gitattributes": "*.py filter=probe\n"},
    ),
    "text conversion": ([("diff.probe.textconv", "{probe} cat")], {".gitattributes": "*.py diff=probe\n"}),
    "external diff": ([("diff.external", "{probe} true")], {}),
    "fsmonitor": ([("core.fsmonitor", "{probe} true")], {}),
    "pager": ([("core.pager", "{probe} cat"), ("pager.log", "{probe} cat")], {}),
    "hooks": ([("core.hooksPath", "{hooks}")], {}),
    "alternate refs": ([("core.alternateRefsCommand", "{probe} true")], {}),
    "ssh": ([("core.sshCommand", "{probe} true"), ("core.gitProxy", "{probe} true")], {}),
    "credential helper": ([("credential.helper", "!{probe} true")], {}),
    "upload-pack hook": ([("uploadpack.packObjectsHook", "{probe} true")], {}),
    "gpg": ([("gpg.program", "{probe} true"), ("log.showSignature", "true")], {}),
}


def _git(repository: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(repository), *arguments], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})  # fmt: skip


@pytest.mark.parametrize("kind", sorted(HOOKS))
def test_no_program_a_repository_configures_runs(tmp_path: Path, kind: str) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    probe = tmp_path / "probe.sh"  # touches its marker, then runs what follows it (a filter must still pass data)
    probe.write_text(f'#!/bin/sh\ntouch "{markers}/$(basename "$0")-$$"\nexec "$@"\n')
    probe.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/{hook}\n")
        (hooks / hook).chmod(0o755)
    repository = tmp_path / "repository"
    (repository / "pkg").mkdir(parents=True)
    _git(repository, "init", "-q")
    source = "class R:\n    def f(self, server_args):\n        self.max_total_num_tokens = int(server_args.{} * 10)\n"
    (repository / "pkg" / "m.py").write_text(source.format("mem_fraction_static"))
    settings, files = HOOKS[kind]
    for name, text in files.items():
        (repository / name).write_text(text)
    _git(repository, "add", "-A")
    _git(repository, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    lowered = source.format("mem_fraction_static") + "        self.max_total_num_tokens //= 2\n"
    (repository / "pkg" / "m.py").write_text(lowered)
    _git(repository, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qam", "two")
    for key, value in settings:  # configured after the commits: git itself would have run them
        _git(repository, "config", key, value.format(probe=probe, hooks=hooks))
    result = CliRunner().invoke(
        cli, ["diff", "HEAD~1", "HEAD", "--git", str(repository), "--cache-dir", str(tmp_path / "cache")]
    )
    assert result.exit_code in (0, 1), result.output
    assert "added" in result.stderr  # the second revision's //= 2 is a new cap: the blobs were read
    assert list(markers.iterdir()) == []
    # a history asks git more (log, for-each-ref, merge-base, describe, status of a dirty work tree)
    (repository / "pkg" / "m.py").write_text(lowered.replace("//= 2", "//= 3"))  # same size: contents compared
    os.utime(repository / "pkg" / "m.py", (1, 1))
    result = CliRunner().invoke(
        cli, ["history", "--git", str(repository), "HEAD~1..HEAD", "--cache-dir", str(tmp_path / "cache")]
    )
    assert result.exit_code == 0, result.output
    assert "the work tree changes 1 file the slice reads (pkg/m.py)" in result.stdout
    assert list(markers.iterdir()) == []


@pytest.mark.parametrize("kind", sorted(HOOKS))
def test_no_program_a_repository_configures_runs_while_its_work_tree_is_identified(tmp_path: Path, kind: str) -> None:
    """The answer names the checkout's commit, tag and changes (git rev-parse, describe, ls-files, status):
    a changed file, whose content git would pass through a filter to compare, runs none of them."""
    markers = tmp_path / "markers"
    markers.mkdir()
    probe = tmp_path / "probe.sh"
    probe.write_text(f'#!/bin/sh\ntouch "{markers}/$(basename "$0")-$$"\nexec "$@"\n')
    probe.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/{hook}\n")
        (hooks / hook).chmod(0o755)
    repository = tmp_path / "repository"
    (repository / "pkg").mkdir(parents=True)
    _git(repository, "init", "-q")
    source = "class R:\n    def f(self, server_args):\n        self.max_total_num_tokens = int(server_args.{} * 10)\n"
    source = source.format("mem_fraction_static")
    (repository / "pkg" / "m.py").write_text(source + "# a\n")
    settings, files = HOOKS[kind]
    for name, text in files.items():
        (repository / name).write_text(text)
    _git(repository, "add", "-A")
    _git(repository, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    _git(repository, "-c", "user.email=a@b", "-c", "user.name=a", "tag", "-a", "-m", "a release", "v1")
    for key, value in settings:
        _git(repository, "config", key, value.format(probe=probe, hooks=hooks))
    (repository / "pkg" / "m.py").write_text(source + "# b\n")  # its size as committed: git compares contents
    (repository / "pkg" / "n.py").write_text("x = 1\n")
    os.utime(repository / "pkg" / "m.py", (1, 1))  # a stat git's index does not hold: it must look at the content
    result = CliRunner().invoke(cli, ["caps", str(repository), "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code in (0, 1), result.output
    assert "(commit " in result.stdout.splitlines()[0] and "2 .py files changed" in result.stdout.splitlines()[0]
    assert list(markers.iterdir()) == []
