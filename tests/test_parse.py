"""Bad input: each case is analysed correctly or reported, never a crash, never hiding the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sgtrace.api import find
from sgtrace.index.findpass import RunOptions
from sgtrace.index.scan import scan_file
from sgtrace.model import FindQuery
from sgtrace.sources import Target

WRITE = b"self.max_total_num_tokens = 1\n"


def _scan(data: bytes) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    result = scan_file("f.py", data, "max_total_num_tokens")
    return [(a.line, a.kind) for a in result.accesses], [(e.line, e.message) for e in result.errors]


def test_syntax_error_is_reported_with_its_line_and_the_rest_still_scanned() -> None:
    accesses, errors = _scan(WRITE + b"def broken(:\n    pass\n" + WRITE)
    assert accesses == [(1, "assign"), (4, "assign")]
    assert [line for line, _ in errors] == [2]
    assert errors[0][1].startswith("syntax error")


def test_python2_file_is_an_error() -> None:
    accesses, errors = _scan(b'print "hello"\n' + WRITE)
    assert [line for line, _ in errors] == [1]
    assert accesses == [(2, "assign")]


def test_nul_byte_is_an_error() -> None:
    _, errors = _scan(WRITE + b"x = '\x00'\n")
    assert errors == [(2, "source contains a NUL byte")]


def test_coding_declaration_is_honoured() -> None:
    data = "# -*- coding: latin-1 -*-\ns = '\u00e9'; self.max_total_num_tokens = 1\n".encode("latin-1")
    result = scan_file("f.py", data, "max_total_num_tokens")
    assert result.errors == ()
    [access] = result.accesses
    assert (access.line, access.column) == (2, 10)


def test_undecodable_file_is_an_error() -> None:
    _, errors = _scan(b"x = 1\ns = '\xff\xfe'\n" + WRITE)
    assert errors and errors[0][0] == 2 and errors[0][1].startswith("cannot decode")


def test_unknown_coding_is_an_error() -> None:
    _, errors = _scan(b"# coding: no-such-codec\n" + WRITE)
    assert len(errors) == 1 and errors[0][1].startswith("cannot decode")


def test_bom_and_crlf() -> None:
    accesses, errors = _scan(b"\xef\xbb\xbfx = 1\r\n" + WRITE.replace(b"\n", b"\r\n"))
    assert (accesses, errors) == ([(2, "assign")], [])


def test_sixty_thousand_line_module() -> None:
    body = b"".join(b"v%d = %d\n" % (i, i) for i in range(60_000))
    accesses, errors = _scan(body + WRITE)
    assert (accesses, errors) == ([(60_001, "assign")], [])


def test_two_thousand_term_operator_chain() -> None:
    chain = b"x = " + b" + ".join(b"o.max_total_num_tokens" for _ in range(2_000)) + b"\n"
    result = scan_file("f.py", chain + WRITE, "max_total_num_tokens")
    assert result.errors == ()
    kinds = [a.kind for a in result.accesses]
    assert kinds.count("read") == 2_000 and kinds.count("assign") == 1


def test_unreadable_file_does_not_hide_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "good.py").write_bytes(WRITE)
    (tmp_path / "locked.py").write_bytes(WRITE)
    import sgtrace.index.findpass

    real_read = sgtrace.index.findpass.read_file

    def guarded_read(path: str) -> tuple[bytes, int, int]:  # tests run as root: a chmod would not lock the file
        if path.endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return real_read(path)

    monkeypatch.setattr(sgtrace.index.findpass, "read_file", guarded_read)
    result = find(FindQuery("max_total_num_tokens"), [Target(str(tmp_path), "t")], RunOptions(jobs=1))
    assert [(w.path, w.line) for w in result.writes] == [("good.py", 1)]
    assert [(e.path, e.message) for e in result.errors] == [("locked.py", "cannot read file: Permission denied")]


def test_broken_files_beside_good_ones_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "a_syntax.py").write_bytes(b"def f(:\n" + WRITE)
    (tmp_path / "b_nul.py").write_bytes(WRITE + b"\x00")
    (tmp_path / "c_good.py").write_bytes(WRITE)
    result = find(FindQuery("max_total_num_tokens"), [Target(str(tmp_path), "t")], RunOptions(jobs=2))
    assert ("c_good.py", 1) in {(w.path, w.line) for w in result.writes}
    assert {e.path for e in result.errors} == {"a_syntax.py", "b_nul.py"}


@pytest.mark.parametrize(
    "text",
    ["print 'x'", "x = 1\nprint >>f, 1", "print('x')", "self.print x", "exec code", "exec(code)", "y.exec z",
     "reprint x", "print  ", "a\n  print x", "printer = 1", "", "exec", "def f():\n    if x:\n        print x, y\n",
     "s = 'print x'\nprint s", "# print x\n", "é = 1; print 'é'", "exec 'code' in ns"],
)  # fmt: skip
def test_python_2_statements_are_found_where_the_hint_stands(text: str) -> None:
    from sgtrace.parse import _has_python2_statement, captures, parse_tree

    data = text.encode()
    root = parse_tree(data).root_node
    assert _has_python2_statement(data, root) == bool(captures("(print_statement) @s (exec_statement) @s", root))


def test_a_file_read_again_is_read_again(tmp_path: Path) -> None:
    from sgtrace.parse import read_bytes

    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    assert read_bytes(str(path)) == b"x = 1\n"
    path.write_text("x = 22\n")
    assert read_bytes(str(path)) == b"x = 22\n"


def test_read_file_reads_every_size_and_a_pipe(tmp_path: Path) -> None:
    import threading

    from sgtrace.parse import read_file

    for size in (0, 1, 4096, 3 * (1 << 20) + 7):
        path = tmp_path / f"f{size}.py"
        data = bytes(i % 251 for i in range(size))
        path.write_bytes(data)
        read, length, mtime_ns = read_file(str(path))
        assert read == data and length == size and mtime_ns == path.stat().st_mtime_ns
    fifo = tmp_path / "pipe.py"  # not a regular file: read to its end, whatever its size says
    os.mkfifo(fifo)
    payload = b"x = 1\n" * 50_000
    writer = threading.Thread(target=fifo.write_bytes, args=(payload,))
    writer.start()
    assert read_file(str(fifo))[0] == payload
    writer.join()
