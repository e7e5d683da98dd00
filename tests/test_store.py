"""The content store: what is learnt of a file is kept by its bytes and reused by any tree; it is pruned."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from pathlib import Path

import pytest

import sgtrace.cache
import sgtrace.index.chunks
import sgtrace.index.identifiers
import sgtrace.index.project
import sgtrace.index.scan
from sgtrace.api import RunOptions, TraceQuery, _in_turn, caps, find
from sgtrace.cache import folder_digest
from sgtrace.cachedir import prune, tidy
from sgtrace.discover import discover
from sgtrace.index.body import ReadBodies, moved, read_body
from sgtrace.index.chunks import index_tree
from sgtrace.index.identifiers import IdentifierIndex, Vocabulary, chunk_words, stored, words_of
from sgtrace.index.outline import outline
from sgtrace.index.packing import pack_body, pack_outline, unpack_body, unpack_outline
from sgtrace.index.project import Project
from sgtrace.index.store import ContentStore, content_digest
from sgtrace.model import FindQuery
from sgtrace.parse import parse
from sgtrace.records import Body
from sgtrace.sources import Target
from tests.conftest import FIXTURES

MIXIN = FIXTURES / "sglang_snippets" / "mixin_self"
SOURCE = textwrap.dedent(
    """\
    import os
    from typing import Optional

    class Runner(Base):
        size: int = 4

        @property
        def pool(self) -> Optional["Pool"]:
            if self.size > 2:
                return None
            for a, (b, *c) in pairs():
                self.max_total_num_tokens = min(a, f(b, key=c, **extra))
            return self.make(x=[i for i in range(3)])
    """
)


def _parsed_bodies(data: bytes) -> tuple[object, list[object]]:
    parsed = parse("m.py", data)
    assert not isinstance(parsed, type(None)) and not hasattr(parsed, "message")
    found = outline(parsed.tree)  # type: ignore[union-attr]
    bodies = []
    for function in found.functions:
        node = parsed.tree.root_node.descendant_for_byte_range(function.start, function.end)  # type: ignore[union-attr]
        while node.type == "decorated_definition":
            node = node.child_by_field_name("definition")
        bodies.append(read_body(node))
    return found, bodies


def test_outlines_and_bodies_pack_to_json_and_back() -> None:
    found, bodies = _parsed_bodies(SOURCE.encode())
    assert unpack_outline(json.loads(json.dumps(pack_outline(found)))) == found  # type: ignore[arg-type]
    for body in bodies:
        assert unpack_body(json.loads(json.dumps(pack_body(body)))) == body  # type: ignore[arg-type]


@pytest.mark.parametrize("damage", [[], [1, 2, 3, 4, 5], [[["x"]], [], [], "", []], {"a": 1}, [[], [], [], 7, []]])
def test_a_damaged_packed_body_raises_a_value_or_type_error(damage: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        unpack_body(damage)


def test_chunk_words_answer_as_the_files_do() -> None:
    files = [b"def forward(self): pass", b"x = forward_batch", b"", b"class A(forward): pass"]
    modules = ["a", "b", None, "d"]
    index = IdentifierIndex()
    sets = [words_of(f) if m else None for f, m in zip(files, modules, strict=True)]
    index.add_packed(modules, stored(chunk_words(sets)))
    assert index.get("forward") == ("a", "d") and index.get("forward_batch") == ("b",) and index.get("nope") == ()
    plain = IdentifierIndex([(m, f) for m, f in zip(modules, files, strict=True) if m])
    assert all(plain.get(w) == index.get(w) for w in ("forward", "self", "pass", "A", "x"))


def test_a_vocabulary_answers_as_each_trees_files_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trees read one after another share a vocabulary: each answers with its own files only, and a content
    met before is not split again."""
    split: list[bytes] = []
    monkeypatch.setattr(sgtrace.index.identifiers, "words_of", lambda data: split.append(data) or words_of(data))
    one = {"a": b"def forward(self): pass", "b": b"x = forward_batch", "c": b"class A(forward): old_name = 1"}
    two = {"a": b"def forward(self): pass", "b": b"x = forward_batch + new_name", "e": b"from a import forward"}
    vocabulary = Vocabulary()
    indexes = []
    added: list[list[bytes]] = []
    for tree in (one, two):
        index = IdentifierIndex()
        modules = [*tree, None]
        start = len(split)
        numbers = [vocabulary.add(content_digest(data), data) for data in tree.values()] + [None]
        added.append(split[start:])
        index.add_numbered(vocabulary, modules[:2], numbers[:2])  # in two chunks, as a pass adds them
        index.add_numbered(vocabulary, modules[2:], numbers[2:])
        indexes.append(index)
        plain = IdentifierIndex(list(tree.items()))
        words = {w.decode() for data in tree.values() for w in words_of(data)} | {"old_name", "new_name", "nope"}
        assert {w: index.get(w) for w in words} == {w: plain.get(w) for w in words}
        assert index.closest("forwrd") == plain.closest("forwrd") == ["forward"]
    assert added == [list(one.values()), [two["b"], two["e"]]]  # "a" was met before
    assert indexes[0].get("old_name") == ("c",) and indexes[1].get("old_name") == ()
    assert indexes[1].get("forward") == ("a", "e") and indexes[0].get("forward") == ("a", "c")
    assert len(vocabulary) == 5


