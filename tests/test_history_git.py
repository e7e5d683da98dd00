"""history --git on repositories built here, shaped as SGLang's: both ends of a range are stops, a release
tagged on a branch off main shows where it branches, and a merge, a shallow clone, a detached HEAD and a
dirty work tree each say what they are. Run through the CLI, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.test_history import FIGURES, ROUNDING, RUNNER, _history, _tree

#: A test that sets the pool to a made-up value, as a checkout's tests do.
TEST_WRITE = "class TestPool:\n    def setUp(self):\n        self.max_total_num_tokens = 8\n"
_GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "tag.gpgSign=false"]


def _git(repository: Path, *arguments: str) -> str:
    done = subprocess.run([*_GIT, "-C", str(repository), *arguments], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _commit(repository: Path, message: str, files: dict[str, str] | None = None) -> str:
    for name, text in (files or {}).items():
        path = repository / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repository, "add", "-A")
    _git(repository, "commit", "-qm", message)
    return _git(repository, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: base (v1) - other - reserve - docs (v1.5) - a test - merge of a branch that rounds - docs (HEAD); a
    release branch off 'reserve' holds v2 (annotated), a version bump and a cherry-pick that touches the slice;
    one off v1 holds v1.0.1, a docs fix."""
    root = _tree(tmp_path_factory.mktemp("git") / "repo")
    _git(root, "init", "-q", "-b", "main")
    _commit(root, "base")
    _git(root, "tag", "v1")
    _git(root, "checkout", "-qb", "release/v1")  # a patch release, branched at v1 itself
    _commit(root, "fix the docs", {"README.md": "fixed\n"})
    _git(root, "tag", "v1.0.1")
    _git(root, "checkout", "-q", "main")
    _commit(root, "other", {"pkg/other.py": "x = 2\n"})
    _commit(root, "reserve a GB", {"pkg/runner.py": RUNNER.format(reserve=" - 1", rounding="")})
    _git(root, "checkout", "-qb", "release/v2")
    _commit(root, "bump the version", {"pkg/other.py": "x = 3\n"})
    _commit(root, "cherry-pick: reserve 2 GB", {"pkg/runner.py": RUNNER.format(reserve=" - 2", rounding="")})
    _git(root, "tag", "-a", "v2", "-m", "release v2")
    _git(root, "checkout", "-q", "main")
    _commit(root, "docs", {"README.md": "docs\n"})
    _git(root, "tag", "v1.5")
    _commit(root, "a test", {"tests/test_pool.py": TEST_WRITE})  # a test folder's: not the slice's, not a stop
    _git(root, "checkout", "-qb", "rounding")
    _commit(root, "page rounding", {"pkg/runner.py": RUNNER.format(reserve=" - 1", rounding=ROUNDING)})
    _git(root, "checkout", "-q", "main")
    _git(root, "merge", "-q", "--no-ff", "rounding", "-m", "Merge branch 'rounding'")
    _commit(root, "docs again", {"README.md": "more docs\n"})
    return root


def _json(*arguments: str) -> dict[str, Any]:
    code, out, err = _history(*arguments, "--format", "json")
    assert code == 0, err
    found: dict[str, Any] = json.loads(out)
    return found


def _sha(repository: Path, revision: str) -> str:
    return _git(repository, "rev-parse", f"{revision}^{{commit}}")


