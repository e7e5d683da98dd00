"""The partial evaluator on small trees: each form it decides, what it leaves unknown and names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sgtrace.analyses import evaluate
from sgtrace.analyses.evaluate import (
    ASSUMED,
    CONFIG_KEY,
    Code,
    Evaluator,
    Facts,
    Known,
    ModelConfig,
    Profile,
    Unknown,
    model_type_of,
)
from sgtrace.discover import discover

MODELS = """
from pkg.registry import EXTRA

HYBRID = {"SwaForCausalLM", *EXTRA}
MULTIMODAL = ["VlmForConditionalGeneration"]

if envs.EXTERNAL_ARCH.get():
    MULTIMODAL.append(envs.EXTERNAL_ARCH.get())


def is_hybrid(architectures, text_config=None):
    if any(arch in HYBRID for arch in architectures):
        return True
    if text_config is not None and getattr(text_config, "is_hybrid", False):
        return True
    return False


def reservation_gb(*, is_multimodal, transport):
    if not is_multimodal:
        return 0.0
    reserved = envs.CACHE_MB.get()
    if transport in ("cuda_ipc", "cuda_vmm"):
        reserved += envs.FEATURE_MB.get()
    return reserved / 1024


class Config:
    def __init__(self, hf_config, enable_multimodal=None):
        self.hf_config = hf_config
        if enable_multimodal is None:
            if self.hf_config.architectures[0] in ("Gemma3ForConditionalGeneration",):
                enable_multimodal = False
            else:
                enable_multimodal = True
        self.is_multimodal = enable_multimodal and self.hf_config.architectures[0] in MULTIMODAL
        self.is_hybrid_swa = is_hybrid(self.hf_config.architectures, self.hf_config) and not self.disable_swa
        layers = self.hf_config.num_hidden_layers
        cell = (self.hf_config.kv_lora_rank + self.hf_config.qk_rope_head_dim) * layers * 2
        self.cell_size = cell


class Runner:
    def size(self, transport):
        reserve = reservation_gb(is_multimodal=self.model_config.is_multimodal, transport=transport)
        free = get_available_gpu_memory(self.device)
        budget = free - reserve
        if self.page_size > 1:
            budget = budget // self.page_size * self.page_size
        return budget

    @property
    def doubled(self):
        return self.width * 2
"""
REGISTRY = """
EXTRA = ("ExtraSwaModel",)


class Envs:
    CACHE_MB = EnvInt(100)
    FEATURE_MB = EnvInt(1024)
    EXTERNAL_ARCH = EnvStr(None)
    POST_CAPTURE = EnvBool(False)
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evaluate") / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "models.py").write_text(textwrap.dedent(MODELS))
    (root / "registry.py").write_text(textwrap.dedent(REGISTRY))
    return root.parent


def _package(folder: Path, name: str) -> Path:
    """An empty package *name* in *folder* (its modules are written by the test)."""
    root = folder / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    return root


def _evaluator(tree: Path, config: ModelConfig | None = None, **facts: object) -> Evaluator:
    env = facts.pop("env", {})
    observed = Known(42.0, ("the log",))
    profile = Profile(
        frozenset({"hf_config"}), lambda name, path, line: observed if name.startswith("get_avail") else None
    )
    given = Facts(values=facts, model=config, env=env)  # type: ignore[arg-type]
    return Evaluator(Code(discover(str(tree)).files), given, profile)


def _line(tree: Path, text: str) -> int:
    return next(i for i, line in enumerate((tree / "pkg" / "models.py").read_text().splitlines(), 1) if text in line)


def _config(*architectures: str, complete: bool = True, **more: object) -> ModelConfig:
    return ModelConfig({"architectures": list(architectures), **more}, complete, "config.json")


def test_a_call_into_the_tree_with_keywords_runs_its_ifs_and_returns(tree: Path) -> None:
    evaluator = _evaluator(tree)
    at = _line(tree, "reserve = reservation_gb")
    assert evaluator.at("reservation_gb(is_multimodal=False, transport=None)", "pkg/models.py", at).value == 0.0
    found = evaluator.at("reservation_gb(is_multimodal=True, transport='cuda_ipc')", "pkg/models.py", at)
    assert isinstance(found, Known) and found.value == pytest.approx((100 + 1024) / 1024)  # both registry defaults
    assert any("CACHE_MB unset" in why for why in found.why)


def test_env_overrides_the_registry_default(tree: Path) -> None:
    evaluator = _evaluator(tree, env={"CACHE_MB": "2048"})
    at = _line(tree, "reserve = reservation_gb")
    found = evaluator.at("reservation_gb(is_multimodal=True, transport='tcp')", "pkg/models.py", at)
    assert isinstance(found, Known) and found.value == 2.0 and any("--env" in why for why in found.why)


