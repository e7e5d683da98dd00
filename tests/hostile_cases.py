"""Hostile modules: each puts one pathological shape on the path from ``mem_fraction_static`` to the pool.

Shared by ``tests/test_bounds.py`` (each must finish within its bound with a per-file error or a
correct answer) and ``bench/hostile.py`` (time and memory of each, before and after a change).
Some are valid Python, some are rejected by CPython itself; the comment on each says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

HEAD = """\
class Runner:
    def __init__(self, server_args):
        self.mem_fraction_static = server_args.mem_fraction_static

    def init(self, avail, total, x, a, f):
        rest_memory = avail - total * (1 - self.mem_fraction_static)
"""


def _module(body: str) -> str:
    return HEAD + "".join(f"        {line}\n" for line in body.splitlines())


def huge() -> str:
    """About 12 MB of valid code (over the default 10 MB bound of one file)."""
    return _module("self.max_total_num_tokens = int(rest_memory)\n" + "y = 1\n" * 850_000)


def parens() -> str:
    """5,000 nested parentheses: CPython rejects it (too many nested parentheses), tree-sitter does not."""
    return _module("self.max_total_num_tokens = " + "(" * 5000 + "rest_memory" + ")" * 5000)


def calls() -> str:
    """3,000 nested calls: rejected by CPython (too many nested parentheses)."""
    return _module("self.max_total_num_tokens = " + "f(" * 3000 + "rest_memory" + ")" * 3000)


def indent() -> str:
    """150 levels of ``if``: rejected by CPython (too many levels of indentation)."""
    lines = [" " * (4 * i) + "if x:" for i in range(150)]
    lines.append(" " * (4 * 150) + "self.max_total_num_tokens = int(rest_memory)")
    return _module("\n".join(lines))


def long_sum() -> str:
    """A 20,000-term sum in the formula (CPython: RecursionError during compilation)."""
    return _module("self.max_total_num_tokens = int(rest_memory" + " + a" * 20000 + ")")


def sum_1000() -> str:
    """A 1,000-term sum, which CPython compiles: must be analysed, not refused."""
    return _module("self.max_total_num_tokens = int(rest_memory" + " + a" * 1000 + ")")


def attributes() -> str:
    """``a.b.b.b...`` 20,000 deep beside the pool (CPython: RecursionError during compilation)."""
    return _module("self.max_total_num_tokens = min(int(rest_memory), a" + ".b" * 20000 + ")")


def subscripts() -> str:
    """``a[0][0]...`` 20,000 deep (CPython: RecursionError during compilation)."""
    return _module("self.max_total_num_tokens = min(int(rest_memory), a" + "[0]" * 20000 + ")")


def unary() -> str:
    """20,000 unary minuses (CPython: MemoryError in its parser)."""
    return _module("self.max_total_num_tokens = int(" + "-" * 20000 + "rest_memory)")


def ifexp() -> str:
    """5,000 chained conditional expressions (CPython: RecursionError during compilation)."""
    return _module("self.max_total_num_tokens = " + "int(rest_memory) if x else " * 5000 + "0")


def lambdas() -> str:
    """3,000 nested lambdas (CPython: MemoryError in its parser)."""
    return _module("g = " + "lambda: " * 3000 + "rest_memory\nself.max_total_num_tokens = int(rest_memory)")


def elif_chain() -> str:
    """An if with 10,000 elif branches, each writing the pool (CPython: MemoryError in its parser)."""
    branches = ["if x == 0:", "    self.max_total_num_tokens = int(rest_memory)"]
    for i in range(1, 10000):
        branches += [f"elif x == {i}:", f"    self.max_total_num_tokens = int(rest_memory) // {i}"]
    return _module("\n".join(branches))


def elif_500() -> str:
    """An if with 500 elif branches (valid): each write is a cap with its guard."""
    branches = ["if x == 0:", "    self.max_total_num_tokens = int(rest_memory)"]
    for i in range(1, 500):
        branches += [f"elif x == {i}:", f"    self.max_total_num_tokens = int(rest_memory) // {i}"]
    return _module("\n".join(branches))


def chain() -> str:
    """4,000 chained targets ``a.x = a.x = ... = v`` (valid, 112 KB): quadratic if each copies the statement."""
    return _module("self.max_total_num_tokens = " * 4000 + "int(rest_memory)")


def many_writes() -> str:
    """20,000 writes of the pool, one per line (valid)."""
    return _module("\n".join(f"self.max_total_num_tokens = int(rest_memory) - {i}" for i in range(20000)))


def wide_call() -> str:
    """One call with 50,000 arguments (valid)."""
    return _module("self.max_total_num_tokens = min(int(rest_memory), " + ", ".join(["a"] * 50000) + ")")


def long_line() -> str:
    """A 2 MB string literal on the write's line (valid)."""
    return _module("self.max_total_num_tokens = int(rest_memory) if '" + "z" * 2_000_000 + "' else 0")


