"""The per-file scan: every write form, and every look-alike that is not a write."""

from __future__ import annotations

import pytest

from tests.conftest import scan, writes

WRITE_FORMS = [
    ("self.max_total_num_tokens = 1", [(1, "assign")]),
    ("obj.inner.max_total_num_tokens = 1", [(1, "assign")]),
    ("self.max_total_num_tokens: int = 1", [(1, "annassign")]),
    ("self.max_total_num_tokens: int", [(1, "annassign")]),
    ("self.max_total_num_tokens += 1", [(1, "augassign")]),
    ("self.max_total_num_tokens //= page", [(1, "augassign")]),
    ("self.max_total_num_tokens **= 2", [(1, "augassign")]),
    ("self.max_total_num_tokens >>= 2", [(1, "augassign")]),
    ("a.max_total_num_tokens = b.max_total_num_tokens = v", [(1, "assign"), (1, "assign")]),
    ("(self.max_total_num_tokens, b) = f()", [(1, "unpack")]),
    ("self.max_total_num_tokens, b = f()", [(1, "unpack")]),
    ("[a, [b, self.max_total_num_tokens]] = f()", [(1, "unpack")]),
    ("a, *self.max_total_num_tokens = f()", [(1, "unpack")]),
    ("(a, (b, *x.max_total_num_tokens)) = f()", [(1, "unpack")]),
    ("(self.max_total_num_tokens) = 3", [(1, "assign")]),
    ("for self.max_total_num_tokens in xs:\n    pass", [(1, "for")]),
    ("for i, (j, o.max_total_num_tokens) in xs:\n    pass", [(1, "for")]),
    ("async def f():\n    async for o.max_total_num_tokens in xs:\n        pass", [(2, "for")]),
    ("y = [1 for self.max_total_num_tokens in r]", [(1, "for")]),
    ("y = {k: 1 for k, o.max_total_num_tokens in r}", [(1, "for")]),
    ("with f() as self.max_total_num_tokens:\n    pass", [(1, "with")]),
    ("with f() as (a, self.max_total_num_tokens), g():\n    pass", [(1, "with")]),
    ('setattr(self, "max_total_num_tokens", 3)', [(1, "setattr")]),
    ("setattr(self, 'max_total_num_tokens', 3)", [(1, "setattr")]),
    ('hook = lambda o: setattr(o, "max_total_num_tokens", 0)', [(1, "setattr")]),
    ('object.__setattr__(self, "max_total_num_tokens", 3)', [(1, "setattr")]),
    ("(\n    self.a,\n    self.max_total_num_tokens,\n) = f()", [(3, "unpack")]),
    ("x = 1\nself.max_total_num_tokens = \\\n    1", [(2, "assign")]),
    ("self.\\\nmax_total_num_tokens = 1", [(1, "assign")]),
    ("type(self).max_total_num_tokens = 1", [(1, "assign")]),  # tree-sitter-python reads a type alias
    ("type(self).max_total_num_tokens: int = 1", [(1, "annassign")]),
    ("type(o)[0].inner.max_total_num_tokens = 1", [(1, "assign")]),
    ("class C:\n    max_total_num_tokens: int", [(2, "field")]),
    ("class C:\n    max_total_num_tokens: int = 0", [(2, "field")]),
    ("class C:\n    max_total_num_tokens = field(default=0)", [(2, "field")]),
    ("class C(NamedTuple):\n    a: int\n    max_total_num_tokens: int", [(3, "field")]),
    ("class C:\n    a = max_total_num_tokens = 0", [(2, "field")]),
    ("max_total_num_tokens = 3", [(1, "name")]),
    ("def f(max_total_num_tokens):\n    pass", [(1, "name")]),
    ("def f(*, max_total_num_tokens: int = 3):\n    pass", [(1, "name")]),
    ("def f(max_total_num_tokens: int):\n    pass", [(1, "name")]),
    ("def f():\n    max_total_num_tokens = min(a, b)", [(2, "name")]),
    ("def f():\n    max_total_num_tokens //= 2", [(2, "name")]),
    ("if (max_total_num_tokens := f()):\n    pass", [(1, "name")]),
    ("for max_total_num_tokens in xs:\n    pass", [(1, "name")]),
    ("g = lambda max_total_num_tokens: 0", [(1, "name")]),
]


@pytest.mark.parametrize(("source", "expected"), WRITE_FORMS)
def test_write_forms(source: str, expected: list[tuple[int, str]]) -> None:
    assert writes(source) == expected


