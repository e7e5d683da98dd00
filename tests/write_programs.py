"""Hypothesis strategies for programs full of writes of one attribute, and of look-alikes that are not.

Every program compiles (the strategy builds only what Python's grammar and compiler accept, so no
example is thrown away) and holds at least one write of ATTRIBUTE. A write comes in every form
``find`` knows: plain, chained, annotated, augmented, tuple, list and starred unpacking nested to any
depth, ``for`` and comprehension targets (``async`` too), ``with`` targets, ``setattr`` with a literal
name, class-body fields, and bare-name bindings (walrus, parameters, loops). Around them: reads,
deletes, subscript and sub-attribute writes, keywords, strings, comments, f-strings, ``getattr``,
``setattr`` with names that are not the literal, match patterns, decorators, annotations and names
that only look alike. Statements nest in classes, functions, loops, ``with``, ``try`` and ``match``
blocks; indentation, spacing, line breaks inside brackets, semicolons, non-ASCII text and CRLF vary.

Left out on purpose (docs/testing.md lists them as known gaps):

- what neither ``find`` nor the reference counts, so that a test of it would assert a gap: name bindings
  by ``import``, ``except ... as``, match captures; ``o.__setattr__("ATTR", v)`` (the name is the first
  argument);
- what the reference counts and ``find`` does not read: ``setattr`` names spelt with escapes, implicit
  concatenation or parentheses;
- three shapes tree-sitter-python misreads without always saying so: a starred parenthesised target
  (``*(a, o.x), b = v``), a line inside brackets that follows an operator and is indented less than its
  block, and a statement that begins with ``type(`` and holds no ``=`` (``type(o).f()``,
  ``type(o).x: int``) followed by a line that begins with ``(`` or ``[`` (read as one type alias).
  Continuation lines are therefore indented deeper than their statement.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

ATTRIBUTE = "pool"
#: Names that share letters with ATTRIBUTE but are not it.
LOOKALIKES = ("pool_extra", "xpool", "Pool", "pools", "_pool")
#: Objects a target is an attribute of; some span lines, some are non-ASCII, some hold ATTRIBUTE.
RECEIVERS = (
    "self", "o", "self.inner", "a.b.c", "f()", "xs[0]", "(o)", "type(self)", "type(o)[0].inner", "super()",
    "o .inner", "(\n        o\n)", ATTRIBUTE, f"self.{ATTRIBUTE}", "é", "g(\n    1,\n)[k]",
)  # fmt: skip
VALUES = ("1", "v", "f(x)", f"o.{ATTRIBUTE}", f"o.{ATTRIBUTE} + 1", "(\n    1 +\n    2\n)", "lambda: o.pool", '"é"')
AUGMENTED = ("+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "^=", "|=", "@=")
#: setattr's literal name, as a plain string in every spelling find reads.
LITERALS = ('"pool"', "'pool'", 'r"pool"', "u'pool'", '"""pool"""', "R'pool'")
#: Lines of a class body: fields, and what only looks like one.
CLASS_BODY_LINES = (
    f"{ATTRIBUTE}: int", f"{ATTRIBUTE}: int = 0", f"{ATTRIBUTE} = field(default=0)", f"{ATTRIBUTE} += 1",
    f"a = {ATTRIBUTE} = 0", f"{ATTRIBUTE}, b = 1, 2", f"[{ATTRIBUTE}] = [1]", f"({ATTRIBUTE}) = 1",
    f"({ATTRIBUTE}): int = 1", f"x = 1; {ATTRIBUTE} = 2", f"other = {ATTRIBUTE}", f"{ATTRIBUTE}_extra = 1",
)  # fmt: skip
#: setattr and friends that do not write ATTRIBUTE.
NOT_SETATTR = (
    'setattr(o, f"pool", 1)', 'setattr(o, "pool_extra", 1)', "setattr(o, name, 1)", 'setattr(o, b"pool", 1)',
    'setattr(o, "pool" + "", 1)', 'getattr(o, "pool")', 'hasattr(o, "pool")', 'delattr(o, "pool")',
    'setattr("pool", o, 1)',
)  # fmt: skip


@dataclass(frozen=True)
class Where:
    """Where a statement stands: what Python's compiler allows there."""

    #: Directly in a class body (a bare-name binding is a field).
    class_body: bool = False
    #: In a class's scope, directly or in its blocks (no walrus in a comprehension).
    class_scope: bool = False
    #: Inside a function (return and yield allowed).
    function: bool = False
    #: Inside an ``async def`` (async for/with and async comprehensions allowed).
    coroutine: bool = False
    #: Inside a loop (break allowed).
    loop: bool = False
    #: Blocks around it.
    depth: int = 0


def _names(draw: st.DrawFn) -> str:
    return draw(st.sampled_from((ATTRIBUTE,) * 5 + LOOKALIKES))