#: name -> generator of the module's source.
CASES: dict[str, Callable[[], str]] = {
    fn.__name__: fn
    for fn in (
        huge, parens, calls, indent, long_sum, sum_1000, attributes, subscripts, unary, ifexp, lambdas,
        elif_chain, elif_500, chain, many_writes, wide_call, long_line,
    )
}  # fmt: skip


# -- shapes whose cost must follow their size: small trees with the budget flowing through each -------------

BUDGET = """\
class Runner{bases}:
    def __init__(self, server_args):
        self.mem_fraction_static = server_args.mem_fraction_static

    def init(self, avail, total, x):
        rest_memory = avail - total * (1 - self.mem_fraction_static)
        self.max_total_num_tokens = int(rest_memory)
        self.max_total_num_tokens = min(self.max_total_num_tokens, x)
"""


def _runner(body: str = "", bases: str = "") -> str:
    return BUDGET.format(bases=bases) + "".join(f"        {line}\n" for line in body.splitlines())


def chained_targets(n: int) -> dict[str, str]:
    """``self.x = self.x = ... = v``, n targets, in the function the budget flows through."""
    return {"runner.py": _runner("self.max_total_num_tokens = " * n + "int(rest_memory)")}


def chained_elsewhere(n: int) -> dict[str, str]:
    """``a.x = a.x = ... = 1``, n targets, in a module of its own (a write through another receiver)."""
    return {"runner.py": _runner(), "other.py": "def g(a):\n    " + "a.max_total_num_tokens = " * n + "1\n"}


def inheritance_chain(n: int) -> dict[str, str]:
    """n classes, each inheriting the one before, each reading the attribute."""
    classes = "\n\nclass C0(Runner):\n    pass\n"
    for i in range(1, n):
        classes += f"\n\nclass C{i}(C{i - 1}):\n    def m{i}(self):\n        return self.max_total_num_tokens\n"
    return {"runner.py": _runner() + classes}


def diamonds(n: int) -> dict[str, str]:
    """n levels of diamonds (two classes a level, each inheriting both of the level before)."""
    classes = "\n\nclass X0(Runner):\n    pass\n\n\nclass Y0(Runner):\n    pass\n"
    for i in range(1, n):
        classes += (
            f"\n\nclass X{i}(X{i - 1}, Y{i - 1}):\n    def m{i}(self):\n        return self.max_total_num_tokens\n"
            f"\n\nclass Y{i}(X{i - 1}, Y{i - 1}):\n    pass\n"
        )
    classes += (
        f"\n\nclass Top(X{n - 1}, Y{n - 1}):\n    def use(self):\n"
        "        self.max_total_num_tokens = min(self.max_total_num_tokens, 3)\n"
    )
    return {"runner.py": _runner() + classes}


def mixin_methods(n: int) -> dict[str, str]:
    """A mixin of n methods, each lowering the attribute by a ``min``."""
    methods = "".join(
        f"    def m{i}(self, y):\n        self.max_total_num_tokens = min(self.max_total_num_tokens, y + {i})\n\n"
        for i in range(n)
    )
    runner = "from mixin import Mixin\n\n\n" + _runner(bases="(Mixin)")
    return {"mixin.py": f"class Mixin:\n{methods}", "runner.py": runner}


