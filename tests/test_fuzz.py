"""Property-based tests: generated programs full of attribute writes, generated source, random bytes.

``find`` must agree with the standard-library ``ast`` reference (tests/ast_reference.py) on every
write, its line, column and kind: the programs come from tests/write_programs.py, which composes
every write form and look-alike at random depth, receivers and formatting, each program compiling
and writing the attribute, so that every example reaches the comparison. It runs the counts of
tests/examples.py (500 programs by default, 10^4 with ``-m slow``; docs/testing.md has the figures).
hypothesmith adds grammar-generated modules. Nothing may make the scan raise. The example database
is off (nothing is written into the repository).
"""

from __future__ import annotations

import ast
from collections import Counter

import hypothesmith
import pytest
from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

from sgtrace.index.scan import scan_file
from sgtrace.model import WRITE_KINDS
from tests.ast_reference import _lines, reference_sites
from tests.examples import EXAMPLES, PROFILES, TALLIES
from tests.hostile_cases import SHAPES
from tests.write_programs import ATTRIBUTE, programs

#: Generated code compiles with SyntaxWarnings ("'list' object is not callable"): expected, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _found(source: str, attribute: str) -> set[int]:
    """Lines of the writes ``find`` lists by default (no bare names)."""
    scan = scan_file("generated.py", source.encode("utf-8"), attribute)
    return {a.line for a in scan.accesses if a.kind in WRITE_KINDS and a.kind != "name"}


def _sites(source: str) -> list[tuple[int, int, str]]:
    """(line, column, kind) of every write ``find --names`` lists."""
    scan = scan_file("generated.py", source.encode("utf-8"), ATTRIBUTE)
    return sorted((a.line, a.column, a.kind) for a in scan.accesses if a.kind in WRITE_KINDS)


@pytest.mark.parametrize("profile", PROFILES)
def test_find_agrees_with_ast_on_generated_programs(profile: str, request: pytest.FixtureRequest) -> None:
    """Every write, with its line, column and kind, as the ``ast`` reference finds it; every kind compared."""
    tally = TALLIES.setdefault(request.node.nodeid, Counter())

    @settings(_SETTINGS, max_examples=EXAMPLES[profile])
    @given(programs())
    def agree(source: str) -> None:
        compile(source, "generated.py", "exec")  # the strategy builds only what compiles: no example is discarded
        expected = reference_sites(source, ATTRIBUTE)
        assert expected, "every generated program writes the attribute"
        assert _sites(source) == expected
        kinds = Counter(kind for _, _, kind in expected)
        for kind in sorted(kinds):
            event(f"writes {kind}")
        target(float(len(expected)), label="writes compared")
        tally.update({"programs": 1, "writes": len(expected), **{f"kind {k}": n for k, n in kinds.items()}})

    agree()
    assert {kind for kind in WRITE_KINDS if tally[f"kind {kind}"] == 0} == set()


@_SETTINGS
@given(hypothesmith.from_grammar())
def test_grammar_generated_modules_are_scanned_without_error(source: str) -> None:
    tree = ast.parse(source)
    for attribute in sorted({node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)})[:3]:
        assert _found(source, attribute) == _lines(tree, attribute)
    scan_file("generated.py", source.encode("utf-8"), "x")


@_SETTINGS
@given(st.binary(max_size=2000), st.sampled_from(["x", "max_total_num_tokens", "print"]))
def test_no_bytes_make_the_scan_raise(data: bytes, attribute: str) -> None:
    scan_file("random.py", data, attribute)


@_SETTINGS
@given(st.text(max_size=500), st.sampled_from(["x", "a"]))
def test_no_text_makes_the_scan_raise(text: str, attribute: str) -> None:
    scan_file("random.py", text.encode("utf-8", "surrogatepass"), attribute)


#: Pieces of a string literal's content: the name, escapes, interpolations, quotes.
_STRING_PIECES = ["x", " ", "a", "\\n", "\\t", "\\x00", "\\\\", "\\'", "{y}", "{{", "}}", "\\u00e9", "\\N{DASH}", "\n"]


@_SETTINGS
@given(
    st.sampled_from(["", "b", "r", "f", "rb", "fr", "u"]),
    st.sampled_from(['"', "'", '"""', "'''"]),
    st.lists(st.sampled_from(_STRING_PIECES), max_size=12),
)
def test_the_name_anywhere_in_a_string_is_no_crash(prefix: str, quote: str, pieces: list[str]) -> None:
    """py-tree-sitter 0.26 crashed the process on ``s = "a\\n x"`` asked for ``x``; any string, any prefix."""
    source = f"s = {prefix}{quote}{''.join(pieces)}{quote}\nself.x = 1\n"
    scan_file("strings.py", source.encode("utf-8"), "x")