def test_an_attribute_is_worked_out_from_the_writes_with_the_model_config(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    plain = _evaluator(tree, _config("LlamaForCausalLM"))
    assert plain.at("self.model_config.is_multimodal", "pkg/models.py", at).value is False
    # the parameter is what the caller passes: the server argument's value (its default, None, here)
    undecided = _evaluator(tree, _config("VlmForConditionalGeneration"))
    assert undecided.at("self.model_config.is_multimodal", "pkg/models.py", at) == Unknown(("enable_multimodal",))
    vlm = _evaluator(tree, _config("VlmForConditionalGeneration"), enable_multimodal=None)
    assert vlm.at("self.model_config.is_multimodal", "pkg/models.py", at).value is True
    # the whole call the formula reads: 0 for a text model, the cache's default for a VLM
    call = "reservation_gb(is_multimodal=self.model_config.is_multimodal, transport=None)"
    assert plain.at(call, "pkg/models.py", at).value == 0.0
    assert vlm.at(call, "pkg/models.py", at).value == pytest.approx(100 / 1024)


def test_a_module_list_appended_under_an_env_var(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    external = _evaluator(tree, _config("MyVlm"), env={"EXTERNAL_ARCH": "MyVlm"}, enable_multimodal=None)
    assert external.at("self.model_config.is_multimodal", "pkg/models.py", at).value is True
    assert _evaluator(tree, _config("MyVlm")).at("self.model_config.is_multimodal", "pkg/models.py", at).value is False


def test_membership_in_a_set_with_spreads_of_imported_constants(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    assert _evaluator(tree).at("is_hybrid(['ExtraSwaModel'])", "pkg/models.py", at).value is True
    assert _evaluator(tree).at("is_hybrid(['SwaForCausalLM'])", "pkg/models.py", at).value is True


def test_three_values_a_known_operand_decides_and_an_unknown_is_named(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    # the log names the architecture only: a key read with a default is assumed absent, and says so
    partial = _evaluator(tree, _config("LlamaForCausalLM", complete=False), disable_swa=False)
    found = partial.at("self.model_config.is_hybrid_swa", "pkg/models.py", at)
    assert isinstance(found, Known) and found.value is False
    assert any(why.startswith("is_hybrid assumed absent") and ASSUMED in why for why in found.why), found.why
    # a key read without a default is not assumed: it stays unknown and is named
    cell = partial.at("self.model_config.cell_size", "pkg/models.py", at)
    assert isinstance(cell, Unknown) and f"{CONFIG_KEY}num_hidden_layers" in cell.needs
    # the whole config: getattr's default applies, decided False
    whole = _evaluator(tree, _config("LlamaForCausalLM"), disable_swa=False)
    assert whole.at("self.model_config.is_hybrid_swa", "pkg/models.py", at).value is False
    # a listed architecture decides it whatever the config says; `and not disable_swa` still needs its input
    listed = _evaluator(tree, _config("SwaForCausalLM", complete=False))
    assert listed.at("self.model_config.is_hybrid_swa", "pkg/models.py", at) == Unknown(("disable_swa",))
    assert _evaluator(tree, disable_swa=True).at("x and not disable_swa", "pkg/models.py", 1).value is False


def test_arithmetic_from_the_config(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    config = _config("DeepseekV3ForCausalLM", num_hidden_layers=61, kv_lora_rank=512, qk_rope_head_dim=64)
    assert _evaluator(tree, config).at("self.model_config.cell_size", "pkg/models.py", at).value == 70_272


def test_locals_by_the_flow_up_to_the_line_and_observations_by_the_call(tree: Path) -> None:
    at = _line(tree, "return budget")
    evaluator = _evaluator(tree, _config("LlamaForCausalLM"), page_size=1, transport=None)
    found = evaluator.name_at("budget", "pkg/models.py", at)
    assert isinstance(found, Known) and found.value == 42.0  # free (observed) - 0 reserve; no page rounding
    rounded = _evaluator(tree, _config("LlamaForCausalLM"), page_size=16, transport=None)
    assert rounded.name_at("budget", "pkg/models.py", at).value == 32.0  # 42 // 16 * 16
    undecided = _evaluator(tree, _config("LlamaForCausalLM"), transport=None)
    assert isinstance(undecided.name_at("budget", "pkg/models.py", at), Unknown)  # page_size unknown, branches differ


def test_properties_and_what_cannot_be_followed(tree: Path) -> None:
    at = _line(tree, "reserve = reservation_gb")
    assert _evaluator(tree, width=3).at("self.doubled", "pkg/models.py", at).value == 6
    evaluator = _evaluator(tree)
    assert isinstance(evaluator.at("torch.cuda.mem_get_info()[0]", "pkg/models.py", at), Unknown)
    assert isinstance(evaluator.at("isinstance(self.pool, SWAPool)", "pkg/models.py", at), Unknown)
    assert isinstance(evaluator.at("not a valid (", "pkg/models.py", at), Unknown)


def test_recursion_and_cycles_end(tmp_path: Path) -> None:
    root = _package(tmp_path, "loop")
    (root / "m.py").write_text(
        "A = B\nB = A\n\ndef f(n):\n    return f(n - 1) + 1\n\nclass C:\n    def g(self):\n        return self.x\n"
        "    @property\n    def x(self):\n        return self.x + 1\n"
    )
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    assert isinstance(evaluator.at("f(3)", "loop/m.py", 5), Unknown)
    assert isinstance(evaluator.at("A", "loop/m.py", 1), Unknown)
    assert isinstance(evaluator.at("self.x", "loop/m.py", 9), Unknown)


def test_values_too_large_to_follow_are_not_built(tmp_path: Path) -> None:
    """A module constant the evaluator would have to build huge (a string or list repeated, a power, a shift)
    is unknown, said so, and costs nothing; a long chain of updates ends unknown, not in a crash."""
    root = _package(tmp_path, "big")
    chain = "\n".join(["def f(a):", "    x = 1", *["    x += a"] * 5000, "    return x"])
    (root / "m.py").write_text(
        "S = 'a' * 10\nT = S * 10 ** 9\nP = 2 ** 10 ** 10\nQ = 3 << 10 ** 9\nR = [0] * 10 ** 12\nOK = 2 ** 10\n" + chain
    )
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    for name in ("T", "P", "Q", "R"):
        assert evaluator.at(name, "big/m.py", 1) == Unknown(("a value too large to follow",)), name
    assert evaluator.at("OK", "big/m.py", 1).value == 1024
    assert isinstance(evaluator.at("f(2)", "big/m.py", 1), (Known, Unknown))


def test_enum_members_and_an_attribute_an_elif_chain_sets(tmp_path: Path) -> None:
    """``AttentionArch.MLA`` (an ``auto()`` member) equals itself and not its sibling; an attribute that an
    ``if``/``elif`` chain of one method writes is what that method's flow leaves it for the facts."""
    root = _package(tmp_path, "arch")
    (root / "m.py").write_text(
        textwrap.dedent("""
        from enum import Enum, IntEnum, auto


        class Arch(IntEnum):
            MLA = auto()
            MHA = auto()


        class Mode(str, Enum):
            DECODE = "decode"


        class Config:
            def __init__(self, hf_config):
                self.hf_config = hf_config
                if "DeepseekV3ForCausalLM" in self.hf_config.architectures:
                    self.attention_arch = Arch.MLA
                elif "MiniCPM3ForCausalLM" in self.hf_config.architectures:
                    self.attention_arch = Arch.MLA
                else:
                    self.attention_arch = Arch.MHA


        class Runner:
            def use_mla(self):
                return self.model_config.attention_arch == Arch.MLA
    """)
    )
    profile = Profile(frozenset({"hf_config"}))
    files = discover(str(tmp_path)).files
    line = next(i for i, text in enumerate((root / "m.py").read_text().splitlines(), 1) if "== Arch.MLA" in text)
    for architecture, expected in (("DeepseekV3ForCausalLM", True), ("LlamaForCausalLM", False)):
        model = ModelConfig({"architectures": [architecture]}, False, "the log")
        found = Evaluator(Code(files), Facts(model=model), profile).at("self.use_mla()", "arch/m.py", line)
        assert isinstance(found, Known) and found.value is expected, (architecture, found)
    evaluator = Evaluator(Code(files), Facts(), profile)
    assert evaluator.at("Mode.DECODE == 'decode'", "arch/m.py", line).value is True  # a str enum is its value
    assert evaluator.at("Arch.MLA == Arch.MHA", "arch/m.py", line).value is False
    assert isinstance(evaluator.at("self.model_config.attention_arch", "arch/m.py", line), Unknown)  # no model


@pytest.mark.parametrize(
    ("architecture", "model_type"),
    [
        ("DeepseekV3ForCausalLM", "deepseek_v3"),
        ("KimiK25ForConditionalGeneration", "kimi_k25"),
        ("Qwen3MoeForCausalLM", "qwen3_moe"),
        ("Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl"),
        ("LlamaForCausalLM", "llama"),
        ("GptOssForCausalLM", "gpt_oss"),
    ],
)
def test_the_model_type_an_architecture_name_gives(architecture: str, model_type: str) -> None:
    assert model_type_of([architecture]) == model_type


def test_a_config_known_in_part_assumes_its_model_type_and_says_so(tree: Path) -> None:
    partial = ModelConfig({"architectures": ["DeepseekV3ForCausalLM"]}, False, "the log")
    found = partial.get("model_type")
    assert isinstance(found, Known) and found.value == "deepseek_v3" and ASSUMED in found.why[0]
    assert isinstance(ModelConfig({}, False, "the log").get("model_type"), Unknown)  # no architecture: no name
    # a whole config is read, never assumed
    whole = ModelConfig({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2"}, True, "config.json")
    assert whole.get("model_type").value == "kimi_k2"  # type: ignore[union-attr]
    assert isinstance(ModelConfig({"architectures": ["X"]}, True, "config.json").get("model_type"), Unknown)
    at = _line(tree, "reserve = reservation_gb")
    assert partial.has("vision_config").value is False  # type: ignore[union-attr]
    evaluator = _evaluator(tree, partial)
    assert evaluator.at("self.model_config.hf_config.model_type == 'deepseek_v41'", "pkg/models.py", at).value is False


def test_reading_methods_of_decided_values_and_isinstance_of_none(tmp_path: Path) -> None:
    root = _package(tmp_path, "meth")
    (root / "m.py").write_text(
        textwrap.dedent("""
        class KimiLinearConfig:
            pass


        def text_of(config):
            class_name = config.architectures[0]
            if class_name.startswith("Llava") and class_name.endswith("ForCausalLM"):
                return "llava"
            sub = getattr(config, "text_config", None)
            if isinstance(sub, KimiLinearConfig):
                return "linear"
            return {"a": 1}.get(class_name.lower(), "plain")
        """)
    )
    files = discover(str(tmp_path)).files
    profile = Profile(frozenset({"hf_config"}))
    for architecture, expected in (("LlavaQwenForCausalLM", "llava"), ("A", 1), ("LlamaForCausalLM", "plain")):
        model = ModelConfig({"architectures": [architecture]}, True, "config.json")
        found = Evaluator(Code(files), Facts(model=model), profile).at("text_of(self.hf_config)", "meth/m.py", 1)
        assert isinstance(found, Known) and found.value == expected, (architecture, found)
    evaluator = _evaluator(tmp_path)
    assert evaluator.at("'a,b'.split(',')", "meth/m.py", 1).value == ["a", "b"]
    assert isinstance(evaluator.at("'a'.format(x)", "meth/m.py", 1), Unknown)  # not a reading method
    assert isinstance(evaluator.at("unknown_name.startswith('x')", "meth/m.py", 1), Unknown)


def test_classmethods_enum_members_methods_and_a_common_attribute_of_the_reading_class(tmp_path: Path) -> None:
    root = _package(tmp_path, "spec")
    (root / "m.py").write_text(
        textwrap.dedent("""
        class Algorithm(IntEnum):
            EAGLE = auto()
            NONE = auto()

            @classmethod
            def from_string(cls, name):
                if name is None:
                    return cls.NONE
                try:
                    return cls[name.upper()]
                except KeyError:
                    pass
                raise ValueError(name)

            def is_none(self):
                return self == Algorithm.NONE


        class Scheduler:
            def __init__(self, server_args):
                self.spec = Algorithm.from_string(server_args.speculative_algorithm)

            def init_draft(self):
                if self.spec.is_none():
                    self.draft = None
                    return
                self.draft = make_draft()

            def pools(self):
                if self.draft is not None:
                    pass
        """)
    )
    # the attribute's word in more files than are followed: the reading class's own writes still count
    for number in range(evaluate.MAX_FILES + 1):
        (root / f"other{number}.py").write_text("spec = 1\n")
    files = discover(str(tmp_path)).files
    line = next(i for i, text in enumerate((root / "m.py").read_text().splitlines(), 1) if "is not None:" in text)
    none = Evaluator(Code(files), Facts({"speculative_algorithm": None}))
    assert none.at("self.spec.is_none()", "spec/m.py", line).value is True
    assert none.at("self.draft is not None", "spec/m.py", line).value is False
    eagle = Evaluator(Code(files), Facts({"speculative_algorithm": "eagle"}))
    found = eagle.at("self.spec", "spec/m.py", line)
    assert isinstance(found, Known) and found.value == evaluate.Member("Algorithm", "EAGLE")
    assert eagle.at("self.spec.is_none()", "spec/m.py", line).value is False
    assert isinstance(eagle.at("self.draft is not None", "spec/m.py", line), Unknown)  # a factory's value
    assert isinstance(eagle.at("Algorithm[1]", "spec/m.py", line), Unknown)  # an enum is indexed by name only
