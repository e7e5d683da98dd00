"""A git checkout of SGLang (package under ``python/``) gives the answers of the package itself.

Checkouts are built from real wheels (tests/checkout.py): scripts, a second
package, a stale ``build/lib`` copy listed in ``.gitignore``, packaging files.
Every comparison is against the same release analysed from its package
folder; only the ``python/`` prefix of the paths may differ.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from sgtrace.analyses.diff import CapPair
from sgtrace.api import caps, diff, find, resolve_targets, trace
from sgtrace.index.findpass import RunOptions
from sgtrace.model import CapsResult, FindQuery, PathFilter, TraceQuery
from sgtrace.sources import Target
from tests import checkout, releases

pytestmark = pytest.mark.release
QUERY = TraceQuery("max_total_num_tokens")
BUDGET = "mem_fraction_static"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module", params=[releases.MIDDLE, releases.NEWEST])
def layout(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the release's package folder, a git checkout of it with an older release's stale build/lib copy)."""
    version = request.param
    package = releases.release(version)
    stale = releases.release(releases.EARLY_05)
    tree = checkout.build(package, tmp_path_factory.mktemp(f"checkout-{version}") / "sglang", stale)
    checkout.git(tree, "init", "-q")
    return package, tree


def _unprefixed(record: Any) -> Any:
    return dataclasses.replace(record, path=record.path.removeprefix("python/"))


def _caps(root: Path, cache: Path, path_filter: PathFilter = PathFilter()) -> CapsResult:
    return caps(QUERY, BUDGET, Target(str(root), root.name), RunOptions(cache_dir=cache, path_filter=path_filter))


def test_caps_and_budget_sites_equal_the_package(layout: tuple[Path, Path], cache: Path) -> None:
    package, tree = layout
    expected = _caps(package, cache)
    got = _caps(tree, cache)
    assert expected.caps and expected.budget_sites
    assert sorted(map(_unprefixed, got.caps), key=repr) == sorted(expected.caps, key=repr)
    assert sorted(map(_unprefixed, got.budget_sites), key=repr) == sorted(expected.budget_sites, key=repr)
    assert all(c.path.startswith("python/sglang/") for c in got.caps)
    assert all(c.owner is None or c.owner.startswith("sglang.srt.") for c in got.caps)
    assert got.shadowed == ()  # build/ is in .gitignore


def test_with_gitignore_off_the_stale_copy_is_left_out_and_said(layout: tuple[Path, Path], cache: Path) -> None:
    package, tree = layout
    got = _caps(tree, cache, PathFilter(gitignore=False))
    assert sorted(map(_unprefixed, got.caps), key=repr) == sorted(_caps(package, cache).caps, key=repr)
    [copy] = got.shadowed
    assert (copy.package, copy.used, copy.left_out) == ("sglang", "python/sglang", ("python/build/lib/sglang",))
    assert copy.files == sum(1 for _ in (releases.release(releases.EARLY_05) / "sglang").rglob("*.py"))


def test_trace_chain_to_the_scheduler_equals_the_package(layout: tuple[Path, Path], cache: Path) -> None:
    package, tree = layout

    def upstream_of_the_scheduler(root: Path) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
        # The whole slice: under the default node bound the newest release's slice is cut, and where the
        # cut falls depends on what else the tree holds (issue 11 makes the default slice complete).
        result = trace(
            TraceQuery(QUERY.attribute, max_nodes=100_000), Target(str(root), root.name), RunOptions(cache_dir=cache)
        )
        assert not result.truncated
        graph = result.graph
        [scheduler] = [p for p in graph.nodes if p.kind == "write" and p.label == "Scheduler.max_total_num_tokens"]
        chain = graph.subgraph(nx.ancestors(graph, scheduler) | {scheduler})

        def name(p: Any) -> tuple[str, ...]:
            return (p.kind, p.label, p.path.removeprefix("python/"), str(p.line))

        nodes = {name(p) for p in chain.nodes}
        edges = {(*name(a), "->", *name(b), chain.edges[a, b]["op"]) for a, b in chain.edges}
        return nodes, edges

    expected_nodes, expected_edges = upstream_of_the_scheduler(package)
    nodes, edges = upstream_of_the_scheduler(tree)
    assert any(kind == "return" and "get_worker_info" in label for kind, label, *_ in nodes)
    assert len(expected_nodes) > 20
    assert nodes == expected_nodes
    assert edges == expected_edges


def test_find_lists_the_scripts_writes_and_exclude_leaves_them_out(layout: tuple[Path, Path], cache: Path) -> None:
    package, tree = layout
    expected = find(FindQuery("max_total_num_tokens"), [Target(str(package), "p")], RunOptions(cache_dir=cache))
    everything = find(FindQuery("max_total_num_tokens"), [Target(str(tree), "c")], RunOptions(cache_dir=cache))
    scoped = find(
        FindQuery("max_total_num_tokens"),
        [Target(str(tree), "c")],
        RunOptions(cache_dir=cache, path_filter=PathFilter(exclude=("test/**",))),
    )
    inside = [_unprefixed(w) for w in everything.writes if w.path.startswith("python/")]
    assert inside == list(expected.writes)
    outside = {(w.path, w.owner) for w in everything.writes if not w.path.startswith("python/")}
    assert outside == {
        ("sgl-kernel/python/sgl_kernel/allocator.py", "sgl_kernel.allocator.PageTable"),
        ("test/srt/test_kv_pool_size.py", "test.srt.test_kv_pool_size.TestKVPoolSize"),
    }
    assert [w for w in everything.writes if not w.path.startswith("test/")] == list(scoped.writes)