def test_both_ends_are_stops_and_a_release_branch_shows_where_it_leaves(repo: Path, tmp_path: Path) -> None:
    cache = ("--cache-dir", str(tmp_path / "cache"))
    data = _json("--git", str(repo), "v1..HEAD", *cache)
    stops = data["stops"]
    assert [s["subject"] for s in stops] == ["base", "reserve a GB", "docs", "Merge branch 'rounding'", "docs again"]
    assert [s["commit"]["why"] for s in stops] == ["end", "slice", "tag", "slice", "end"]
    assert stops[1]["commit"]["bases"] == ["v2"] and stops[2]["tags"] == ["v1.5"]
    assert stops[3]["commit"]["merge"] and stops[-1]["commit"]["named"] == "HEAD"
    head = _sha(repo, "HEAD")
    assert stops[-1]["tree"]["commit"] == head and stops[-1]["tree"]["describe"] == f"v1.5-4-g{head[:7]}"
    assert stops[0]["tree"]["describe"] == "v1" and stops[0]["tree"]["kind"] == "checkout"
    tested = _json("--git", str(repo), "v1..HEAD", *cache, "--with-tests")["stops"]
    assert "a test" in [s["subject"] for s in tested]  # with the test folders in the slice, its commit is a stop
    [span] = data["ranges"]
    assert span["off_line"] == [
        {"tag": "v1.0.1", "commit": _sha(repo, "v1.0.1"), "base": _sha(repo, "v1"), "commits": 1, "touching": 0},
        {"tag": "v2", "commit": _sha(repo, "v2"), "base": stops[1]["tree"]["commit"], "commits": 2, "touching": 1},
    ]
    assert stops[0]["commit"]["bases"] == ["v1.0.1"]
    assert (span["low_off_line"], span["shallow"], span["detached"], span["dirty"]) == (False, [], False, [])

    code, out, err = _history("--git", str(repo), "v1..HEAD", *cache)
    assert code == 0, err
    reserve, docs, merge = (stops[n]["label"] for n in (1, 2, 3))
    assert f"{reserve} (base of v2)" in out and f"{docs} (v1.5)" in out and f"{head[:10]} (HEAD)" in out
    assert out.count(f"same as {reserve} (base of v2)") == 1  # the docs' row: nothing of the slice changed
    assert f"same as {merge}" in out  # HEAD, the docs after the merge
    assert "note: v2 (" in out and "its row is the commit the branch leaves from" in out
    assert "the branch's 2 commits after it (1 touching the slice) are not read" in out
    assert f"{stops[0]['label']} (v1, base of v1.0.1)" in out
    assert "the branch's 1 commit after it (none touching the slice) is not read" in out
    assert f"note: {merge}: a merge is one step, the branch it brings in whole" in out