def writes_in_one_function(n: int) -> dict[str, str]:
    """n writes of the attribute, one a line, in the function the budget flows through."""
    return {"runner.py": _runner("\n".join(f"self.max_total_num_tokens = min(self.max_total_num_tokens, {i})"
                                           for i in range(n)))}  # fmt: skip


def wide_unpacking(n: int) -> dict[str, str]:
    """A tuple unpacking of n attribute targets (on as many receivers) from a tuple of n values."""
    targets = ", ".join(f"a{i}.max_total_num_tokens" for i in range(n))
    return {"runner.py": _runner(f"{targets} = " + ", ".join(["rest_memory"] * n))}


def call_fan(n: int) -> dict[str, str]:
    """Three levels of helpers, each calling the next from n places; the pool is the first's result."""
    helpers = ""
    for level in range(3):
        calls = "".join(f"    a{i} = h{level + 1}(v + {i})\n" for i in range(n))
        helpers += f"\n\ndef h{level}(v):\n{calls}    return " + " + ".join(f"a{i}" for i in range(n)) + "\n"
    helpers += "\n\ndef h3(v):\n    return v\n"
    return {"runner.py": _runner("self.max_total_num_tokens = h0(rest_memory)") + helpers}


def long_operands(n: int) -> dict[str, str]:
    """``x = print + a + ... + a``, n terms (as many levels of tree-sitter's left-nested operators), in a
    function beside the budget's (past the depth bound, that function alone is not analysed)."""
    return {"runner.py": _runner() + "\n\ndef other(a):\n    x = print" + " + a" * n + "\n    return x\n"}


def property_chain(n: int) -> dict[str, str]:
    """n properties, each returning the one before; the pool is the last, lowered by a ``min``."""
    props = "".join(f"    @property\n    def p{i}(self):\n        return self.p{i - 1} + 1\n\n" for i in range(1, n))
    body = "self.max_total_num_tokens = min(self.max_total_num_tokens, self.p" + str(n - 1) + ")"
    return {"runner.py": _runner(body) + f"\n    @property\n    def p0(self):\n        return 1\n\n{props}"}


def recursion(n: int) -> dict[str, str]:
    """A function calling itself, and n functions calling each other in a ring, the pool their result."""
    ring = "".join(f"\n\ndef r{i}(v, k):\n    return r{(i + 1) % n}(v - 1, k) if k else v\n" for i in range(n))
    body = "self.max_total_num_tokens = min(self_loop(rest_memory, 3), r0(rest_memory, 5))"
    loop = "\n\ndef self_loop(v, k):\n    return self_loop(v // 2, k - 1) if k else v\n"
    return {"runner.py": _runner(body) + loop + ring}


def import_cycle(n: int) -> dict[str, str]:
    """n modules importing each other in a ring, the value passed round it once."""
    files = {"runner.py": "from m0 import f0\n\n\n" + _runner("self.max_total_num_tokens = f0(rest_memory)")}
    for i in range(n):
        following = (i + 1) % n
        last = "v" if following == 0 else f"f{following}(v)"
        files[f"m{i}.py"] = f"from m{following} import f{following}\n\n\ndef f{i}(v):\n    return {last}\n"
    return files


def star_imports(n: int) -> dict[str, str]:
    """n modules each ``from the next import *``; the last defines the helper the pool is computed by."""
    files = {"runner.py": "from s0 import *\n\n\n" + _runner("self.max_total_num_tokens = helper(rest_memory)")}
    for i in range(n - 1):
        files[f"s{i}.py"] = f"from s{i + 1} import *\n"
    files[f"s{n - 1}.py"] = "from s0 import *\n\n\ndef helper(v):\n    return v // 2\n"
    return files


#: name -> (the tree of size n, as file name -> source; the largest size the bounds hold it to).
SHAPES: dict[str, tuple[Callable[[int], dict[str, str]], int]] = {
    "chained_targets": (chained_targets, 3000),
    "chained_elsewhere": (chained_elsewhere, 3000),
    "inheritance_chain": (inheritance_chain, 1000),
    "diamonds": (diamonds, 20),
    "mixin_methods": (mixin_methods, 1000),
    "writes_in_one_function": (writes_in_one_function, 1000),
    "wide_unpacking": (wide_unpacking, 20000),
    "call_fan": (call_fan, 60),
    "long_operands": (long_operands, 100000),
    "property_chain": (property_chain, 1000),
    "recursion": (recursion, 1000),
    "import_cycle": (import_cycle, 1000),
    "star_imports": (star_imports, 1000),
}