def _dot(draw: st.DrawFn) -> str:
    return draw(st.sampled_from((".",) * 8 + (" . ", ".\\\n    ")))


def _attribute(draw: st.DrawFn, annotated: bool = False) -> str:
    """``receiver.name``; an annotated target's receiver cannot begin with a parenthesis (CPython's rule)."""
    receivers = [r for r in RECEIVERS if not (annotated and r.startswith("("))]
    return f"{draw(st.sampled_from(receivers))}{_dot(draw)}{_names(draw)}"


def _single(draw: st.DrawFn, wrap: bool = True, annotated: bool = False) -> str:
    """A target that is one place: an attribute, a name, a subscript or a sub-attribute, maybe parenthesised."""
    kind = draw(st.sampled_from(["attr"] * 6 + ["subscript", "sub_attr", "name", "name"]))
    if kind == "attr":
        text = _attribute(draw, annotated)
    elif kind == "name":
        text = draw(st.sampled_from((ATTRIBUTE, ATTRIBUTE, "v", "w", "é")))
    elif kind == "subscript":
        text = draw(
            st.sampled_from((f"{_attribute(draw, annotated)}[0]", f"xs[{ATTRIBUTE}]", f"o[{_attribute(draw)}]"))
        )
    else:
        text = f"{_attribute(draw, annotated)}.x"
    return f"({text})" if wrap and draw(st.integers(0, 9)) == 0 else text


def _target(draw: st.DrawFn, depth: int) -> str:
    """A target that may be a tuple or list, nested up to four levels, with at most one star per level.

    The starred item is one place, never ``*(a, b)`` nor ``*(a.x)``: tree-sitter-python cannot parse those.
    """
    if depth >= 4 or draw(st.integers(0, 2)) > 0:
        return _single(draw)
    items = [_target(draw, depth + 1) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(items) - 1))
        items[at] = "*" + _single(draw, wrap=False)
    if draw(st.booleans()):
        return "[" + ", ".join(items) + "]"
    comma = "," if len(items) == 1 else draw(st.sampled_from(("", ",")))
    if draw(st.integers(0, 4)) == 0:  # one element a line
        return "(\n" + "".join(f"    {item},\n" for item in items) + ")"
    return "(" + ", ".join(items) + comma + ")"


