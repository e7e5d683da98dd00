"""Property-based tests: generated programs full of attribute writes, generated source, random bytes.

``find`` must agree with the standard-library ``ast`` reference (tests/ast_reference.py) on every
write: the programs come from a strategy that composes every write form and look-alike at random
depth, receivers and formatting; hypothesmith adds grammar-generated modules. Nothing may make the
scan raise. The example database is off (nothing is written into the repository); the example
counts keep the suite inside CI's time.
"""

from __future__ import annotations

import ast

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from sgtrace.scan import scan_file
from tests.ast_reference import _lines

#: Generated code compiles with SyntaxWarnings ("'list' object is not callable"): expected, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
_READS = ("read", "getattr", "del", "name")
ATTRIBUTE = "pool"

receivers = st.sampled_from(["self", "o", "self.inner", "a.b.c", "f()", "xs[0]", "(o)"])
names = st.sampled_from([ATTRIBUTE, "pool_extra", "other", "x"])


@st.composite
def targets(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(
        st.sampled_from(
            ["attr", "attr", "name", "subscript", "tuple", "list", "star"] if depth < 2 else ["attr", "name"]
        )
    )
    if kind == "attr":
        return f"{draw(receivers)}.{draw(names)}"
    if kind == "name":
        return draw(st.sampled_from(["v", "w"]))
    if kind == "subscript":
        return f"{draw(receivers)}.{draw(names)}[0]"
    inner = [draw(targets(depth + 1)) for _ in range(draw(st.integers(2, 3)))]
    if kind == "star":
        inner[-1] = "*" + inner[-1].lstrip("*") if not inner[-1].startswith(("(", "[")) else inner[-1]
    if sum(1 for item in inner if item.startswith("*")) > 1:
        inner = [item.lstrip("*") for item in inner]
    body = ", ".join(inner)
    return f"({body})" if kind in ("tuple", "star") else f"[{body}]"


@st.composite
def statements(draw: st.DrawFn) -> list[str]:
    form = draw(
        st.sampled_from(
            [
                "assign",
                "chain",
                "ann",
                "aug",
                "for",
                "comp",
                "with",
                "setattr",
                "read",
                "kwarg",
                "del",
                "fstring",
                "multiline",
            ]
        )
    )
    receiver, name = draw(receivers), draw(names)
    target = draw(targets())
    if form == "assign":
        return [f"{target} = value"]
    if form == "chain":
        return [f"{target} = {receiver}.{name} = value"]
    if form == "ann":
        return [f"{receiver}.{name}: int = 1" if draw(st.booleans()) else f"{receiver}.{name}: int"]
    if form == "aug":
        return [f"{receiver}.{name} {draw(st.sampled_from(['+=', '//=', '*=', '>>=']))} 2"]
    if form == "for":
        return [f"for {target} in items:", "    pass"]
    if form == "comp":
        return [f"y = [1 for {target} in items]"]
    if form == "with":
        return [f"with open(p) as {target}:", "    pass"]
    if form == "setattr":
        return [f'setattr({receiver}, "{name}", 1)']
    if form == "read":
        return [f"z = {receiver}.{name} + {receiver}.{name}"]
    if form == "kwarg":
        return [f"call({name}=1)"]
    if form == "del":
        return [f"del {receiver}.{name}"]
    if form == "fstring":
        return [f'print(f"{{{receiver}.{name}=}}")']
    return [f"{receiver}.{name} = (", "    1 +", "    2", ")"]


@st.composite
def programs(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        block = draw(statements())
        wrapper = draw(st.sampled_from(["", "if", "def", "class"]))
        if wrapper == "if":
            lines += ["if cond:", *("    " + line for line in block)]
        elif wrapper == "def":
            lines += ["def f(self):", *("    " + line for line in block)]
        elif wrapper == "class":
            field = draw(st.sampled_from([f"{ATTRIBUTE}: int = 0", f"{ATTRIBUTE} = 1", "other = 2"]))
            lines += ["class C:", f"    {field}", "    def m(self):", *("        " + line for line in block)]
        else:
            lines += block
    return "\n".join(lines) + "\n"


def _found(source: str, attribute: str) -> set[int]:
    scan = scan_file("generated.py", source.encode("utf-8"), attribute)
    return {a.line for a in scan.accesses if a.kind not in _READS}


@settings(_SETTINGS, max_examples=1500)
@given(programs())
def test_find_agrees_with_ast_on_generated_programs(source: str) -> None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        assume(False)  # the strategy may compose an invalid target (`(o).x: int`); such programs prove nothing
        raise
    expected = _lines(tree, ATTRIBUTE)
    event(f"writes of {ATTRIBUTE}: {'some' if expected else 'none'}")
    assert _found(source, ATTRIBUTE) == expected


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