# Hostile input at the doors: what an option names, or a figure it gives. Each must end in exit 2 with one line
# on stderr naming the door, what is wrong and the value, within a few seconds and little memory.

#: Figures that let the sample's formula be evaluated (the answer is 10.43 GB with mem_fraction_static=0.88).
FIGURES = ["--set", "weights_gb=72.33", "--set", "avail_after_weights_gb=21.71"]
#: A number with 400 digits: a float's infinity, past every integer bound.
DIGITS_400 = "9" * 400


def sparse_file(folder: Path) -> str:
    """A 3 GB file with no blocks on disk (``truncate -s 3G``): reading it whole takes 18 s and 6 GB."""
    path = folder / "sparse.bin"
    with path.open("wb") as handle:
        handle.truncate(3 << 30)
    return str(path)


def nul_bytes(size: int) -> Callable[[Path], str]:
    """A maker of a file of *size* NUL bytes (written as a file with no blocks on disk, which reads as NUL bytes)."""

    def make(folder: Path) -> str:
        path = folder / "nul.bin"
        with path.open("wb") as handle:
            handle.truncate(size)
        return str(path)

    return make


def zeros(_folder: Path) -> str:
    """``/dev/zero``: no end at all."""
    return "/dev/zero"


def deep_json(folder: Path) -> str:
    """A JSON object holding lists nested 100,000 deep: past Python's stack."""
    path = folder / "deep.json"
    path.write_text('{"format": 1, "mem_fraction_static": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return str(path)


def server_info(value: str) -> Callable[[Path], str]:
    """A /get_server_info answer whose mem_fraction_static is *value* (JSON as written)."""

    def make(folder: Path) -> str:
        path = folder / "info.json"
        path.write_text('{"version": "0.5.9", "tp_size": 8, "mem_fraction_static": ' + value + "}")
        return str(path)

    return make


def command(text: str) -> Callable[[Path], str]:
    """A unit file whose launch command ends with *text*."""

    def make(folder: Path) -> str:
        path = folder / "sglang.service"
        path.write_text(f"[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m {text}\n")
        return str(path)

    return make


def log_line(line: str, rank: str = "TP0") -> Callable[[Path], str]:
    """A log of a server_args= line and *line* of *rank* (a forged figure: SGLang prints none out of range, bar a
    difference of free memories: 'mem usage=-3.87 GB' is real)."""

    def make(folder: Path) -> str:
        path = folder / "server.log"
        path.write_text(
            f"[2026-02-28 10:00:00] server_args=ServerArgs(tp_size=1)\n[2026-02-28 10:00:01 {rank}] {line}\n"
        )
        return str(path)

    return make


LOAD_END = "Load weight end. type=X, dtype=torch.bfloat16, avail mem={} GB, mem usage=72.33 GB."


#: name -> (the arguments of ``explain SAMPLE`` after the tree, "{file}" for the file made; the maker of that
#: file, or None; what stderr's one line must hold, "{file}" for the file's path).
EXPLAIN_DOORS: dict[str, tuple[list[str], Callable[[Path], str] | None, str]] = {
    "set_budget_none": ([*FIGURES, "--set", "mem_fraction_static=None"], None,
                        "--set mem_fraction_static=None: not a number"),
    "set_memory_past_any_gpu": ([*FIGURES, "--set", "mem_fraction_static=0.88", "--set", "gpu_gb=1e308"], None,
                                "--set gpu_gb=1e+308: more than any GPU holds"),
    "max_file_size_400_digits": ([*FIGURES, "--max-file-size", DIGITS_400], None,
                                 f"Invalid value for '--max-file-size': '{DIGITS_400}' is not a size a file can"),
    **{
        f"command_fraction_{label}": ([*FIGURES, "--command", "{file}"], command(f"--mem-fraction-static {value}"),
                                      f"--command: --mem-fraction-static={shown}: {why}")
        for label, value, shown, why in [
            ("negative", "-5", "-5", "a fraction of the GPU's memory, in (0, 1]"),
            ("nan", "nan", "nan", "not a finite number"),
            ("inf", "inf", "inf", "not a finite number"),
            ("zero", "0", "0", "a fraction of the GPU's memory, in (0, 1]"),
            ("1e308", "1e308", "1e+308", "a fraction of the GPU's memory, in (0, 1]"),
            ("string", "lots", "lots", "not a number"),
        ]
    },
    "command_tp_size_zero": ([*FIGURES, "--command", "{file}"], command("--mem-fraction-static 0.88 --tp-size 0"),
                             "--command: --tp-size=0: a whole number of ranks, from 1 to 65536"),
    **{
        f"server_info_fraction_{label}": ([*FIGURES, "--server-info", "{file}"], server_info(value),
                                          f"--server-info: mem_fraction_static={shown}: {why}")
        for label, value, shown, why in [
            ("negative", "-5", "-5", "a fraction of the GPU's memory, in (0, 1]"),
            ("nan", "NaN", "nan", "not a finite number"),
            ("inf", "Infinity", "inf", "not a finite number"),
            ("1e400", "1e400", "inf", "not a finite number"),
            ("zero", "0", "0", "a fraction of the GPU's memory, in (0, 1]"),
            ("1e308", "1e308", "1e+308", "a fraction of the GPU's memory, in (0, 1]"),
            ("string", '"lots"', "lots", "not a number"),
        ]
    },
    "server_info_deep": ([*FIGURES, "--server-info", "{file}"], deep_json,
                         "--server-info: JSON nested deeper than 64 levels"),
    "server_info_sparse": ([*FIGURES, "--server-info", "{file}"], sparse_file,
                           "--server-info {file}: larger than 16 MB"),
    "server_info_zeros": ([*FIGURES, "--server-info", "{file}"], zeros, "--server-info {file}: larger than 16 MB"),
    "command_sparse": ([*FIGURES, "--command", "{file}"], sparse_file, "--command {file}: larger than 1 MB"),
    "command_zeros": ([*FIGURES, "--command", "{file}"], zeros, "--command {file}: larger than 1 MB"),
    "model_config_deep": ([*FIGURES, "--model-config", "{file}"], deep_json,
                          "--model-config {file}: JSON nested deeper than 64 levels"),
    "model_config_sparse": ([*FIGURES, "--model-config", "{file}"], sparse_file,
                            "--model-config {file}: larger than 16 MB"),
    "model_config_zeros": ([*FIGURES, "--model-config", "{file}"], zeros, "--model-config {file}: larger than 16 MB"),
    **{
        f"log_server_args_fraction_{label}": (["--log", "{file}"],
                                              log_line(f"server_args=ServerArgs(mem_fraction_static={value})"),
                                              f"the log's server_args= line: mem_fraction_static={shown}: {why}")
        for label, value, shown, why in [
            ("negative", "-5", "-5", "a fraction of the GPU's"),
            ("nan", "nan", "nan", "not a finite number"),
            ("inf", "inf", "inf", "not a finite number"),
            ("1e308", "1e308", "1e+308", "a fraction of the GPU's memory, in (0, 1]"),
            ("string", "'lots'", "lots", "not a number"),
        ]
    },
    **{
        f"log_{label}_400_digits": (["--set", "mem_fraction_static=0.88", "--log", "{file}"], log_line(line),
                                    f"the log's line 2: {figure}=inf: not a finite number")
        for label, line, figure in [
            ("free_memory", LOAD_END.format(DIGITS_400), "avail_after_weights_gb"),
            ("k_size", f"KV Cache is allocated. #tokens: 273152, K size: {DIGITS_400} GB, V size: 5.21 GB", "kv_gb"),
            ("tokens", f"KV Cache is allocated. #tokens: {DIGITS_400}, K size: 5.21 GB, V size: 5.21 GB",
             "kv_tokens"),
        ]
    },
    "log_pp_rank_5000_digits": (["--set", "mem_fraction_static=0.88", "--log", "{file}"],
                                log_line(LOAD_END.format("21.71"), rank="PP" + "3" * 5000 + " TP0"),
                                "the log's rank prefixes: pp_size=inf: not a finite number"),
    "log_pp_rank_past_any": (["--set", "mem_fraction_static=0.88", "--log", "{file}"],
                             log_line(LOAD_END.format("21.71"), rank="PP99999 TP0"),
                             "the log's rank prefixes: pp_size=100000: a whole number of ranks, from 1 to 65536"),
    "server_info_tp_size_400_digits": ([*FIGURES, "--server-info", "{file}"],
                                       server_info('0.88, "tp_size": ' + DIGITS_400),
                                       "--server-info: tp_size=inf: not a finite number"),
    "command_3_million_options": ([*FIGURES, "--command", "{file}"], command("--tp-size 1 " * 1_000_000),
                                  "--command {file}: larger than 1 MB"),
    "command_nul_200mb": ([*FIGURES, "--command", "{file}"], nul_bytes(200 << 20),
                          "--command {file}: larger than 1 MB"),
    "server_info_nul_200mb": ([*FIGURES, "--server-info", "{file}"], nul_bytes(200 << 20),
                              "--server-info {file}: larger than 16 MB"),
    "server_info_nul_to_the_bound": ([*FIGURES, "--server-info", "{file}"], nul_bytes(16 << 20),
                                     "--server-info: not JSON"),
    **{
        f"log_free_memory_{label}": (["--set", "mem_fraction_static=0.88", "--log", "{file}"],
                                     log_line(LOAD_END.format(value)),
                                     f"the log's line 2: avail_after_weights_gb={shown}: {why}")
        for label, value, shown, why in [
            ("1e400", "1e400", "inf", "not a finite number"),
            ("1e308", "1e308", "1e+308", "more than any GPU holds"),
            ("negative", "-5", "-5", "GPU memory free after the weights were loaded cannot be negative"),
        ]
    },
}  # fmt: skip


def baseline_with(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any], Path], str]:
    """A maker of the baseline *change* makes of a sound one (a value "1e400" or DIGITS_400 is written as the number:
    JSON reads the one as infinity, the other as an int no float holds)."""

    def make(sound: dict[str, Any], folder: Path) -> str:
        data = json.loads(json.dumps(sound))
        change(data)
        path = folder / "baseline.json"
        path.write_text(json.dumps(data).replace('"1e400"', "1e400").replace(f'"{DIGITS_400}"', DIGITS_400))
        return str(path)

    return make