def test_a_range_in_which_nothing_touches_the_slice_is_two_stops_and_the_same(repo: Path, tmp_path: Path) -> None:
    code, out, err = _history("--git", str(repo), "HEAD~1..HEAD", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    merge, head = _sha(repo, "HEAD~1")[:10], _sha(repo, "HEAD")[:10]
    assert f"2 stops, {merge} (HEAD~1) to {head} (HEAD)" in out
    assert f"same as {merge} (HEAD~1)" in out and "history: 2 in all, 2 read; 0 step(s)" in err
    data = _json("--git", str(repo), "HEAD~1..", "--cache-dir", str(tmp_path / "cache"))  # an empty end is HEAD
    assert [s["commit"]["why"] for s in data["stops"]] == ["end", "end"] and data["steps"][0]["changes"] is False


def test_a_range_between_two_releases_shows_both_tags(repo: Path, tmp_path: Path) -> None:
    cache = ("--cache-dir", str(tmp_path / "cache"))
    data = _json("--git", str(repo), "v1..v2", *cache, *FIGURES)
    assert [s["tags"] for s in data["stops"]] == [["v1"], [], ["v2"]]
    assert [round(s["kv_budget_gb"], 2) for s in data["stops"]] == [12.0, 11.0, 10.0]
    assert data["stops"][-1]["tree"]["describe"] == "v2"
    code, out, err = _history("--git", str(repo), "v2..HEAD", *cache)  # from a release branch to main
    assert code == 0, err
    reserve = _sha(repo, "v2~2")[:10]
    assert "note: " in out and "(v2) is not on the first-parent line of " in out
    assert f"the line leaves its history at {reserve}" in out


@pytest.mark.parametrize(
    ("span", "said"),
    [
        ("HEAD..HEAD", "both ends are the commit"),
        ("HEAD..v1", "v1 is older than HEAD (an ancestor of it); name it v1..HEAD"),
        ("v1..nosuch", "no commit nosuch"),
    ],
)
def test_a_range_that_cannot_be_a_history_is_one_line_and_exit_2(
    repo: Path, tmp_path: Path, span: str, said: str
) -> None:
    code, _, err = _history("--git", str(repo), span, "--cache-dir", str(tmp_path / "cache"))
    assert code == 2 and said in err, err


def test_a_shallow_clone_says_what_it_cannot_see(repo: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run([*_GIT, "clone", "-q", "--depth", "2", "--no-local", f"file://{repo}", str(shallow)], check=True)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    code, out, err = _history("--git", str(shallow), "HEAD~1..HEAD", *cache)
    assert code == 0, err
    assert "note: the clone is shallow: its history stops at " in out and "git fetch --unshallow" in out
    code, _, err = _history("--git", str(shallow), "v1..HEAD", *cache)
    assert code == 2 and "no commit v1" in err and "the clone is shallow" in err and "--unshallow" in err
    _git(shallow, "fetch", "-q", "--depth", "1", "origin", "tag", "v1")  # the tag, none of what lies between
    data = _json("--git", str(shallow), "v1..HEAD", *cache)
    [span] = data["ranges"]
    merge = _sha(repo, "HEAD~1")
    assert span["cut"] == merge and span["low_off_line"] and span["low_base"] is None
    assert [s["tree"]["commit"] for s in data["stops"]] == [_sha(repo, "v1"), merge, _sha(repo, "HEAD")]
    code, out, _ = _history("--git", str(shallow), "v1..HEAD", *cache)
    assert f"the clone's history stops at {merge[:10]} before the line meets it (the clone is shallow)" in out


def test_a_detached_head_and_a_dirty_work_tree_are_said(repo: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _git(repo, "worktree", "add", "-q", "--detach", str(work), "v2")
    try:
        (work / "pkg" / "runner.py").write_text(RUNNER.format(reserve=" - 3", rounding=""))
        cache = ("--cache-dir", str(tmp_path / "cache"))
        code, out, err = _history("--git", str(work), "v1..HEAD", *cache, *FIGURES)
        assert code == 0, err
        v2 = _sha(repo, "v2")[:10]
        assert f"{v2} (v2, HEAD, detached)" in out and "10.00 GB" in out  # the commit, not the work tree's 9 GB
        assert "note: HEAD is detached" in out
        assert "note: the work tree changes 1 file the slice reads (pkg/runner.py), not committed" in out
        data = _json("--git", str(work), "v1..HEAD", *cache)
        assert data["ranges"][0]["dirty"] == ["pkg/runner.py"] and data["ranges"][0]["detached"]
    finally:
        _git(repo, "worktree", "remove", "--force", str(work))


def test_first_change_over_a_range_names_each_stop_read_or_not(repo: Path, tmp_path: Path) -> None:
    data = _json("--git", str(repo), "v1..HEAD", "--cache-dir", str(tmp_path / "cache"), "--first-change", *FIGURES)
    assert data["first_change"]["release"] == f"{_sha(repo, 'v1.5~1')[:10]} (base of v2)"
    assert all(stop["tree"]["commit"] for stop in data["stops"])  # read or not, every row names its commit
    assert any(not stop["read"] for stop in data["stops"])


# --- a repository built from real releases, tagged as SGLang tags them ------------------------------------------

#: The releases of the repository: the draft's weights load before the pool is sized from the last one on.
_BUILT = ("0.5.9", "0.5.13.post1", "0.5.14")


@pytest.mark.release
def test_first_change_over_a_checkout_built_from_releases_names_the_commit_of_the_release(tmp_path: Path) -> None:
    """main holds each release's package in turn (one commit each); each release is tagged on a branch of its
    own, after a version bump, as SGLang tags them; a docs commit is HEAD. The first change of the pool, with
    the EAGLE3 journal, is main's commit of the release whose scheduler loads the draft first: the base of its
    tag. Every row names its commit; HEAD, a docs commit, is kept and the same as the release before it."""
    from tests import checkout, releases
    from tests.journals import SHAPES, journal
    from tests.test_history_releases import DRAFT_FIRST

    assert DRAFT_FIRST == _BUILT[-1]
    root = tmp_path / "sglang"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    for version in _BUILT:
        shutil.rmtree(root / "python" / "sglang", ignore_errors=True)
        checkout.build(releases.release(version), root)
        _commit(root, f"sync {version}")
        _git(root, "checkout", "-qb", f"release/v{version}")
        _commit(root, f"bump the version to {version}", {"python/sglang/version.py": f'__version__ = "{version}"\n'})
        _git(root, "tag", "-a", f"v{version}", "-m", f"v{version}")
        _git(root, "checkout", "-q", "main")
    _commit(root, "docs", {"docs/index.md": "docs\n"})
    log = tmp_path / "journal"
    log.write_text("\n".join(journal(SHAPES["eagle3 journal (a draft after the target's graphs)"])) + "\n")
    cache = releases.linked_cache(tmp_path, *_BUILT)
    first = _sha(root, "main~3")
    data = _json("--git", str(root), f"{first}..HEAD", "--cache-dir", str(cache), "--first-change", "--log",
                 str(log), "--set", "mm_reservation_gb=0")  # fmt: skip
    labels = [stop["label"] for stop in data["stops"]]
    bases = [stop["commit"]["bases"] for stop in data["stops"]]
    assert bases == [[f"v{_BUILT[0]}"], [f"v{_BUILT[1]}"], [f"v{_BUILT[2]}"], []], labels
    drafted = _sha(root, "main~1")
    assert data["first_change"]["release"] == f"{drafted[:10]} (base of v{DRAFT_FIRST})"
    assert all(stop["tree"]["commit"] for stop in data["stops"])
    assert data["stops"][-1]["commit"]["named"] == "HEAD"
    code, out, err = _history("--git", str(root), f"{drafted}..HEAD", "--cache-dir", str(cache))
    assert code == 0, err
    assert f"same as {drafted[:10]} (base of v{DRAFT_FIRST})" in out
