"""The write-forms fixture: each line's ``# expect:`` comment is the expected result."""

from __future__ import annotations

import re
from pathlib import Path

from sgtrace.api import find
from sgtrace.index.findpass import RunOptions
from sgtrace.model import FindQuery
from sgtrace.sources import Target
from tests.ast_reference import reference_writes
from tests.conftest import FIXTURES

FORMS = FIXTURES / "sglang_snippets" / "write_forms"
EXPECT = re.compile(r"#\s*expect:\s*(.+)$")


def _expected(path: Path) -> list[tuple[int, str]]:
    expected = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = EXPECT.search(line)
        if match:
            expected.extend((number, kind) for kind in match.group(1).split())
    return expected


def _found(names: bool) -> list[tuple[str, int, str]]:
    result = find(FindQuery("max_total_num_tokens", names=names), [Target(str(FORMS), "forms")], RunOptions(jobs=1))
    assert result.errors == ()
    return [(w.path, w.line, w.kind) for w in result.writes]


def test_every_write_form_is_found_with_its_kind() -> None:
    expected = [("forms.py", line, kind) for line, kind in _expected(FORMS / "forms.py")]
    assert len(expected) > 60
    assert _found(names=True) == expected


def test_names_only_with_the_flag() -> None:
    assert [w for w in _found(names=False) if w[2] == "name"] == []


def test_nonwrites_file_has_no_writes_and_the_reference_agrees() -> None:
    assert [w for w in _found(names=True) if w[0] == "nonwrites.py"] == []
    reference, broken = reference_writes(FORMS, "max_total_num_tokens")
    assert broken == set()
    assert {(p, line) for p, line, kind in _found(names=False)} == reference