def _first_cap(key: str, value: object) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["caps"][0].__setitem__(key, value)


#: name -> (the maker of a baseline from a sound one, or of a file; what stderr's one line must hold after
#: "cannot read baseline {file}: ").
BASELINES: dict[str, tuple[Callable[[dict[str, Any], Path], str], str]] = {
    "owner_list": (baseline_with(_first_cap("owner", ["a"])), "caps[0].owner: a string or null, not a list"),
    "owner_int": (baseline_with(_first_cap("owner", 5)), "caps[0].owner: a string or null, not 5"),
    "owner_dict": (baseline_with(_first_cap("owner", {"a": 1})), "caps[0].owner: a string or null, not an object"),
    "guard_list_of_ints": (baseline_with(_first_cap("guard", [1])), "caps[0].guard: a list of strings, not a list"),
    "guard_int": (baseline_with(_first_cap("guard", 5)), "caps[0].guard: a list of strings, not 5"),
    "guard_dict": (baseline_with(_first_cap("guard", {"a": 1})), "caps[0].guard: a list of strings, not an object"),
    "line_1e400": (
        baseline_with(_first_cap("line", "1e400")),
        "caps[0].line: a line number from 1 to 2147483648, not inf",
    ),
    "line_400_digits": (
        baseline_with(_first_cap("line", DIGITS_400)),  # as JSON's integer (OverflowError, formatting it)
        "caps[0].line: a line number from 1 to 2147483648, not 1.00000e+400",
    ),
    "lone_surrogate": (
        baseline_with(_first_cap("knobs", ["\ud800"])),
        "not JSON sgtrace can read (a string holds a lone surrogate, '\\ud800')",
    ),  # fmt: skip
    "deep": (lambda _sound, folder: deep_json(folder), "JSON nested deeper than 64 levels"),
    "sparse": (lambda _sound, folder: sparse_file(folder), "larger than 16 MB"),
    "zeros": (lambda _sound, folder: zeros(folder), "larger than 16 MB"),
}