def test_trees_read_with_a_vocabulary_have_the_words_they_have_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree read with the vocabulary of the tree before it (a history's next release) answers every word as
    it does read alone, and only its new contents are split."""
    monkeypatch.setattr(sgtrace.index.chunks, "CUT", 2)  # several chunks even for a small tree
    first, second = _copy(tmp_path, "one"), _copy(tmp_path, "two")
    changed = sorted(second.rglob("*.py"))
    changed[0].write_text(changed[0].read_text() + "\nnew_word_here = 1\n")
    changed[1].unlink()
    (second / "added.py").write_text("def added_function(x):\n    return x.max_total_num_tokens\n")
    vocabulary = Vocabulary()
    index_tree(discover(str(first)), "max_total_num_tokens", RunOptions(jobs=1, vocabulary=vocabulary))
    split: list[bytes] = []
    monkeypatch.setattr(sgtrace.index.identifiers, "words_of", lambda data: split.append(data) or words_of(data))
    shared = index_tree(discover(str(second)), "max_total_num_tokens", RunOptions(jobs=1, vocabulary=vocabulary))
    assert sorted(split) == sorted([changed[0].read_bytes(), (second / "added.py").read_bytes()])
    alone = index_tree(discover(str(second)), "max_total_num_tokens", RunOptions(jobs=1))
    words = {w.decode() for p in (*first.rglob("*.py"), *second.rglob("*.py")) for w in words_of(p.read_bytes())}
    assert {w: shared.identifiers.get(w) for w in words} == {w: alone.identifiers.get(w) for w in words}
    assert shared.identifiers.get("new_word_here") and shared.identifiers.get("added_function") == ("two.added",)
    assert shared.scan.digest == alone.scan.digest and shared.digests == alone.digests
    assert [s for _, s in shared.scan.files] == [s for _, s in alone.scan.files]


def test_damaged_stored_words_are_built_again(capsys: pytest.CaptureFixture[str]) -> None:
    files = [b"def forward(self): pass", b"y = 1"]
    rebuilt = chunk_words(words_of(f) for f in files)
    index = IdentifierIndex()
    index.add_packed(["a", "b"], {"words": "forward", "sizes": "AAAA", "positions": "!!"}, lambda: rebuilt)
    assert index.get("forward") == ("a",)
    assert "ignoring damaged cache entry" in capsys.readouterr().err


def _copy(tmp_path: Path, name: str) -> Path:
    tree = tmp_path / name
    shutil.copytree(MIXIN, tree)
    return tree


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the files parsed from now on (by find's scan or for the graph)."""
    parsed: list[str] = []
    original = sgtrace.index.project.parse

    def spy(path: str, data: bytes) -> object:
        parsed.append(path)
        return original(path, data)

    monkeypatch.setattr(sgtrace.index.project, "parse", spy)
    monkeypatch.setattr(sgtrace.index.scan, "parse", spy)
    return parsed


def test_a_second_tree_with_the_same_bytes_parses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    options = RunOptions(jobs=1, cache_dir=cache)
    query = TraceQuery("max_total_num_tokens")
    first = caps(query, "mem_fraction_static", Target(str(_copy(tmp_path, "one")), "t"), options)
    parsed = _count_parses(monkeypatch)
    other = Target(str(_copy(tmp_path, "checkout")), "t")  # the same files elsewhere: a checkout of the release
    second = caps(query, "mem_fraction_static", other, options)
    assert parsed == [] and second.caps == first.caps and second.budget_sites == first.budget_sites
    found = find(
        FindQuery("max_total_num_tokens"),
        [Target(str(tmp_path / "checkout"), "t")],
        RunOptions(jobs=1, cache_dir=cache),
    )
    assert found.stats["parsed"] == 0 and found.writes


def test_an_answer_cached_by_other_code_of_sgtrace_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout or an editable install keeps its version across changes: the key holds the code's digest too."""
    options = RunOptions(jobs=1, cache_dir=tmp_path / "cache")
    target = Target(str(_copy(tmp_path, "one")), "t")
    first = caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    parsed = _count_parses(monkeypatch)
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    assert parsed == []  # the same code: served from the cache
    monkeypatch.setattr(sgtrace.cache, "code_digest", lambda: "0" * 32)
    again = caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    assert parsed and again.caps == first.caps


def test_the_code_digest_follows_the_files_and_not_their_bytecode(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    first = folder_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\0")
    assert folder_digest(tmp_path / "pkg") == first
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    changed = folder_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "a.py").rename(tmp_path / "pkg" / "b.py")
    assert len({first, changed, folder_digest(tmp_path / "pkg")}) == 3


def test_another_attribute_reuses_the_modules_and_the_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, tree = tmp_path / "cache", _copy(tmp_path, "one")
    options = RunOptions(jobs=1, cache_dir=cache)
    target = Target(str(tree), "t")
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    fresh = caps(TraceQuery("mem_fraction_static"), "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    built: list[int] = []
    monkeypatch.setattr(sgtrace.index.chunks, "chunk_words", lambda files: built.append(1) or chunk_words(files))
    parsed = _count_parses(monkeypatch)
    again = caps(TraceQuery("mem_fraction_static"), "mem_fraction_static", target, options)
    assert again.caps == fresh.caps and built == [] and len(parsed) < len(discover(str(tree)).files)


def _aged(tree: Path) -> None:
    """Every file of *tree* a minute old: a manifest does not trust a file changed just before it was written."""
    when = time.time() - 60
    for path in tree.rglob("*.py"):
        os.utime(path, (when, when))


def test_another_attribute_reads_only_the_files_that_name_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree read for one attribute: a second one reads only the files whose words hold it, and answers as a
    run with no cache does (a file naming it only inside a longer word is read too, and its syntax error said)."""
    tree = _copy(tmp_path, "one")
    (tree / "broken.py").write_text("class Broken(:\n    mem_fraction_static_total = 1\n")
    (tree / "noted.py").write_text('NOTE = "mem_fraction_static"\n')
    (tree / "plain.py").write_text("x = 1\n")
    _aged(tree)
    monkeypatch.setattr(sgtrace.index.chunks, "CUT", 2)  # several chunks even for a small tree
    target, cache = Target(str(tree), "t"), tmp_path / "cache"
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    read: list[str] = []
    original = sgtrace.index.chunks.read_file
    monkeypatch.setattr(sgtrace.index.chunks, "read_file", lambda path: read.append(path) or original(path))
    query = TraceQuery("mem_fraction_static")
    again = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    naming = {p.name for p in tree.rglob("*.py") if b"mem_fraction_static" in p.read_bytes()}
    assert sorted(Path(p).name for p in read) == sorted(naming) == ["broken.py", "kv_mixin.py", "noted.py", "runner.py"]
    fresh = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    assert (again.caps, again.budget_sites, again.errors) == (fresh.caps, fresh.budget_sites, fresh.errors)
    assert any(e.path.endswith("broken.py") for e in again.errors)


def test_a_file_changed_since_the_tree_was_read_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _copy(tmp_path, "one")
    (tree / "plain.py").write_text("x = 1\n")
    _aged(tree)
    target, cache = Target(str(tree), "t"), tmp_path / "cache"
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    (tree / "plain.py").write_text("class Holder:\n    def set(self):\n        self.mem_fraction_static = 0.5\n")
    query = TraceQuery("mem_fraction_static")
    found = find(FindQuery("mem_fraction_static"), [target], RunOptions(jobs=1, cache_dir=None))
    again = index_tree(discover(str(tree)), "mem_fraction_static", RunOptions(jobs=1, cache_dir=cache))
    assert any(f.path == "plain.py" for f, _ in again.scan.files) and again.identifiers.get("Holder") == ("one.plain",)
    assert {(w.path, w.line) for w in found.writes} >= {("plain.py", 3)}
    fresh = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    cached = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=cache))
    assert (cached.caps, cached.budget_sites) == (fresh.caps, fresh.budget_sites)


def test_the_byte_searches_of_a_tree_serve_the_next_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _copy(tmp_path, "one")
    target, cache = Target(str(tree), "t"), tmp_path / "cache"
    searched: list[str] = []
    original = sgtrace.index.project._literals
    monkeypatch.setattr(sgtrace.index.project, "_literals", lambda p: searched.append(p) or original(p))
    query, options = TraceQuery("max_total_num_tokens"), RunOptions(jobs=1, cache_dir=cache)
    first = caps(query, "mem_fraction_static", target, options)
    assert searched
    for part in ("graph", "caps"):
        shutil.rmtree(cache / part)
    searched.clear()
    again = caps(query, "mem_fraction_static", target, options)  # the slice runs again: every search is stored
    assert searched == [] and (again.caps, again.budget_sites) == (first.caps, first.budget_sites)
    with (tree / "runner.py").open("a") as stream:
        stream.write("\n\ndef init_memory_pool(runner):\n    runner.init_memory_pool()\n")
    fresh = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    searched.clear()
    changed = caps(query, "mem_fraction_static", target, options)  # another tree: its searches are its own
    assert searched and (changed.caps, changed.budget_sites) == (fresh.caps, fresh.budget_sites)


def test_the_byte_searches_kept_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, a run keeps its own searches only: the store does not grow with every query ever asked."""
    listing = discover(str(_copy(tmp_path, "one")))
    options = RunOptions(jobs=1, cache_dir=tmp_path / "cache")

    def project() -> Project:
        index = index_tree(listing, "max_total_num_tokens", options)
        return Project(listing, ContentStore(options.cache_dir), index.identifiers, index.digests)

    def kept(searched: Project) -> set[str]:
        tree = searched._tree_key()
        assert tree is not None
        return set(ContentStore(options.cache_dir).mentions(tree) or {})

    first = project()
    runner = first.matching(r"\bRunner\b")
    assert runner and first.matching(r"mem_fraction_static")
    first.save()
    assert kept(first) == {r"\bRunner\b", r"mem_fraction_static"}
    monkeypatch.setattr(sgtrace.index.project, "MENTIONS_KEPT", 2)
    second = project()
    assert second.matching(r"\bRunner\b") == runner and second.matching(r"init_memory_pool")
    second.save()
    assert kept(second) == {r"\bRunner\b", r"init_memory_pool"}  # the one it did not ask is dropped
    monkeypatch.setattr(sgtrace.index.project, "MENTIONS_KEPT", 100)
    third = project()
    assert third.matching(r"shrink_pool") == ("one.kv_mixin",)
    third.save()
    assert kept(third) == {r"\bRunner\b", r"init_memory_pool", r"shrink_pool"}


def test_damaged_store_entries_are_ignored_and_rebuilt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache, tree = tmp_path / "cache", _copy(tmp_path, "one")
    options = RunOptions(jobs=1, cache_dir=cache)
    query, target = TraceQuery("max_total_num_tokens"), Target(str(tree), "t")
    first = caps(query, "mem_fraction_static", target, options)
    entries = list((cache / "store").rglob("*.json"))
    assert entries
    for entry in entries:
        document = json.loads(entry.read_text())
        data = document["data"]
        if "outline" in data:
            data["bodies"] = {key: ["not a body"] for key in data["bodies"]} or {"0:1": 1}
        elif "words" in data:
            data["positions"] = "%%%"
        else:
            data["accesses"] = [{"line": "one"}]
        entry.write_text(json.dumps(document))
    for part in ("graph", "caps", "manifest"):
        shutil.rmtree(cache / part)
    capsys.readouterr()
    again = caps(query, "mem_fraction_static", target, options)
    assert again.caps == first.caps and again.budget_sites == first.budget_sites
    assert "ignoring damaged cache entry" in capsys.readouterr().err
    for part in ("graph", "caps", "manifest"):
        shutil.rmtree(cache / part)
    third = caps(query, "mem_fraction_static", target, options)  # from the entries rebuilt
    assert third.caps == first.caps and "damaged" not in capsys.readouterr().err


def test_the_pass_of_a_graph_takes_the_same_answer_from_the_store(tmp_path: Path) -> None:
    tree = _copy(tmp_path, "one")
    listing = discover(str(tree))
    cold = index_tree(listing, "max_total_num_tokens", RunOptions(jobs=1, cache_dir=tmp_path / "c"))
    shutil.rmtree(tmp_path / "c" / "manifest")
    warm = index_tree(listing, "max_total_num_tokens", RunOptions(jobs=1, cache_dir=tmp_path / "c"))
    assert warm.scan.digest == cold.scan.digest and warm.digests == cold.digests
    assert warm.scan.stats == {**cold.scan.stats, "parsed": 0}
    assert all(warm.identifiers.get(w) == cold.identifiers.get(w) for w in ("ModelRunner", "self", "init_memory_pool"))


def _entry(folder: Path, name: str, size: int, age_days: float) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    when = 1_900_000_000 - age_days * 86400
    os.utime(path, (when, when))
    return path


def test_prune_removes_the_least_recently_used_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", Target(str(_copy(tmp_path, "t")), "t"),
         RunOptions(jobs=1, cache_dir=cache))  # fmt: skip
    shutil.rmtree(cache / "store")
    monkeypatch.setattr("time.time", lambda: 1_900_000_000)
    old = _entry(cache / "store" / "a", "old.json", 100, 40)
    middle = _entry(cache / "store" / "b", "middle.json", 100, 10)
    new = _entry(cache / "graph" / "c", "new.json", 100, 1)
    release = _entry(cache / "releases" / "sglang-0", "m.py", 100, 400)
    outside = _entry(tmp_path / "outside", "keep.json", 100, 400)
    (cache / "store" / "link.json").symlink_to(outside)
    for part in ("caps", "manifest"):
        shutil.rmtree(cache / part)
    for entry in [p for p in (cache / "graph").rglob("*") if p.is_file() and p != new]:
        entry.unlink()  # the run's graph (its folder may be "c" too: its key holds a digest of sgtrace's code)
    assert prune(cache, older_than=30 * 86400) == (1, 100) and not old.exists() and middle.exists()
    assert prune(cache, max_size=150) == (1, 100) and not middle.exists() and new.exists()
    assert release.exists() and outside.exists() and (cache / "store" / "link.json").is_symlink()
    assert prune(tmp_path / "outside", older_than=0) == (0, 0) and outside.exists()  # not sgtrace's: untouched


def test_a_run_keeps_the_cache_within_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sgtrace.cachedir

    cache = tmp_path / "cache"
    options = RunOptions(jobs=1, cache_dir=cache)
    target = Target(str(_copy(tmp_path, "t")), "t")
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    old = _entry(cache / "store" / "z", "old.json", 5000, 400)
    monkeypatch.setattr(sgtrace.cachedir, "BOUND", 1000)
    tidy(cache)  # checked a moment ago: nothing done
    assert old.exists()
    monkeypatch.setattr(sgtrace.cachedir, "CHECK_EVERY", 0)
    caps(TraceQuery("max_total_num_tokens"), "mem_fraction_static", target, options)
    assert not old.exists()


def test_the_workers_give_the_answer_one_process_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree read by chunks on a pool, and modules parsed ahead on it (prefetch), change no answer."""
    monkeypatch.setattr(sgtrace.index.chunks, "POOL_FILES", 0)
    monkeypatch.setattr(sgtrace.index.chunks, "CUT", 2)  # several chunks even for a small tree
    outlined: list[str] = []
    original = sgtrace.index.project.Project._outlined
    monkeypatch.setattr(
        sgtrace.index.project.Project,
        "_outlined",
        lambda self, name, *a: outlined.append(name) or original(self, name, *a),
    )
    tree = Target(str(_copy(tmp_path, "t")), "t")
    for attribute in ("max_total_num_tokens", "mem_fraction_static"):
        query = TraceQuery(attribute)
        alone = caps(query, "mem_fraction_static", tree, RunOptions(jobs=1, cache_dir=None))
        pooled = caps(query, "mem_fraction_static", tree, RunOptions(jobs=2, cache_dir=tmp_path / attribute))
        assert (pooled.caps, pooled.budget_sites, pooled.errors) == (alone.caps, alone.budget_sites, alone.errors)
    assert outlined  # some module was parsed on a worker


def test_the_files_find_parsed_in_this_process_are_not_parsed_again_for_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that runs inline hands its parses to the graph (the files naming the attribute are the first the
    slice reads): no module is parsed twice, and the caps are those of a run that parses them again."""
    tree = _copy(tmp_path, "one")
    query, target = TraceQuery("max_total_num_tokens"), Target(str(tree), str(tree))
    alone = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    parsed = _count_parses(monkeypatch)
    shared = caps(query, "mem_fraction_static", target, RunOptions(jobs=1, cache_dir=None))
    naming = {str(p.relative_to(tree)) for p in tree.rglob("*.py") if b"max_total_num_tokens" in p.read_bytes()}
    assert naming and len(parsed) == len(set(parsed)) and naming <= set(parsed)
    assert (shared.caps, shared.budget_sites) == (alone.caps, alone.budget_sites) and shared.budget_sites

    kept = sgtrace.index.chunks.Parses()
    monkeypatch.setattr(sgtrace.index.chunks, "PARSES_KEPT", 10)
    small, big = parse("a.py", b"x = 1\n"), parse("b.py", b"y = 22222\n")
    kept.keep("a.py", b"A", small)  # type: ignore[arg-type]
    kept.keep("b.py", b"B", big)  # type: ignore[arg-type]  (past the bound: not kept)
    assert kept.take("b.py", b"B") is None and kept.take("a.py", b"other") is None
    assert kept.take("a.py", b"A") is small and kept.take("a.py", b"A") is None
    kept.keep("a.py", b"A", small)  # type: ignore[arg-type]
    kept.clear()
    assert kept.take("a.py", b"A") is None


def test_a_body_moved_down_the_file_is_the_body_read_there() -> None:
    """A function met again unchanged is not read again: its body, every line moved, is the one read there."""
    leave = "\n    def leave(self, x):\n        if x:\n            return\n        y, z = x.pair(k=[x for x in ())]\n"
    source = SOURCE + leave
    _, before = _parsed_bodies(source.encode())
    _, after = _parsed_bodies(("# moved\n" * 7 + source).encode())
    assert len(before) == 2 and any(b.leaves for b in before)  # type: ignore[attr-defined]
    assert [moved(b, 7) for b in before] == after  # type: ignore[arg-type]
    assert [moved(b, 0) for b in before] == before and moved(after[0], -7) == before[0]  # type: ignore[arg-type]


def test_trees_read_in_turn_take_the_bodies_read_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A history's next release: functions moved, unchanged, are taken from the tree before and answer as read;
    a changed one, or one moved to another column, is read again."""
    first, second = _copy(tmp_path, "one"), _copy(tmp_path, "two")
    mixin = second / "kv_mixin.py"
    mixin.write_text("# a new first line\n" * 3 + mixin.read_text().replace("// factor", "// (factor + 1)"))
    query = TraceQuery("max_total_num_tokens")
    alone = caps(query, "mem_fraction_static", Target(str(second), "t"), RunOptions(jobs=1))
    in_turn = _in_turn(RunOptions(jobs=1))
    caps(query, "mem_fraction_static", Target(str(first), "t"), in_turn)
    read: list[int] = []
    real = sgtrace.index.project.read_body
    monkeypatch.setattr(sgtrace.index.project, "read_body", lambda node, depth: read.append(1) or real(node, depth))
    shared = caps(query, "mem_fraction_static", Target(str(second), "t"), in_turn)
    assert (shared.budget_sites, shared.caps) == (alone.budget_sites, alone.caps)
    assert [s.line for s in shared.budget_sites] == [9]  # moved down three lines
    assert len(read) == 1  # shrink_pool, changed

    known = ReadBodies()
    data = b"def f(x):\n    return x\n\nclass C:\n    def f(x):\n        return x\n"
    body = _parsed_bodies(data)[1][0]
    known.put(ReadBodies.key(data, 0, 22, 1000), 1, body)  # type: ignore[arg-type]
    assert known.get(ReadBodies.key(b"\n\n" + data, 2, 24, 1000), 3) == moved(body, 2)  # type: ignore[arg-type]
    assert known.get(ReadBodies.key(data, 0, 22, 5), 1) is None  # read with another bound
    assert known.get(ReadBodies.key(data, 37, 66, 1000), 5) is None  # another column: another text
    known.put(ReadBodies.key(data, 37, 66, 1000), 5, Body((), (), (), "too deeply nested"))
    assert known.get(ReadBodies.key(data, 37, 66, 1000), 5) is None

    first = ReadBodies.key(data, 0, 22, 1000)
    known.begin()  # the next tree: what the tree before met is kept for it
    assert known.get(first, 1) == body
    known.begin()
    known.begin()  # the tree before did not meet it: let go
    assert known.get(first, 1) is None
