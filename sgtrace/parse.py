"""Stage 2: turn a file's bytes into a syntax tree, or into a located error.

tree-sitter is the scanner: it parses about ten times faster than libcst, with
byte positions for free, and never gives up on a broken file. It is lenient
(it accepts Python 2 ``print`` statements), so whenever it reports an error or
a Python-2-only node, libcst -- the parser of record -- decides whether the
file is valid and supplies the message.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sgtrace.model import FileError

#: Node types tree-sitter-python accepts that Python 3 does not.
_PY2_TYPES = frozenset({"print_statement", "exec_statement"})
#: Where such a node may start: the keyword, followed by what cannot follow a Python 3 call or name.
_PY2_HINT = re.compile(rb"(?<![.\w])(?:print|exec)(?:[ \t]*[^\s(=:)\],.]|[ \t]*>>)")


@dataclass(frozen=True, slots=True)
class Parsed:
    """A decoded, parsed file."""

    #: The source, re-encoded as UTF-8 (tree-sitter positions refer to it).
    data: bytes
    #: The tree-sitter tree.
    tree: Any
    #: A syntax problem, if the file is not valid Python 3.
    error: FileError | None


def read_bytes(path: str) -> bytes:
    """A whole file, with plain system calls (a third faster than ``open().read()`` over a tree of small files)."""
    return read_file(path)[0]


def read_file(path: str) -> tuple[bytes, int, int]:
    """A whole file, with its size and modification time (ns) as the open file has them.

    A regular file is read with one call when it is no larger than it said: a read shorter than asked
    for is its end. Anything else (a file that grew meanwhile, a pipe) is read to the end.
    """
    handle = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(handle)
        first = os.read(handle, status.st_size + 1)
        if len(first) <= status.st_size and stat.S_ISREG(status.st_mode):
            return first, status.st_size, status.st_mtime_ns
        chunks = [first]
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), status.st_size, status.st_mtime_ns
    finally:
        os.close(handle)


@lru_cache(maxsize=1)
def _language() -> Any:
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Language(tree_sitter_python.language())


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter

    return tree_sitter.Parser(_language())


@lru_cache(maxsize=64)
def query(source: str) -> Any:
    """A compiled tree-sitter query (compiled once per process)."""
    import tree_sitter

    return tree_sitter.Query(_language(), source)


def captures(query_source: str, node: Any) -> dict[str, list[Any]]:
    """Run a query under *node*; capture name -> nodes."""
    import tree_sitter

    result: dict[str, list[Any]] = tree_sitter.QueryCursor(query(query_source)).captures(node)
    return result


def matches(query_source: str, node: Any) -> list[dict[str, list[Any]]]:
    """Run a query under *node*; one capture dict per match."""
    import tree_sitter

    return [hit for _, hit in tree_sitter.QueryCursor(query(query_source)).matches(node)]


def source(data: bytes) -> tuple[str, bytes]:
    """Python source decoded as the interpreter would (BOM, ``coding:`` cookie, UTF-8), and the UTF-8 bytes
    tree-sitter parses (whose positions the records keep).

    Raises SyntaxError, LookupError or UnicodeDecodeError.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding).removeprefix("\ufeff")
    # valid UTF-8 without a BOM is its own re-encoding: no need to encode the text again
    return text, data if encoding == "utf-8" else text.encode("utf-8", "surrogatepass")


def parse_tree(utf8: bytes) -> Any:
    """The tree-sitter tree of UTF-8 source (no decoding, no error check)."""
    return _parser().parse(utf8)


def parse_range(utf8: bytes, start: int, end: int) -> Any:
    """The tree-sitter tree of the bytes *start* to *end* of UTF-8 source alone (a function), positions as in
    the whole source: a function read after its module's tree was dropped costs its own size, not the file's."""
    import tree_sitter

    row = utf8.count(b"\n", 0, start)
    column = start - (utf8.rfind(b"\n", 0, start) + 1)
    end_row = row + utf8.count(b"\n", start, end)
    end_column = end - (utf8.rfind(b"\n", 0, end) + 1)
    parser = _range_parser()
    parser.included_ranges = [tree_sitter.Range((row, column), (end_row, end_column), start, end)]
    return parser.parse(utf8)


@lru_cache(maxsize=1)
def _range_parser() -> Any:
    import tree_sitter

    return tree_sitter.Parser(_language())


def parse(path: str, data: bytes) -> Parsed | FileError:
    """Parse *data*; a file that cannot be decoded at all becomes a FileError."""
    try:
        text, utf8 = source(data)
    except (SyntaxError, LookupError) as exc:
        return FileError(path, 1, f"cannot decode: {exc}")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return FileError(path, line, f"cannot decode: {exc.reason} ({exc.encoding})")
    tree = _parser().parse(utf8)
    return Parsed(utf8, tree, _syntax_error(path, text, utf8, tree))


def _syntax_error(path: str, text: str, utf8: bytes, tree: Any) -> FileError | None:
    if "\x00" in text:
        return FileError(path, text[: text.index("\x00")].count("\n") + 1, "source contains a NUL byte")
    deep = _beyond_cpython_limits(text, utf8)
    if deep is not None:
        return FileError(path, deep[0], f"syntax error: {deep[1]}")
    root = tree.root_node
    if not root.has_error and not _has_python2_statement(utf8, root):
        return None
    if _deeper_than(root, LIBCST_DEPTH):  # libcst's native parser overflows its stack (a crash) on such trees
        return FileError(path, _first_error_line(root), f"syntax error (nested over {LIBCST_DEPTH} levels deep)")
    return _libcst_error(path, text, root)