def _top_target(draw: st.DrawFn, bare_tuple: bool = True) -> str:
    """A target as a statement takes it: a bare ``a, *b`` tuple where allowed; a star never alone."""
    if bare_tuple and draw(st.integers(0, 4)) == 0:
        items = [_target(draw, 1) for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            items[0] = "*" + _single(draw, wrap=False)
        return ", ".join(items) + ("," if len(items) == 1 else "")
    return _target(draw, 0)


def _value(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(VALUES))


def _writes(draw: st.DrawFn, where: Where) -> list[str]:
    """One statement that writes (an attribute, a field or a name), in one of the forms."""
    form = draw(st.sampled_from(_WRITE_FORMS if where.depth < 5 else _WRITE_FORMS[:5]))
    inner = replace(where, class_body=False)  # the body of a loop or a with in a class is not the class body
    if form == "assign":
        return [f"{_top_target(draw)} = {_value(draw)}"]
    if form == "chain":
        targets = [_top_target(draw) for _ in range(draw(st.integers(2, 4)))]
        return [" = ".join(targets) + f" = {_value(draw)}"]
    if form == "annotated":
        target, value = _single(draw, annotated=True), draw(st.sampled_from(("", f" = {_value(draw)}")))
        if target.startswith("type(") and not value:
            value = " = 1"  # `type(o).x: int` alone is the misread statement below (see the module's docstring)
        return [f"{target}: {draw(st.sampled_from(('int', 'o.pool', 'list[int]')))}{value}"]
    if form == "augmented":
        return [f"{_single(draw)} {draw(st.sampled_from(AUGMENTED))} {_value(draw)}"]
    if form == "for":
        header = "async for" if where.coroutine and draw(st.booleans()) else "for"
        lines = [f"{header} {_top_target(draw)} in items:", *_indent(draw, _body(draw, replace(inner, loop=True)))]
        return lines + (["else:", *_indent(draw, _body(draw, inner))] if draw(st.integers(0, 3)) == 0 else [])
    if form == "comprehension":
        return [f"y = {_comprehension(draw, where)}"]
    if form == "with":
        return _with(draw, inner)
    if form == "setattr":
        return _setattr(draw)
    if form == "walrus":
        return _walrus(draw, where)
    if form == "field":
        return _field(draw, where)
    return _function(draw, where, params=True)


#: The first five hold no block, for the deepest levels.
_WRITE_FORMS = (
    "assign", "chain", "annotated", "augmented", "setattr", "assign", "for", "comprehension", "with", "walrus",
    "field", "parameters",
)  # fmt: skip


def _comprehension(draw: st.DrawFn, where: Where) -> str:
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        is_async = where.coroutine and draw(st.integers(0, 3)) == 0
        iterable = draw(st.sampled_from(("r", f"o.{ATTRIBUTE}", "f(x)", "(\n    a,\n    b,\n)")))
        clauses.append(f"{'async for' if is_async else 'for'} {_top_target(draw)} in {iterable}")
        if draw(st.integers(0, 3)) == 0:
            clauses.append(f"if o.{ATTRIBUTE}")
    element = draw(st.sampled_from(("1", f"o.{ATTRIBUTE}", f"k: o.{ATTRIBUTE}")))
    body = f"{element} {' '.join(clauses)}"
    if ":" in element:
        return "{" + body + "}"
    return draw(st.sampled_from(("[{}]", "{{{}}}", "({})"))).format(body)


def _with(draw: st.DrawFn, where: Where) -> list[str]:
    items = [f"f() as {_target(draw, 0)}" for _ in range(draw(st.integers(1, 2)))]
    header = "async with" if where.coroutine and draw(st.booleans()) else "with"
    joined = f"({', '.join(items)})" if len(items) > 1 and draw(st.booleans()) else ", ".join(items)
    return [f"{header} {joined}:", *_indent(draw, _body(draw, where))]


def _setattr(draw: st.DrawFn) -> list[str]:
    receiver = draw(st.sampled_from(("self", "o", "type(self)", f"o.{ATTRIBUTE}", "super()")))
    literal, value = draw(st.sampled_from(LITERALS)), _value(draw)
    call = draw(
        st.sampled_from(("setattr({}, {}, {})", "object.__setattr__({}, {}, {})", "type.__setattr__({}, {}, {})"))
    )
    if draw(st.integers(0, 3)) == 0:  # one argument a line
        head = call.split("(")[0]
        return [f"{head}(", f"    {receiver},", f"    {literal},", f"    {value},", ")"]
    return [call.format(receiver, literal, value)]


def _walrus(draw: st.DrawFn, where: Where) -> list[str]:
    forms = ["({} := f())", "if ({} := f()):", "print({} := 1)", "x = [{} := 1, 2]"]
    forms += ["y = [({} := i) for i in r]"] if not where.class_scope else []
    form = draw(st.sampled_from(forms)).format(draw(st.sampled_from((ATTRIBUTE, ATTRIBUTE, "v"))))
    return [form, *_indent(draw, _body(draw, replace(where, class_body=False)))] if form.endswith(":") else [form]


def _field(draw: st.DrawFn, where: Where) -> list[str]:
    """A class whose body binds names: fields where they are direct, names elsewhere."""
    body = [draw(st.sampled_from(CLASS_BODY_LINES)) for _ in range(draw(st.integers(1, 3)))]
    header = draw(st.sampled_from(("class C:", "class C(Base, metaclass=M):", "@dataclass\nclass C:")))
    inner = Where(class_body=True, class_scope=True, depth=where.depth + 1)
    return [*header.split("\n"), *_indent(draw, body + _body(draw, inner))]


def _parameters(draw: st.DrawFn) -> str:
    names = ["self", "a", "b"]
    shape = draw(st.sampled_from((
        "{p}", "{p}=1", "{p}: int", "{p}: int = 1", "*{p}", "**{p}", "*, {p}", "*, {p}=o.pool", "{p}, /", "d=o.pool",
    )))  # fmt: skip
    name = draw(st.sampled_from((ATTRIBUTE, ATTRIBUTE, "c")))
    if shape.startswith("**"):
        return ", ".join(names) + ", " + shape.format(p=name)
    return ", ".join(names[: draw(st.integers(0, 3))] + [shape.format(p=name)])


def _function(draw: st.DrawFn, where: Where, params: bool = False) -> list[str]:
    is_async = draw(st.integers(0, 3)) == 0
    inner = Where(function=True, coroutine=is_async, depth=where.depth)
    args = _parameters(draw) if params else "self"
    if params and draw(st.integers(0, 4)) == 0:
        return [f"h = lambda {args.replace(': int', '')}: 0"]
    decorators = draw(st.sampled_from(([], ["@o.pool"], ["@property"], ["@functools.wraps(o.pool)"])))
    header = f"{'async def' if is_async else 'def'} m({args}) -> {draw(st.sampled_from(('None', 'o.pool')))}:"
    return [*decorators, header, *_indent(draw, _body(draw, inner))]


def _lookalike(draw: st.DrawFn, where: Where) -> list[str]:
    """A statement that names ATTRIBUTE without writing it."""
    attribute = _attribute(draw)
    # tree-sitter-python reads `type(o).x()` and the next line, if it begins with ( or [, as one type alias
    call = attribute if not attribute.startswith("type(") else f"x = {attribute}"
    forms = [
        f"x = {attribute}", f"if {attribute} == 3:\n    pass", f"{call}()", f"{attribute}[0] = 1",
        f"{attribute}[0] += 1", f"{attribute}.x = 1", f"del {attribute}", f"del a, {attribute}", f"del {ATTRIBUTE}",
        f"call({ATTRIBUTE}=1)", f"d = {{'{ATTRIBUTE}': 1}}", f'msg = "o.{ATTRIBUTE} = 3"', f"pass  # o.{ATTRIBUTE} = 3",
        f'print(f"{{o.{ATTRIBUTE}=}}")', f"x: o.{ATTRIBUTE} = 1", f"o.{draw(st.sampled_from(LOOKALIKES))} = 1",
        draw(st.sampled_from(NOT_SETATTR)), f"type({ATTRIBUTE}).x = 1", f"{ATTRIBUTE}.x = 1",
        f"x = lambda a=o.{ATTRIBUTE}: a", f"assert o.{ATTRIBUTE}, 'o.{ATTRIBUTE} = 1'",
        f"match o.{ATTRIBUTE}:\n    case o.{ATTRIBUTE}:\n        pass\n    case C({ATTRIBUTE}=1):\n        pass\n"
        f"    case {{'{ATTRIBUTE}': v}}:\n        pass",
        f"class D(Base, {ATTRIBUTE}=1):\n    pass", f"é = 'ü'; x = o.{ATTRIBUTE}",
    ]  # fmt: skip
    if where.function:  # no yield in a coroutine: with a return of a value, it would not compile
        forms += [f"return o.{ATTRIBUTE}", f"await o.{ATTRIBUTE}"] if where.coroutine else [f"yield o.{ATTRIBUTE}"]
    if where.loop:
        forms.append("break")
    return draw(st.sampled_from(forms)).split("\n")


def _compound(draw: st.DrawFn, where: Where) -> list[str]:
    """A block around more statements: if, while, try, with, a function, a class."""
    inner = replace(where, class_body=False, depth=where.depth + 1)
    kind = draw(st.sampled_from(("if", "while", "try", "with", "def", "class")))
    if kind == "if":
        return ["if cond:", *_indent(draw, _body(draw, inner)), "else:", *_indent(draw, _body(draw, inner))]
    if kind == "while":
        return ["while cond:", *_indent(draw, _body(draw, replace(inner, loop=True)))]
    if kind == "try":
        handler = draw(st.sampled_from(("except E:", "except (E, F) as e:", "finally:")))
        return ["try:", *_indent(draw, _body(draw, inner)), handler, *_indent(draw, _body(draw, inner))]
    if kind == "with":
        return [f"with open(p) as {draw(st.sampled_from(('h', '(a, b)')))}:", *_indent(draw, _body(draw, inner))]
    if kind == "def":
        return _function(draw, inner)
    inner = Where(class_body=True, class_scope=True, depth=where.depth + 1)
    return ["class Inner:", *_indent(draw, _body(draw, inner))]


def _statement(draw: st.DrawFn, where: Where) -> list[str]:
    roll = draw(st.integers(0, 9))
    if roll < 5:
        return _writes(draw, where)
    if roll < 8 or where.depth >= 3:
        return _lookalike(draw, where)
    return _compound(draw, where)


def _body(draw: st.DrawFn, where: Where) -> list[str]:
    """One to three statements; deeper blocks hold fewer."""
    deeper = replace(where, depth=where.depth + 1)
    most = 1 if where.depth >= 3 else 3
    lines = [line for _ in range(draw(st.integers(1, most))) for line in _statement(draw, deeper)]
    return lines or ["pass"]


#: The indentation unit of one program (set by ``programs``).
_UNITS = ("    ", "  ", "\t")


def _indent(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """Lines one level deeper, the lines that continue a bracket too (tree-sitter-python fails on a line
    that ends in an operator inside brackets when the next one is indented less than the block)."""
    unit = draw(st.shared(st.sampled_from(_UNITS), key="indent-unit"))
    return [unit + line.replace("\n", "\n" + unit) for line in lines]


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A module with one to eight statements, at least one a write of ATTRIBUTE at the top."""
    top = Where()
    lines = [f"{_attribute_write(draw)}"]
    for _ in range(draw(st.integers(0, 7))):
        lines += _statement(draw, top)
    text = "\n".join(lines) + "\n"
    return text.replace("\n", "\r\n") if draw(st.integers(0, 9)) == 0 else text


def _attribute_write(draw: st.DrawFn) -> str:
    """A write every program has, so that no example compares nothing."""
    return f"{draw(st.sampled_from(RECEIVERS))}{_dot(draw)}{ATTRIBUTE} = {_value(draw)}"