# Hostile logs: lines that make a pattern backtrack, and docker's cut records. Each pattern a line meets must read
# it in time linear in its length; tests/test_hostile.py compares the time on a megabyte and on four.


def pieces_of(message: Any) -> list[str]:
    """What a line repeats to make *message*'s pattern work hardest: its words, and each form cut at each of its
    words (a figure it needs missing, a unit cut off), each filled with a number."""
    found = {message.literal or "Capture ", f"{message.literal} "}
    for form in message.forms:
        words = form.replace("{}", "1").split(" ")
        found.update(" ".join(words[:k]) + " " for k in range(1, len(words) + 1))
    return sorted(found)


def repeated(piece: str, size: int) -> str:
    """*piece* repeated to *size* characters."""
    return (piece * (size // len(piece) + 1))[:size]


#: Worst cases of what a log's line meets besides the table's patterns: name -> the line of (about) *size*
#: characters. A server_args= line whose fields a pattern tried at each place they could begin (43 s on 100 KB),
#: a launch command's words repeated, SGLang's and a wrapper's stamps and colours repeated.
LINE_WORST: dict[str, Callable[[int], str]] = {
    "server_args_words": lambda n: "server_args=ServerArgs(" + repeated("a", n),
    "server_args_fields_then_bracket": lambda n: "server_args=ServerArgs(" + repeated("a=1 ", n) + "[",
    "server_args_chained_names": lambda n: "server_args=ServerArgs(" + repeated("a=b=", n) + "(",
    "server_args_open_quotes": lambda n: "server_args=ServerArgs(" + repeated("a='", n),
    "server_args_many_fields": lambda n: "server_args=ServerArgs(" + repeated("a=1, ", n) + ")",
    "command_repeated": lambda n: repeated("sglang serve ", n) + "<model>",
    "command_quoted": lambda n: repeated("-m sglang.launch_server'", n),
    "stamps": lambda n: repeated("[2026-01-01 00:00:00 TP0", n),
    "ranks": lambda n: "[2026-01-01 00:00:00" + repeated(" TP0", n),
    "colours": lambda n: repeated("\x1b[1;", n),
    "progress": lambda n: repeated("1%|  ", n) + "[2026-01-01 00:00:00] x",
    "compose": lambda n: repeated("a", n) + " |",
    "carriage_returns": lambda n: repeated("Load weight end. \r", n),
}


def docker_records(size: int, text: str = "Capture ") -> bytes:
    """docker's json-file of *size* bytes whose records are all pieces of one line (none ends in a newline), as
    docker cuts a line longer than 16 KB."""
    record = json.dumps({"log": repeated(text, 16384), "stream": "stderr", "time": "2026-11-02T10:00:01.1Z"}) + "\n"
    return record.encode() * (size // len(record) + 1)


def _write(name: str, data: bytes) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        path = folder / name
        path.write_bytes(data)
        return str(path)

    return make


def _gzipped(name: str, size: int) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        import gzip

        path = folder / name
        with gzip.open(path, "wb", compresslevel=9) as handle:
            chunk = docker_records(1 << 20)
            for _ in range(size >> 20):
                handle.write(chunk)
        return str(path)

    return make


_STAMPED = "[2026-02-28 10:00:00] "
#: name -> the maker of a hostile log, and what the explain of the sample (with mem_fraction_static=0.88) must end
#: in: (exit code, words of stderr's last line). Each took from 43 s to past 60 s before the log was read in
#: linear time.
LOGS: dict[str, tuple[Callable[[Path], str], int, str]] = {
    "server_args_100kb": (
        _write("a.log", (_STAMPED + "server_args=ServerArgs(" + ", ".join(f"a{i}={i}" for i in range(6_000))
                         + ", model_path='" + "x" * 40_000 + "', mem_fraction_static=0.88)\n").encode()),
        2, "missing input available_gpu_memory",
    ),
    "capture_50000_times": (
        _write("b.log", (_STAMPED + "server_args=ServerArgs(tp_size=1)\n" + _STAMPED + "Capture " * 50_000
                         + "\n").encode()),
        2, "missing input available_gpu_memory",
    ),
    "docker_cut_records_20mb": (_write("c.log", docker_records(20 << 20)), 2, "no SGLang start-up in the log"),
    "docker_cut_records_gz_200mb": (_gzipped("d.log.gz", 200 << 20), 2, "no SGLang start-up in the log"),
    "nul_200mb": (nul_bytes(200 << 20), 2, "not a text log (binary data: NUL bytes)"),
}  # fmt: skip


def _options(count: int) -> str:
    """*count* options no release has, each with a value."""
    return " ".join(f"--opt{i} {i}" for i in range(count))


#: name -> (the arguments of ``explain SAMPLE`` after the tree, "{file}" for the file made; its maker; the exit code
#: the answer ends in). Each was an internal error or took seconds per megabyte: now an answer.
EXPLAIN_ANSWERS: dict[str, tuple[list[str], Callable[[Path], str], int]] = {
    "log_tp_rank_5000_digits": (["--set", "mem_fraction_static=0.88", "--set", "weights_gb=72.33", "--log", "{file}"],
                                log_line(LOAD_END.format("21.71"), rank="TP" + "7" * 5000), 0),
    "command_options_to_the_bound": ([*FIGURES, "--command", "{file}"],
                                     command("--tp-size 1 " * 87_000 + "--mem-fraction-static 0.88"), 0),
    "command_unknown_options_to_the_bound": ([*FIGURES, "--command", "{file}"],
                                             command(_options(60_000) + " --mem-fraction-static 0.88"), 0),
    "command_nul_to_the_bound": ([*FIGURES, "--set", "mem_fraction_static=0.88", "--command", "{file}"],
                                 nul_bytes(1 << 20), 0),  # one word of a megabyte: 8 s of CPU when shlex split it
}  # fmt: skip


def pyproject(text: str) -> Callable[[Path], str]:
    """A pyproject.toml of *text* in *folder*."""

    def make(folder: Path) -> str:
        path = folder / "pyproject.toml"
        path.write_text(text)
        return str(path)

    return make


def _sparse_pyproject(folder: Path) -> str:
    path = folder / "pyproject.toml"
    with path.open("wb") as handle:
        handle.truncate(3 << 30)
    return str(path)


#: name -> (the maker of a pyproject.toml in the folder sgtrace runs in, what stderr's one line, which names the
#: file, holds): a bound given a negative, boolean or huge size was taken as it was; 5,000 digits, 100,000 levels of
#: arrays and a path holding NUL were tracebacks; a 3 GB sparse file was read whole.
CONFIGS: dict[str, tuple[Callable[[Path], str], str]] = {
    "size_negative": (pyproject("[tool.sgtrace]\nmax-file-size = -5\n"), ":[tool.sgtrace]: max-file-size = -5"),
    "size_boolean": (pyproject("[tool.sgtrace]\nmax-file-size = true\n"), ":[tool.sgtrace]: max-file-size = True"),
    "size_past_any_file": (pyproject("[tool.sgtrace]\nmax-unpacked-size = " + "1" + "0" * 23 + "\n"),
                           ":[tool.sgtrace]: max-unpacked-size = 1" + "0" * 23),
    "integer_5000_digits": (pyproject("[tool.sgtrace]\nmax-nodes = " + "1" * 5000 + "\n"),
                            ": invalid TOML: Exceeds the limit (4300 digits)"),
    "arrays_100000_deep": (pyproject("[tool.sgtrace]\nexclude = " + "[" * 100_000 + "]" * 100_000 + "\n"),
                           ": invalid TOML: nested too deep"),
    "sparse": (_sparse_pyproject, ": cannot read: larger than 1 MB"),
    "path_holding_nul": (pyproject('[tool.sgtrace]\ncache-dir = "\\u0000"\n'), ": embedded null byte"),
}  # fmt: skip