def test_diff_of_two_tags_equals_the_diff_of_the_packages(tmp_path: Path, cache: Path) -> None:
    old, new = releases.release(releases.MIDDLE), releases.release(releases.NEWEST)
    repository = checkout.tagged_repository({releases.MIDDLE: old, releases.NEWEST: new}, tmp_path / "repo")
    options = RunOptions(cache_dir=cache)
    tags = resolve_targets([f"v{releases.MIDDLE}", f"v{releases.NEWEST}"], cache, print, str(repository))
    _, _, got = diff(QUERY, BUDGET, tags[0], tags[1], options)
    _, _, expected = diff(QUERY, BUDGET, Target(str(old), "old"), Target(str(new), "new"), options)
    assert expected.added and expected.budget_changed is not None
    for kind in ("added", "removed", "changed", "moved"):
        assert sorted(map(repr, _strip(getattr(got, kind)))) == sorted(map(repr, getattr(expected, kind))), kind
    assert got.budget_changed is not None
    formula = dataclasses.replace(
        got.budget_changed,
        old=tuple(map(_unprefixed, got.budget_changed.old)),
        new=tuple(map(_unprefixed, got.budget_changed.new)),
    )
    assert formula == expected.budget_changed


def _strip(items: Any) -> list[Any]:
    """Records (or pairs of records) with the ``python/`` prefix taken off their paths."""
    return [
        dataclasses.replace(i, old=_unprefixed(i.old), new=_unprefixed(i.new), copies=tuple(map(_unprefixed, i.copies)))
        if isinstance(i, CapPair)
        else _unprefixed(i)
        for i in items
    ]


def test_explain_of_a_journal_equals_the_package(layout: tuple[Path, Path], cache: Path) -> None:
    import json

    from click.testing import CliRunner

    from sgtrace.cli import cli
    from tests.conftest import FIXTURES

    package, tree = layout
    journal = str(FIXTURES / "logs" / "h20_three_startups.journal")

    def explained(root: Path) -> dict[str, Any]:
        args = ["explain", str(root), "--log", journal, "--format", "json", "--cache-dir", str(cache)]
        data: dict[str, Any] = json.loads(CliRunner().invoke(cli, args).stdout)
        data.pop("root")
        data.pop("tree")  # which tree was read: a folder and a checkout (tests/test_identity.py)
        return data

    expected = explained(package)
    got = json.loads(json.dumps(explained(tree)).replace("python/sglang/", "sglang/"))
    assert expected["runs"] and expected["caps"]
    assert got == expected


#: Every SGLang release the suite names (the span's are read by tests/test_history_releases.py).
_NAMED = [v for v in releases.fixed_versions() if v not in (releases.MIDDLE, releases.NEWEST)]


@pytest.mark.parametrize("version", _NAMED)
def test_a_checkout_of_each_named_release_explains_as_its_wheel(version: str, tmp_path: Path) -> None:
    """A git checkout built from the release's wheel (the package under python/, its pyproject.toml, one
    commit) gives the wheel's caps, statuses, formula, pool, tokens and order of start-up for a journal with an
    EAGLE3 draft: only the paths' python/ prefix differs (MIDDLE and NEWEST: the test above, with more around)."""
    import json

    from click.testing import CliRunner

    from sgtrace.cli import cli
    from tests.journals import SHAPES, journal

    package = releases.release(version)
    tree = checkout.build(package, tmp_path / "sglang")
    checkout.git(tree, "init", "-q")
    checkout.git(tree, "add", "-A")
    checkout.git(tree, "commit", "-q", "-m", f"sglang {version}")
    log = tmp_path / "journal"
    log.write_text("\n".join(journal(SHAPES["eagle3 journal (a draft after the target's graphs)"])) + "\n")

    def explained(root: Path) -> dict[str, Any]:
        args = ["explain", str(root), "--log", str(log), "--format", "json", "--cache-dir", str(tmp_path / "cache")]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, (version, root, result.stderr)
        data: dict[str, Any] = json.loads(result.stdout)
        data.pop("root")
        return data

    expected = explained(package)
    got = json.loads(json.dumps(explained(tree)).replace("python/sglang/", "sglang/"))
    # the answer names what it read: the checkout by its commit, the wheel's folder as a folder
    assert got.pop("tree")["commit"] == checkout.git(tree, "rev-parse", "HEAD").strip()
    assert expected.pop("tree")["commit"] is None
    assert expected["kv_budget_gb"] is not None and expected["steps"], (version, expected["missing"])
    for field in ("caps", "steps", "kv_budget_gb", "predicted_tokens", "cell", "order", "inputs", "missing"):
        assert got[field] == expected[field], (version, field)
    assert got == expected
