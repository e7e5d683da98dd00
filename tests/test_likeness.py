"""Pairing caps across two trees by what they do: the measure, and moved / changed / unpaired on snippets."""

from __future__ import annotations

import pytest

from sgtrace.analyses.diff import compare
from sgtrace.analyses.likeness import THRESHOLD, shape, similarity, tokens
from sgtrace.model import Cap

ATTRIBUTE = "max_total_num_tokens"


def _cap(
    code: str,
    category: str = "min",
    guard: tuple[str, ...] = (),
    knobs: tuple[str, ...] = (),
    path: str = "old.py",
    function: str = "Runner.init_memory_pool",
    exits: tuple[str, ...] = (),
) -> Cap:
    target = code.split("=")[0].strip().rsplit(".", 1)[-1]
    return Cap(path, 10, "m.Runner", function, target, category, guard, knobs, code, exits=exits)


def _elsewhere(cap: Cap) -> Cap:
    return Cap("new.py", 99, "n.Configurator", "Configurator.size", cap.target, cap.category, cap.guard, cap.knobs,
               cap.code, exits=cap.exits)  # fmt: skip


ROUND_OLD = _cap(
    "self.max_total_num_tokens = (\n    self.max_total_num_tokens // self.server_args.page_size"
    " * self.server_args.page_size\n)",
    "round",
    knobs=("server_args.page_size",),
)
ROUND_NEW = _elsewhere(
    _cap(
        "max_total_num_tokens = max_total_num_tokens // page_size * page_size",
        "round",
        knobs=("get_schedule().page_size",),
    )  # fmt: skip
)
MIN_OLD = _cap(
    "self.max_total_num_tokens = min(self.max_total_num_tokens, max_total_tokens)",
    guard=("max_total_tokens is not None",),
    knobs=("server_args.max_total_tokens",),
)
MIN_NEW = _elsewhere(
    _cap(
        "token_capacity = min(token_capacity, user_limit)",
        guard=("user_limit is not None",),
        knobs=("get_schedule().max_total_tokens",),
    )  # fmt: skip
)
SWA_MIN = "self.max_total_num_tokens = min(self.max_total_num_tokens, self.model_runner.swa_max_total_num_tokens)"
DECODE_OLD = _cap(SWA_MIN, guard=("self.tp_worker.is_hybrid_swa",), path="decode.py", function="Decode.__init__")
DECODE_NEW = _cap(SWA_MIN, guard=("self.tp_worker.is_hybrid_swa and not self._uses_tail()",), path="decode.py",
                  function="Decode.__init__")  # fmt: skip
PREFILL_OLD = _cap(SWA_MIN, guard=("self.tp_worker.is_hybrid_swa",), path="prefill.py", function="Prefill.__init__")
DRAFT = _cap("self.max_total_num_tokens = self.server_args.draft_runner_cache_size", "override",
             guard=("self.is_draft_worker",), knobs=("server_args.draft_runner_cache_size",))  # fmt: skip
MLX = _elsewhere(_cap("self.max_total_num_tokens = self._mlx_pool_size", "override",
                      guard=("self._mlx_pool_size is not None",)))  # fmt: skip
CAP_TOKENS = _elsewhere(_cap("max_tokens = min(max_tokens, cap_tokens)", guard=("cap_tokens is not None",)))


def _kind(old: Cap, new: Cap) -> tuple[str, tuple[str, ...]]:
    result = compare([old], [new], [], [], ATTRIBUTE)
    for kind in ("changed", "moved"):
        for pair in getattr(result, kind):
            return kind, pair.differences
    assert result.added == (new,) and result.removed == (old,)
    return "unpaired", ()


@pytest.mark.parametrize(
    ("old", "new", "kind", "differences"),
    [
        (ROUND_OLD, ROUND_NEW, "moved", ("place",)),  # receivers and parentheses are not the code
        (MIN_OLD, MIN_NEW, "moved", ("place", "names")),  # renamed, the same min under the same condition
        (DECODE_OLD, DECODE_NEW, "changed", ("guard",)),  # same place, a guard that gained a term
        (DRAFT, MLX, "unpaired", ()),  # both `x = y`, but nothing else alike
        (PREFILL_OLD, CAP_TOKENS, "unpaired", ()),  # both a min, of other quantities under other conditions
        (ROUND_OLD, _elsewhere(_cap(ROUND_OLD.code, "min")), "unpaired", ()),  # another category never pairs
    ],
    ids=["receivers", "renames", "guard", "copies-of-other-names", "other-min", "category"],
)
def test_pairs_by_what_the_code_does(old: Cap, new: Cap, kind: str, differences: tuple[str, ...]) -> None:
    assert _kind(old, new) == (kind, differences)


def test_a_move_names_the_renamed_variables() -> None:
    [pair] = compare([MIN_OLD], [MIN_NEW], [], [], ATTRIBUTE).moved
    assert pair.renamed == (("max_total_num_tokens", "token_capacity"), ("max_total_tokens", "user_limit"))


def test_a_cap_that_also_moved_and_changed_says_both() -> None:
    old = _cap("self.full = align_page_size(self.full)", "round", exits=("not (full_layers_num == 0)",))
    new = _elsewhere(_cap("full = align_page_size(max_total)", "round", exits=("not (self._full_layers_num == 0)",)))
    [pair] = compare([old], [new], [], [], ATTRIBUTE).changed
    assert pair.differences == ("place", "code")  # the exit differs only by its receiver: not a guard change


def test_of_two_equal_candidates_the_one_in_the_same_place_wins() -> None:
    result = compare([PREFILL_OLD, DECODE_OLD], [DECODE_NEW], [], [], ATTRIBUTE)
    [pair] = result.changed
    assert pair.old is DECODE_OLD and result.removed == (PREFILL_OLD,)


def test_repeats_of_a_paired_cap_are_added_and_named() -> None:
    copy = _elsewhere(_cap(ROUND_NEW.code, "round", knobs=("get_schedule().page_size",)))
    result = compare([ROUND_OLD], [ROUND_NEW, copy], [], [], ATTRIBUTE)
    [pair] = result.moved
    assert len(result.added) == 1 and pair.copies == result.added


def test_the_measure_is_symmetric_and_bounded() -> None:
    for old, new in [(ROUND_OLD, ROUND_NEW), (MIN_OLD, MIN_NEW), (DRAFT, MLX), (PREFILL_OLD, CAP_TOKENS)]:
        forward = similarity(shape(old, ATTRIBUTE), shape(new, ATTRIBUTE))
        assert forward == pytest.approx(similarity(shape(new, ATTRIBUTE), shape(old, ATTRIBUTE)))
        assert 0.0 <= forward <= 1.0
    assert similarity(shape(ROUND_OLD, ATTRIBUTE), shape(ROUND_OLD, ATTRIBUTE)) >= THRESHOLD


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("self.server_args.page_size", ("page_size",)),
        ("get_schedule().page_size", ("page_size",)),
        ("self._x = (\n  y\n)", ("x", "=", "y")),
        ("if x:", ("if", "x", ":", "pass")),  # a compound statement's header
        ("not valid ((", ("not", "valid", "(", "(")),  # no parse: its words
    ],
)
def test_tokens_leave_out_receivers_and_layout(code: str, expected: tuple[str, ...]) -> None:
    assert tokens(code) == expected
