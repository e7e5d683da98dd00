"""The table of SGLang's messages against the code that prints them, and as the one place they are spelled.

Every form the table lists, printed as SGLang would print it, is read back as that message with its
figures; every message a fetched release prints about memory, pools and weights is one of the table's
forms (a message that changes in a new release fails here, instead of being misread); and no module
but the table spells a message.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sgtrace.run.events import classify
from sgtrace.run.lines import clean
from sgtrace.run.messages import MESSAGES, OTHERS, Kind, known
from tests import releases
from tests.code_messages import PLACEHOLDER, messages
from tests.test_run_corpus import KNOWN

ROOT = Path(__file__).resolve().parents[1] / "sgtrace"
#: What a release prints about start-up memory, pools and weights: each must be in the table.
MEMORY = re.compile(
    r"avail mem=|mem usage=|#tokens:|Cache is allocated|K size|KV size|max_total_num_tokens=|max_total_tokens="
    r"|--mem-fraction-static|Load weight|Memory pool end|SWAKVPool|liding window memory pool|torch distributed"
    r"|Memory baseline|fired up"
)
#: Words that spell a message, which no module but the table may hold in a string.
SPELLED = (
    "KV Cache is allocated", "Load weight", "Memory pool end", "max_total_num_tokens=", "Capture cuda graph",
    "server_args=ServerArgs", "fired up", "Mamba Cache", "SWAKVPool", "Init torch distributed", "avail mem=",
    "Automatically reduce", "profiled value", "window memory pool",
)  # fmt: skip
#: Placeholders the context around them does not type, by the words before them.
_WORDS = {
    "type=": "Qwen2ForCausalLM",
    "dtype=": "torch.bfloat16",
    "dtype: ": "torch.bfloat16",
    "SWAKVPool ": "mem usage",
}


def render(form: str) -> tuple[str, list[str]]:
    """The form as SGLang prints it, with a sample for each placeholder (numbers where a unit follows); and the
    numbers put in, in order."""
    pieces = form.removesuffix("...").split(PLACEHOLDER)
    out, numbers = [pieces[0]], []
    for index, after in enumerate(pieces[1:]):
        before = out[-1]
        word = next((w for key, w in _WORDS.items() if before.endswith(key)), None)
        if form.startswith("{} {}.") and index < 2:
            word = ("KV Cache", "is allocated")[index]
        elif form.startswith("server_args="):
            word = "ServerArgs(model_path='m', mem_fraction_static=0.88)"
        elif before.endswith("Capture "):  # a backend's name, or a role and step before one
            word = "target decode" if after == " " or after.startswith(" CUDA graph") else "cuda graph"
        elif before == " " and out[-2:-1] == ["target decode"]:
            word = "CUDA graph"
        elif after.startswith("avail mem") and before.endswith(", "):
            word = ""  # 0.5.23's quantization words before avail mem=
        if word is None:
            word = (
                f"{12.5 + index:.2f}"
                if after.lstrip().startswith(("GB", "GiB", "s ", "s.", "s,"))
                else str(100 + index)
            )
            numbers.append(word)
        out += [word, after]
    return "".join(out), numbers


@pytest.mark.parametrize(
    ("name", "form"), [(m.name, f) for m in MESSAGES for f in m.forms], ids=lambda v: str(v)[:50]
)  # fmt: skip
def test_every_form_is_read_back_as_its_message(name: str, form: str) -> None:
    text, numbers = render(form)
    message = next(m for m in MESSAGES if m.name == name)
    line = clean(1, f"[2026-03-01 10:00:00 TP0] {text}")
    if message.kind is Kind.OTHER or name == "server_args":
        assert message.pattern.search(line.text), text
        return
    event = classify(line)
    assert event is not None and event.message == name, (text, event and event.message)
    put = [float(n) for n in numbers]
    sums = {round(a + b, 2) for a in put for b in put} | {round(sum(put[i:]), 2) for i in range(len(put))}
    assert all(round(v, 2) in {*put, *sums} for v in event.figures.values()), (text, event.figures)
    if message.figures and re.search(r"\{\} ?GB", form):
        assert event.figures, text


def test_forms_are_unique_and_others_are_not_read() -> None:
    forms = [f for m in MESSAGES for f in m.forms]
    assert len(forms) == len(set(forms))
    for form in OTHERS:
        assert classify(clean(1, "[2026-03-01 10:00:00 TP0] " + render(form)[0])) is None or "avail mem" in form


#: Every release the suite fetches.
FETCHED = sorted({releases.OLDEST, releases.EARLY_05, releases.MIDDLE, "0.5.19", releases.NEWEST, *KNOWN})


@pytest.mark.release
@pytest.mark.parametrize("version", FETCHED)
def test_every_memory_message_a_release_prints_is_in_the_table(version: str) -> None:
    root = releases.release(version) / "sglang" / "srt"
    printed = [m for m in messages(root) if MEMORY.search(m.text)]
    assert printed, "no message read: the reader of the code is broken"
    unknown = sorted({f"{m.path}:{m.line}: {m.text[:160]}" for m in printed if known(m.text) is None})
    assert not unknown, "messages the table does not know (add them to sgtrace/run/messages.py):\n" + "\n".join(unknown)


def _strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
    return found


def test_no_module_but_the_table_spells_a_message() -> None:
    spelled = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "run/messages.py" or relative.startswith("sample/"):
            continue
        for line, text in _strings(path):
            spelled += [f"{relative}:{line}: {word!r}" for word in SPELLED if word in text]
    assert not spelled, spelled
