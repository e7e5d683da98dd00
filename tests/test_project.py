"""The project index's class questions (MRO, subclasses) against Python's own answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sgtrace.discover import discover
from sgtrace.index.project import Project


@st.composite
def hierarchies(draw: st.DrawFn) -> list[list[int]]:
    """Classes 0..n-1, each with bases drawn from the classes before it (in an order of their own)."""
    size = draw(st.integers(1, 12))
    return [draw(st.lists(st.integers(0, i - 1), unique=True, max_size=3)) if i else [] for i in range(size)]


def _python_classes(bases: list[list[int]]) -> list[type] | None:
    made: list[type] = []
    try:
        for i, own in enumerate(bases):
            made.append(type(f"C{i}", tuple(made[b] for b in own) or (object,), {}))
    except TypeError:  # an order C3 cannot make: CPython refuses the class
        return None
    return made


@settings(max_examples=300, deadline=None)
@given(hierarchies())
def test_mro_and_subclasses_are_pythons(tmp_path_factory: pytest.TempPathFactory, bases: list[list[int]]) -> None:
    made = _python_classes(bases)
    if made is None:
        return
    tree = tmp_path_factory.mktemp("tree")
    source = "".join(f"class C{i}({', '.join(f'C{b}' for b in own)}):\n    pass\n\n\n" for i, own in enumerate(bases))
    (tree / "m.py").write_text(source)
    project = Project(discover(str(tree)))
    for i, cls in enumerate(made):
        assert project.mro(f"m.C{i}") == [f"m.{c.__name__}" for c in cls.__mro__ if c is not object]
        below = set()
        todo = list(cls.__subclasses__())
        while todo:
            child = todo.pop()
            below.add(f"m.{child.__name__}")
            todo.extend(child.__subclasses__())
        assert project.subclasses(f"m.C{i}") == below


def test_a_chain_of_three_thousand_classes_is_walked_not_recursed(tmp_path: Path) -> None:
    source = "class C0:\n    pass\n" + "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, 3000))
    (tmp_path / "m.py").write_text(source)
    project = Project(discover(str(tmp_path)))
    assert project.mro("m.C2999") == [f"m.C{i}" for i in range(2999, -1, -1)]
    assert len(project.subclasses("m.C0")) == 2999
