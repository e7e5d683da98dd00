"""Which code an answer read: a checkout by its commit, tag, version and state; a release by its spec."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sgtrace.cli import cli
from sgtrace.identity import identify, order, version_of
from sgtrace.model import TreeIdentity
from sgtrace.sources import Target, sample_tree

_GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run([*_GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _commit(repo: Path, message: str, version: str | None = None) -> str:
    if version is not None:
        (repo / "python" / "pyproject.toml").write_text(f'[project]\nname = "sglang"\nversion = "{version}"\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """The sample as a checkout: one commit tagged v0.5.9, one after it (0.5.10), a changed .py file."""
    root = tmp_path / "repo"
    shutil.copytree(sample_tree() / "sglang", root / "python" / "sglang")
    (root / "README.md").write_text("a checkout\n")
    _git(root, "init", "-q")
    _commit(root, "first", "0.5.9")
    _git(root, "tag", "v0.5.9")
    (root / "python" / "sglang" / "__init__.py").write_text("# the second commit\n")
    _commit(root, "second", "0.5.10")
    (root / "python" / "sglang" / "__init__.py").write_text("# changed, not committed\n")
    return root


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_checkout_is_its_commit_its_tag_its_version_and_its_changes(repo: Path) -> None:
    found = identify(Target(str(repo), "repo"))
    head = _git(repo, "rev-parse", "HEAD")
    assert (found.kind, found.commit, found.version) == ("checkout", head, "0.5.10")
    assert found.describe == f"v0.5.9-1-g{head[:7]}"
    assert (found.dirty, found.dirty_files, found.root) == (True, 1, str(repo.resolve()))


def test_a_folder_inside_a_checkout_is_the_checkout_and_counts_only_its_own_files(repo: Path) -> None:
    (repo / "notes.py").write_text("x = 1\n")  # untracked, outside the package
    found = identify(Target(str(repo / "python" / "sglang"), "python/sglang"))
    assert (found.kind, found.root, found.version, found.dirty_files) == ("checkout", str(repo.resolve()), "0.5.10", 1)
    whole = identify(Target(str(repo), "repo"))
    assert whole.dirty_files == 1  # the package's files: notes.py is beside it


def test_a_clean_checkout_with_no_tag_has_no_describe(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    shutil.copytree(sample_tree() / "sglang", root / "sglang")
    (root / "sglang" / "version.py").write_text('__version__ = "1.2.3"\n')
    _git(root, "init", "-q")
    _commit(root, "only")
    found = identify(Target(str(root), "plain"))
    assert (found.describe, found.dirty, found.dirty_files, found.version) == (None, False, 0, "1.2.3")


def test_a_folder_outside_git_has_no_commit(tmp_path: Path) -> None:
    shutil.copytree(sample_tree() / "sglang", tmp_path / "sglang")
    found = identify(Target(str(tmp_path), "x"))
    assert (found.kind, found.commit, found.describe, found.dirty) == ("folder", None, None, False)


def test_an_ignored_folder_inside_a_checkout_is_not_the_checkout(repo: Path) -> None:
    (repo / ".gitignore").write_text("venv/\n")
    shutil.copytree(sample_tree() / "sglang", repo / "venv" / "sglang")
    found = identify(Target(str(repo / "venv"), "venv", kind="installed"))
    assert (found.kind, found.commit) == ("installed", None)


def test_a_release_is_its_spec_and_version(tmp_path: Path) -> None:
    found = identify(Target(str(tmp_path), "sglang==0.5.9", kind="release", spec="sglang==0.5.9"))
    assert (found.kind, found.spec, found.version, found.commit) == ("release", "sglang==0.5.9", "0.5.9", None)


def test_a_revision_of_a_checkout_is_its_commit_not_the_work_tree(repo: Path, tmp_path: Path) -> None:
    first = _git(repo, "rev-parse", "v0.5.9")
    tree = tmp_path / "unpacked"
    (tree / "python").mkdir(parents=True)
    (tree / "python" / "pyproject.toml").write_text('[project]\nversion = "0.5.9"\n')
    found = identify(Target(str(tree), "v0.5.9", repository=str(repo), revision="v0.5.9"))
    assert (found.kind, found.commit, found.describe, found.version, found.dirty) == (
        "checkout", first, "v0.5.9", "0.5.9", False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "2.0"\n'}, "2.0"),
        ({"python/pyproject.toml": '[project]\nversion = "0.5.9"\n'}, "0.5.9"),
        (
            {
                "python/pyproject.toml": '[project]\ndynamic = ["version"]\n',
                "python/sglang/__init__.py": "",
                "python/sglang/version.py": '__version__ = "0.5.23"\n',
            },
            "0.5.23",
        ),
        ({"version.py": "__version__: str = '0.1'\n"}, "0.1"),
        ({"pyproject.toml": "[project\nbroken"}, None),
        ({}, None),
    ],
)
def test_the_version_is_read_as_text(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert version_of(tmp_path) == expected


def _tree(**fields: object) -> TreeIdentity:
    return TreeIdentity(**{"display": "x", "root": "/nowhere", "kind": "release", **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("old", "new", "older"),
    [("0.5.23", "0.5.9", True), ("0.5.9", "0.5.10", False), ("0.5.9", "0.5.9", None), ("0.5.9.post1", "0.5.9", True)],
)
def test_releases_are_ordered_by_version(old: str, new: str, older: bool | None) -> None:
    found = order(_tree(version=old), _tree(version=new))
    assert (found.new_is_older if found else None) == older
    assert found is None or found.by == "version"


def test_commits_are_ordered_by_ancestry(repo: Path) -> None:
    first, head = _git(repo, "rev-parse", "v0.5.9"), _git(repo, "rev-parse", "HEAD")
    root = str(repo)
    backwards = order(_tree(root=root, commit=head, version="9"), _tree(root=root, commit=first, version="10"))
    assert backwards is not None and (backwards.new_is_older, backwards.by) == (True, "ancestry")
    forwards = order(_tree(root=root, commit=first), _tree(root=root, commit=head))
    assert forwards is not None and not forwards.new_is_older


def test_find_names_the_checkout_in_its_first_line_and_its_json(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "python")
    head = _git(repo, "rev-parse", "HEAD")
    code, out, err = _invoke("find", "max_total_num_tokens", "--no-cache")
    assert code == 0
    assert out.splitlines()[0] == (
        f"writes of .max_total_num_tokens in {repo} (commit {head[:12]}, v0.5.9-1-g{head[:7]}, version 0.5.10,"
        " 1 .py file changed since the commit)"
    )
    _, out, _ = _invoke("find", "max_total_num_tokens", "--no-cache", "--format", "json")
    tree = json.loads(out)["tree"]
    assert tree == {
        "display": str(repo), "root": str(repo.resolve()), "kind": "checkout", "commit": head,
        "describe": f"v0.5.9-1-g{head[:7]}", "version": "0.5.10", "spec": None, "dirty": True, "dirty_files": 1,
    }  # fmt: skip


def test_caps_names_the_commit_in_text_json_and_sarif(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    _, out, _ = _invoke("caps", str(repo), "--no-cache")
    assert out.splitlines()[0].endswith(f"in {repo} (commit {head[:12]}, v0.5.9-1-g{head[:7]}, version 0.5.10, "
                                        "1 .py file changed since the commit)")  # fmt: skip
    _, out, _ = _invoke("caps", str(repo), "--no-cache", "--format", "json")
    assert json.loads(out)["tree"]["commit"] == head
    _, out, _ = _invoke("caps", str(repo), "--no-cache", "--format", "sarif")
    sarif = json.loads(out)
    (provenance,) = sarif["runs"][0]["versionControlProvenance"]
    assert provenance["repositoryUri"] == repo.resolve().as_uri() and provenance["revisionId"] == head
    from tests.sarif_schema import assert_valid_sarif

    assert_valid_sarif(sarif)


def test_the_sample_is_named_as_the_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sgtrace.sources.installed_package", lambda name: None)
    _, out, _ = _invoke("find", "max_total_num_tokens", "--no-cache")
    assert out.splitlines()[0] == "writes of .max_total_num_tokens in <sample> (the sample shipped with sgtrace)"


def test_diff_says_when_new_is_older_than_old(repo: Path, tmp_path: Path) -> None:
    older = tmp_path / "older"
    _git(tmp_path, "clone", "-q", str(repo), str(older))
    _git(older, "checkout", "-q", "v0.5.9")
    first, head = _git(repo, "rev-parse", "v0.5.9"), _git(repo, "rev-parse", "HEAD")
    code, out, err = _invoke("diff", str(repo), str(older), "--no-cache")
    note = (
        f"sgtrace: note: NEW ({older}) is older than OLD ({repo}): its commit {first[:12]} is an ancestor of"
        f" {head[:12]}; what is 'added' and 'removed' runs backwards in time"
    )
    assert code == 0 and note in err.splitlines()
    assert out.splitlines()[0].endswith(f"-> {older} (commit {first[:12]}, v0.5.9, version 0.5.9)")
    _, out, err = _invoke("diff", str(older), str(repo), "--no-cache", "--format", "json")
    payload = json.loads(out)
    assert payload["order"] == {"new_is_older": False, "by": "ancestry", "old": first, "new": head}
    assert (payload["trees"]["old"]["commit"], payload["trees"]["new"]["dirty_files"]) == (first, 1)
    assert "older than" not in err
    _, out, _ = _invoke("diff", str(older), str(repo), "--no-cache", "--format", "markdown")
    assert f"- new: `{repo}` (commit {head[:12]}, v0.5.9-1-g{head[:7]}, version 0.5.10," in out
    _, out, _ = _invoke("diff", str(older), str(repo), "--no-cache", "--format", "sarif")
    (provenance,) = json.loads(out)["runs"][0]["versionControlProvenance"]
    assert provenance["revisionId"] == head


def test_the_baseline_records_its_tree_and_an_old_baseline_still_reads(repo: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    code, _, _ = _invoke("check", str(repo), "--write-baseline", str(baseline), "--no-cache")
    head = _git(repo, "rev-parse", "HEAD")
    recorded = json.loads(baseline.read_text())
    assert code == 0 and recorded["tree"]["commit"] == head and recorded["tree"]["kind"] == "checkout"
    code, out, _ = _invoke("check", str(repo), "--baseline", str(baseline), "--no-cache", "--format", "json")
    payload = json.loads(out)
    assert code == 0 and payload["trees"]["old"]["commit"] == head and payload["order"] is None
    del recorded["tree"]  # written by an sgtrace that did not record it
    baseline.write_text(json.dumps(recorded))
    code, out, _ = _invoke("check", str(repo), "--baseline", str(baseline), "--no-cache")
    named = f"{repo} (commit {head[:12]}, v0.5.9-1-g{head[:7]}, version 0.5.10, 1 .py file changed since the commit)"
    assert code == 0 and out.splitlines()[0].endswith(f"-> {named}")
    recorded["tree"] = {"display": 1}
    baseline.write_text(json.dumps(recorded))
    code, _, err = _invoke("check", str(repo), "--baseline", str(baseline), "--no-cache")
    assert code == 2 and "tree.display: a string" in err


_FIGURES = ["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]


def test_explain_graph_and_the_page_name_the_commit(repo: Path, tmp_path: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    named = f"{repo} (commit {head[:12]}, v0.5.9-1-g{head[:7]}, version 0.5.10, 1 .py file changed since the commit)"
    code, out, _ = _invoke("explain", str(repo), *_FIGURES, "--no-cache")
    assert code == 0 and out.splitlines()[0] == f"the mem_fraction_static budget of .max_total_num_tokens in {named}"
    _, out, _ = _invoke("explain", str(repo), *_FIGURES, "--no-cache", "--format", "json")
    assert json.loads(out)["tree"]["commit"] == head
    _, out, _ = _invoke("graph", str(repo), "--no-cache")
    assert out.splitlines()[0] == f'digraph "max_total_num_tokens in {named}" {{'
    _, out, _ = _invoke("graph", str(repo), "--no-cache", "--json")
    assert json.loads(out)["graph"]["tree"]["commit"] == head
    _, out, _ = _invoke("graph", str(repo), "--no-cache", "--graphml")
    assert f">{head}</data>" in out
    page = tmp_path / "page.html"
    code, _, _ = _invoke("report", str(repo), "-o", str(page), "--no-cache")
    assert code == 0 and f"<code>{repo}</code> ({named.partition(' (')[2]}</p>" in page.read_text()


def test_a_view_of_the_graph_is_not_reused_once_the_work_tree_changes(repo: Path) -> None:
    def changed() -> int:
        _, out, _ = _invoke("trace", "max_total_num_tokens", str(repo), "--format", "json")
        return int(json.loads(out)["graph"]["tree"]["dirty_files"])

    assert changed() == 1
    (repo / "python" / "sglang" / "srt" / "__init__.py").write_text("# changed too\n")
    assert changed() == 2


@pytest.mark.parametrize(
    ("tree", "said"),
    [
        (_tree(display="sglang==0.5.9", spec="sglang==0.5.9", version="0.5.9"), ""),
        (_tree(display="sglang-0.5.9-py3-none-any.whl", version="0.5.9"), "release 0.5.9"),
        (_tree(kind="installed", version="0.5.9"), "installed 0.5.9"),
        (_tree(kind="folder"), "not a git checkout"),
        (
            _tree(kind="checkout", commit="a" * 40, dirty=True),
            f"commit {'a' * 12}, changes since the commit, none in its .py files",
        ),
    ],
)
def test_what_a_tree_is_in_words(tree: TreeIdentity, said: str) -> None:
    from sgtrace.report.provenance import described

    assert described(tree) == said


def test_diff_of_two_revisions_of_a_checkout_orders_them_by_ancestry(repo: Path) -> None:
    first, head = _git(repo, "rev-parse", "v0.5.9"), _git(repo, "rev-parse", "HEAD")
    code, out, err = _invoke("diff", "HEAD", "v0.5.9", "--git", str(repo), "--format", "json")
    payload = json.loads(out)
    assert code == 0 and payload["order"] == {"new_is_older": True, "by": "ancestry", "old": head, "new": first}
    assert payload["trees"]["new"] == {
        "display": "v0.5.9", "root": str(repo.resolve()), "kind": "checkout", "commit": first, "describe": "v0.5.9",
        "version": "0.5.9", "spec": None, "dirty": False, "dirty_files": 0,
    }  # fmt: skip
    assert "sgtrace: note: NEW (v0.5.9) is older than OLD (HEAD)" in err


def test_diff_of_two_folders_orders_them_by_version(tmp_path: Path) -> None:
    for name, version in (("new", "0.5.9"), ("old", "0.5.23")):
        shutil.copytree(sample_tree() / "sglang", tmp_path / name / "python" / "sglang")
        (tmp_path / name / "python" / "pyproject.toml").write_text(f'[project]\nversion = "{version}"\n')
    old, new = tmp_path / "old", tmp_path / "new"
    code, out, err = _invoke("diff", str(old), str(new), "--no-cache")
    line = f"sgtrace: note: NEW ({new}) is older than OLD ({old}): version 0.5.9 is before 0.5.23;"
    assert code == 0 and any(row.startswith(line) for row in err.splitlines())
    assert out.splitlines()[1].startswith(line.removeprefix("sgtrace: "))


def test_a_worktree_is_a_checkout_of_its_own_commit(repo: Path, tmp_path: Path) -> None:
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), "v0.5.9")
    found = identify(Target(str(tmp_path / "wt"), "wt"))
    assert (found.kind, found.describe, found.version, found.dirty) == ("checkout", "v0.5.9", "0.5.9", False)
    assert found.root == str((tmp_path / "wt").resolve())


def test_trace_names_the_commit_in_its_first_line(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    _, out, _ = _invoke("trace", "max_total_num_tokens", str(repo))
    assert out.splitlines()[0].startswith(f"data flow of .max_total_num_tokens under {repo} (commit {head[:12]},")


def test_the_page_says_when_the_tree_is_older_than_the_one_it_is_compared_against(repo: Path, tmp_path: Path) -> None:
    older = tmp_path / "older"
    _git(tmp_path, "clone", "-q", str(repo), str(older))
    _git(older, "checkout", "-q", "v0.5.9")
    page = tmp_path / "page.html"
    code, _, _ = _invoke("report", str(older), "--against", str(repo), "-o", str(page), "--no-cache")
    assert code == 0 and f'<p class="meta backwards">note: NEW ({older}) is older than OLD ({repo})' in page.read_text()