NON_WRITES = [
    "if self.max_total_num_tokens == 3:\n    pass",
    "x = self.max_total_num_tokens < y",
    'print(f"{self.max_total_num_tokens=}")',
    'msg = "self.max_total_num_tokens = 3"',
    "# self.max_total_num_tokens = 3",
    "f(max_total_num_tokens=3)",
    "Config(max_total_num_tokens=3)",
    "self.max_total_num_tokens[0] = 3",
    "self.max_total_num_tokens[0] += 3",
    "self.max_total_num_tokens.x = 3",
    "type(self).max_total_num_tokens.x = 3",
    "type(max_total_num_tokens).x = 3",
    "del self.max_total_num_tokens",
    "del a, self.max_total_num_tokens",
    "self.max_total_num_tokens_extra = 3",
    "self.swa_max_total_num_tokens = 3",
    "x = self.max_total_num_tokens",
    "max_total_num_tokens.x = 1",
    'getattr(self, "max_total_num_tokens")',
    'setattr(self, f"max_total_num_tokens", 1)',
    'setattr(self, "max_total_num_tokens_extra", 1)',
    "import max_total_num_tokens",
]


@pytest.mark.parametrize("source", NON_WRITES)
def test_non_writes(source: str) -> None:
    assert writes(source) == []


def test_target_position_is_the_element_not_the_statement() -> None:
    source = "(\n    self.a,\n        self.max_total_num_tokens,\n) = f()\n"
    [access] = scan(source)
    assert (access.line, access.column, access.kind) == (3, 9, "unpack")
    assert access.code == "(\n    self.a,\n        self.max_total_num_tokens,\n) = f()"


@pytest.mark.parametrize(
    ("source", "column"),
    [
        ("*self.max_total_num_tokens, = f()", 2),
        ("[*o.max_total_num_tokens] = f()", 3),
        ("a, *o.max_total_num_tokens = f()", 5),
    ],
)
def test_a_starred_target_begins_after_its_star(source: str, column: int) -> None:
    """tree-sitter-python reads a leading ``*o.x`` as ``(*o).x``; the target still begins at ``o``."""
    [access] = scan(source)
    assert (access.column, access.kind) == (column, "unpack")


def test_column_counts_characters_not_bytes() -> None:
    [access] = scan('s = "\u00e9\u00e9"; self.max_total_num_tokens = 1')
    assert access.column == 11


def test_owner_and_function() -> None:
    source = """\
        class Outer:
            class Inner(Base):
                max_total_num_tokens: int
                def method(self):
                    def helper():
                        self.max_total_num_tokens = 1
                    return helper
        def free(o):
            o.max_total_num_tokens = 2
        """
    found = [(a.line, a.kind, a.cls, a.function) for a in scan(source)]
    assert found == [
        (3, "field", "Outer.Inner", None),
        (6, "assign", "Outer.Inner", "Outer.Inner.method.helper"),
        (9, "assign", None, "free"),
    ]


def test_compound_statement_code_is_its_header() -> None:
    [access] = scan("for self.max_total_num_tokens in xs:\n    do(1)\n    do(2)\n")
    assert access.code == "for self.max_total_num_tokens in xs:"


def test_reads_and_deletes_are_classified() -> None:
    source = "a = o.max_total_num_tokens\ndel o.max_total_num_tokens\nb = getattr(o, 'max_total_num_tokens')\n"
    assert [(a.line, a.kind) for a in scan(source)] == [(1, "read"), (2, "del"), (3, "getattr")]


def test_other_attribute_names() -> None:
    assert writes("self.page_size = 1\nself.max_total_num_tokens = 2", "page_size") == [(1, "assign")]


def test_a_crlf_file_reports_what_an_lf_file_does() -> None:
    from sgtrace.index.scan import scan_file

    lf = b"class A:\n    def f(self):\n        self.max_total_num_tokens = (1 +\n            2)\n"
    crlf = lf.replace(b"\n", b"\r\n")
    assert scan_file("m.py", crlf, "max_total_num_tokens") == scan_file("m.py", lf, "max_total_num_tokens")
    [access] = scan_file("m.py", crlf, "max_total_num_tokens").accesses
    assert access.code == "self.max_total_num_tokens = (1 +\n    2)"


#: The attribute's name inside strings whose content has children (escapes, interpolations) before it.
_IN_STRINGS = [
    's = "a\\n x"\n',
    "s = 'a\\t\\n x'\n",
    's = b"\\x00 x"\n',
    's = f"{y}\\n x {z}"\n',
    's = """\\n\n x\n"""\n',
    's = r"\\d x"\n',
    'self.x = "\\n x"\n',
]


def test_the_name_inside_a_string_after_an_escape_is_no_crash() -> None:
    """tree-sitter's ``first_child_for_byte`` killed the process (SIGSEGV) on such a string's content in
    py-tree-sitter 0.26: ``find x`` on ``s = "a\\n x"`` died. Run apart, so a crash fails this test only."""
    import subprocess
    import sys

    program = (
        "import sys\nfrom tests.conftest import writes\n"
        "for source in sys.argv[1:]:\n    print(len(writes(source, 'x')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program, *_IN_STRINGS], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["0"] * 6 + ["1"]