#: CPython's own bounds (its tokenizer's MAXLEVEL and MAXINDENT): tree-sitter accepts deeper code.
MAX_BRACKETS = 200
MAX_INDENT = 100
#: Syntax-tree depth past which libcst is not asked to word an error (measured: 1,600 nested
#: parentheses or 8,000 terms of a sum crash libcst 1.9 with a segmentation fault; 800 and 4,000 do not).
LIBCST_DEPTH = 1000

_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"()[]{}")
_PAIR = re.compile(rb"\(\)|\[\]|\{\}")
_DEEP_INDENT = re.compile(rb"(?m)^[ \t]{%d,}\S" % MAX_INDENT)


def _beyond_cpython_limits(text: str, utf8: bytes) -> tuple[int, str] | None:
    """(line, CPython's message) if brackets nest past MAX_BRACKETS or blocks past MAX_INDENT levels.

    A cheap over-estimate first (the brackets of the file with innermost pairs removed, round after
    round: about 1.5 ms a megabyte); only a file it cannot clear is tokenized to be sure.
    """
    brackets = utf8.translate(None, _NOT_BRACKETS)
    rounds = 0
    while brackets and rounds <= MAX_BRACKETS:
        fewer = _PAIR.sub(b"", brackets)
        if len(fewer) == len(brackets):
            break
        brackets, rounds = fewer, rounds + 1
    if rounds <= MAX_BRACKETS and len(brackets) <= MAX_BRACKETS and _DEEP_INDENT.search(utf8) is None:
        return None  # (what is left is unmatched: brackets in strings, or a file with open brackets)
    return _tokenized_limits(text)


def _tokenized_limits(text: str) -> tuple[int, str] | None:
    """The exact check, on the tokens (brackets in strings and comments do not count)."""
    level = indent = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                level += 1
                if level > MAX_BRACKETS:
                    return token.start[0], "too many nested parentheses"
            elif token.type == tokenize.OP and token.string in ")]}":
                level -= 1
            elif token.type == tokenize.INDENT:
                indent += 1
                if indent >= MAX_INDENT:
                    return token.start[0], "too many levels of indentation"
            elif token.type == tokenize.DEDENT:
                indent -= 1
    except (SyntaxError, tokenize.TokenError) as exc:  # Python 3.12's tokenizer enforces the limits itself
        message = str(exc.args[0]) if exc.args else "cannot tokenize"
        if "nested" in message or "indentation" in message:
            line = exc.lineno if isinstance(exc, SyntaxError) and exc.lineno else 1
            return line, message
    return None


def _deeper_than(root: Any, most: int) -> bool:
    """Whether the tree has a node more than *most* levels below the root (a walk, no recursion)."""
    cursor = root.walk()
    depth = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > most:
                return True
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
            depth -= 1


def _has_python2_statement(utf8: bytes, root: Any) -> bool:
    """Whether a ``print``/``exec`` statement node starts where the hint matches.

    The hint is tried only where the words stand, and the tree is asked only there: a search of the
    whole text with the hint's look-behind, or a query over the whole tree, costs more than the parse.
    """
    for word in (b"print", b"exec"):
        start = utf8.find(word)
        while start >= 0:
            if _PY2_HINT.match(utf8, start) and _python2_statement_at(root, start, len(word)):
                return True
            start = utf8.find(word, start + 1)
    return False


def _python2_statement_at(root: Any, start: int, size: int) -> bool:
    """Whether a node of a Python-2 statement's type starts at *start* and holds the word.

    Found going down from the root: tree-sitter's ``Node.parent`` walks down from the root itself, so
    climbing from ``print`` at the foot of ``x = print + a + ...`` (40,000 terms, as many levels) would
    cost the depth at every step.
    """
    node = root
    while node is not None and node.start_byte <= start and start + size <= node.end_byte:
        if node.start_byte == start and node.type in _PY2_TYPES:
            return True
        node = first_child_ending_after(node, start) if node.child_count else None
    return False


def first_child_ending_after(node: Any, byte: int) -> Any:
    """The first child of *node* that ends after *byte* (None if none does), by a binary search.

    tree-sitter's own ``first_child_for_byte`` crashes the process (a segmentation fault) on a leaf in
    py-tree-sitter 0.25 and, in 0.26, on a string's content when no child ends after the byte
    (``s = "a\\n x"``, asked for ``x``): it is not used.
    """
    low, high = 0, node.child_count
    while low < high:
        middle = (low + high) // 2
        if node.child(middle).end_byte <= byte:
            low = middle + 1
        else:
            high = middle
    return node.child(low) if low < node.child_count else None


def _libcst_error(path: str, text: str, root: Any) -> FileError | None:
    """libcst decides whether the file is valid; tree-sitter says where it first went wrong.

    (libcst's native parser reports positions that can be a line or two off.)
    """
    import libcst

    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as exc:
        message = _POSITION_PREFIX.sub("", exc.message.splitlines()[0])
    except RecursionError:
        message = "too deeply nested for libcst"
    except Exception as exc:  # libcst's native parser raises a few other types
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    else:
        return None
    return FileError(path, _first_error_line(root), f"syntax error: {message}")


_POSITION_PREFIX = re.compile(r"^(parser error: )?error at \d+:\d+: ")


def _first_error_line(root: Any) -> int:
    """Line of the first ERROR, MISSING or Python-2-only node."""
    lines = [
        n.start_point[0] + 1 for n in captures("(ERROR) @e (print_statement) @e (exec_statement) @e", root).get("e", [])
    ]
    stack = [root]
    while stack and not lines:  # MISSING nodes cannot be queried; find the first one
        node = stack.pop()
        if node.is_missing:
            lines.append(node.start_point[0] + 1)
        elif node.has_error:
            stack.extend(reversed(node.children))
    return min(lines, default=1)