@st.composite
def deep_expressions(draw: st.DrawFn) -> str:
    """One write whose value nests a random shape to a random depth (CPython accepts some, not others)."""
    depth = draw(st.integers(1, 400))
    shape = draw(st.sampled_from(["paren", "call", "sum", "attr", "subscript", "unary", "ifexp", "list", "chain"]))
    value = {
        "paren": "(" * depth + "pool" + ")" * depth,
        "call": "f(" * depth + "pool" + ")" * depth,
        "sum": "pool" + " + a" * depth,
        "attr": "pool" + ".b" * depth,
        "subscript": "pool" + "[0]" * depth,
        "unary": "-" * depth + "pool",
        "ifexp": "pool if x else " * depth + "0",
        "list": "[" * depth + "pool" + "]" * depth,
        "chain": "o.pool = " * depth + "1",
    }[shape]
    broken = draw(st.booleans())  # an unclosed bracket makes tree-sitter report an error: libcst words it
    return f"class C:\n    def f(self, pool):\n        self.pool = {value}{' (' if broken else ''}\n"


#: A file name: any bytes but the separator and NUL, UTF-8 or not, printable or not.
file_names = st.binary(min_size=1, max_size=20).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)
#: .gitignore lines, git's grammar and beyond.
ignore_lines = st.lists(
    st.one_of(st.text(alphabet="[]!\\*?/az-^. #", max_size=8), st.sampled_from(["[z-a]", "!", "a\\", "\\", "**"])),
    max_size=6,
)


def _invoke_every_command(directory: str) -> None:
    """Every command on a tree: an input error (2) is an answer, an internal error (3) is a failure."""
    from click.testing import CliRunner

    from sgtrace.cli import cli

    runner = CliRunner()
    for args in (["find", ATTRIBUTE, directory, "--reads", "--names", "--format", "json"],
                 ["trace", ATTRIBUTE, directory], ["caps", directory, "--attr", ATTRIBUTE],
                 ["graph", ATTRIBUTE, directory, "--json"]):  # fmt: skip
        result = runner.invoke(cli, [*args, "--no-cache"])
        assert result.exit_code in (0, 1, 2), (args, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "internal error" not in result.stderr, (args, result.stderr)
        result.stdout_bytes.decode("utf-8")  # whatever the file names, the output is UTF-8


@settings(_SETTINGS, max_examples=60)
@given(st.lists(programs(), min_size=1, max_size=3))
def test_no_program_makes_any_command_crash(sources: list[str]) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as directory:
        for index, source in enumerate(sources):
            (Path(directory) / f"m{index}.py").write_text(source)
        _invoke_every_command(directory)


@settings(_SETTINGS, max_examples=40)
@given(deep_expressions(), file_names, ignore_lines)
def test_no_deep_expression_odd_name_or_ignore_line_makes_any_command_crash(
    source: str, name: bytes, ignores: list[str]
) -> None:
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        subprocess.run(["git", "init", "-q", directory], check=True)
        with open(os.path.join(os.fsencode(directory), name + b".py"), "wb") as handle:
            handle.write(source.encode("utf-8"))
        with open(os.path.join(directory, ".gitignore"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(ignores) + "\n")
        _invoke_every_command(directory)


@settings(_SETTINGS, max_examples=30)
@given(st.lists(st.tuples(st.sampled_from(sorted(SHAPES)), st.integers(1, 40)), min_size=1, max_size=3))
def test_no_mix_of_hostile_shapes_in_the_budgets_flow_makes_a_slicing_command_crash(
    mix: list[tuple[str, int]],
) -> None:
    """The growing shapes of tests/hostile_cases.py, a few at random sizes side by side in one tree (each
    with the budget flowing through it): every command that builds a slice answers."""
    import tempfile
    from pathlib import Path

    from click.testing import CliRunner

    from sgtrace.cli import cli

    with tempfile.TemporaryDirectory() as directory:
        for index, (name, size) in enumerate(mix):
            folder = Path(directory) / f"s{index}"
            folder.mkdir()
            for file, text in SHAPES[name][0](size).items():
                (folder / file).write_text(text)
        page = str(Path(directory) / "page.html")
        inputs = ["--set", "avail=10", "--set", "total=20", "--set", "mem_fraction_static=.5"]
        for args in (["trace", ATTRIBUTE, directory], ["caps", directory], ["graph", ATTRIBUTE, directory, "--json"],
                     ["explain", directory, *inputs], ["diff", directory, directory],
                     ["report", directory, "-o", page]):  # fmt: skip
            result = CliRunner().invoke(cli, [*args, "--no-cache"])
            assert result.exit_code in (0, 1, 2), (args, result.output, result.exception)
            assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
            assert "internal error" not in result.stderr, (args, result.stderr)
