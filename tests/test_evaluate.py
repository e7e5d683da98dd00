"""The partial evaluator on small trees: each form it decides, what it leaves unknown and names."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    Value,
    Words,
    model_type_of,
)
from sgtrace.analyses.operator import evaluator_profile
from sgtrace.analyses.profile import SGLANG
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
        Words(frozenset({"hf_config"})), lambda name, path, line: observed if name.startswith("get_avail") else None
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
    profile = Profile(Words(frozenset({"hf_config"})))
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
    profile = Profile(Words(frozenset({"hf_config"})))
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


RUNNER = """
import torch

_BY_NAME = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def verify_dtype(config, dtype):
    config_dtype = getattr(config, "torch_dtype", None)
    if isinstance(config_dtype, str):
        config_dtype = _BY_NAME.get(config_dtype, None)
    if config_dtype is None:
        config_dtype = torch.float32
    if isinstance(dtype, str) and dtype == "auto":
        return torch.float16 if config_dtype == torch.float32 else config_dtype
    return _BY_NAME[dtype]


class ModelConfig:
    def __init__(self, hf_config, dtype):
        self.hf_config = hf_config
        self.num_hidden_layers = self.hf_config.num_hidden_layers
        self.dtype = verify_dtype(self.hf_config, dtype)

    def as_draft(self):
        self.hf_config.num_hidden_layers = 1  # another object's attribute: not this class's


class Runner:
    def __init__(self, server_args):
        self.server_args = server_args
        self.model_config = ModelConfig(self.hf_config, server_args.dtype)
        self.dtype = self.model_config.dtype
        self.page_size = server_args.page_size

    def configure(self):
        if self.server_args.kv_cache_dtype == "auto":
            quant = getattr(self.model, "quant_config", None)
            if getattr(quant, "kv_cache_quant_algo", None) == "FP8":
                self.kv_cache_dtype = torch.float8_e4m3fn
            else:
                self.kv_cache_dtype = self.dtype
        elif self.server_args.kv_cache_dtype == "fp8_e4m3":
            self.kv_cache_dtype = torch.float8_e4m3fn

    def layers(self):
        self.start_layer = getattr(self.model, "start_layer", 0)
        self.end_layer = getattr(self.model, "end_layer", self.model_config.num_hidden_layers)

    def cell(self):
        size = torch._utils._element_size(self.kv_cache_dtype)
        return (self.end_layer - self.start_layer) * 2 * size


def sized(runner: Runner):
    return runner.kv_cache_dtype.itemsize
"""


def _runner(folder: Path, config: dict[str, object], **facts: object) -> tuple[Evaluator, int]:
    folder.mkdir(exist_ok=True)
    root = _package(folder, "eng")
    (root / "runner.py").write_text(RUNNER)
    model = ModelConfig(config, True, "config.json")
    given = Facts(values={"kv_cache_dtype": "auto", **facts}, defaults={"dtype": "auto", "pp_size": 1}, model=model)
    line = RUNNER.splitlines().index("        return (self.end_layer - self.start_layer) * 2 * size") + 1
    return Evaluator(Code(discover(str(folder)).files), given, evaluator_profile(SGLANG)), line


def test_element_types_the_loaded_model_and_what_a_class_computes_itself(tmp_path: Path) -> None:
    """The runner's kv_cache_dtype is a tensor type it computes, not the server's argument of that name ("auto");
    the config's torch_dtype is read as Hugging Face loads it; the loaded model is asked for its defaults only
    with one pipeline stage, and says so; a write of another object's attribute is not this class's."""
    config = {"architectures": ["A"], "num_hidden_layers": 61, "torch_dtype": "bfloat16"}
    evaluator, line = _runner(tmp_path / "bf16", config, page_size=16)
    dtype = evaluator.at("self.kv_cache_dtype", "eng/runner.py", line)
    assert isinstance(dtype, Known) and str(dtype.value) == "torch.bfloat16" and dtype.value.size == 2
    found = evaluator.at("self.cell()", "eng/runner.py", line)
    assert isinstance(found, Known) and found.value == 61 * 2 * 2, found
    assert any(evaluate.LOADED_ASSUMED in why and "end_layer" in why for why in found.why)
    assert evaluator.at("sized(runner)", "eng/runner.py", line).value == 2  # an annotated parameter's class
    assert evaluator.at("isinstance(self.kv_cache_dtype, str)", "eng/runner.py", line).value is False
    assert evaluator.at("isinstance(self.server_args.kv_cache_dtype, str)", "eng/runner.py", line).value is True
    assert evaluator.at("self.page_size", "eng/runner.py", line).value == 16  # a copy of the server's argument
    # a float32 checkpoint runs in float16 by this code; the server's fp8 argument picks fp8
    evaluator, _ = _runner(tmp_path / "f32", {**config, "torch_dtype": "float32"})
    assert evaluator.at("self.model_config.dtype", "eng/runner.py", line).value.name == "float16"  # type: ignore[union-attr]
    evaluator, _ = _runner(tmp_path / "f8", config, kv_cache_dtype="fp8_e4m3")
    assert evaluator.at("self.cell()", "eng/runner.py", line).value == 61 * 2 * 1
    # two pipeline stages: the loaded model holds some of the layers, which nothing before the run tells
    evaluator, _ = _runner(tmp_path / "pp", config, pp_size=2)
    found = evaluator.at("self.cell()", "eng/runner.py", line)
    assert isinstance(found, Unknown) and "the loaded model's end_layer" in found.needs


def test_a_registry_filled_by_module_level_calls_dataclass_objects_and_loops(tmp_path: Path) -> None:
    """A list a function appends its parameter to holds what the tree's module-level calls of that function pass;
    an object of a dataclass of the tree has the fields its construction gave and its class's defaults; a ``for``
    over a decided list runs its body (a ``return`` in it returns); ``isinstance`` against a class an object
    holds; a dataclass field without a default is what its constructions pass."""
    root = _package(tmp_path, "reg")
    (root / "registry.py").write_text(
        textwrap.dedent("""
        from dataclasses import dataclass, field


        @dataclass
        class Spec:
            config_class: type
            arch_names: list = field(default_factory=list)
            unwrap: bool = False
            weight: int = field(default=3)


        _REGISTRY = []


        def register(spec):
            _REGISTRY.append(spec)


        def spec_for(hf_config):
            for spec in _REGISTRY:
                if hf_config.architectures[0] in spec.arch_names:
                    return spec
            for spec in _REGISTRY:
                if isinstance(hf_config, spec.config_class):
                    return spec
            return None
        """)
    )
    (root / "linear.py").write_text(
        textwrap.dedent("""
        from reg.registry import Spec, register


        class LinearConfig(PretrainedConfig):
            model_type = "linear"


        register(Spec(config_class=LinearConfig, arch_names=["LinearForCausalLM"]))
        register(Spec(LinearConfig, ["LinearVL"], unwrap=True))
        """)
    )
    (root / "pool.py").write_text(
        textwrap.dedent("""
        from dataclasses import dataclass

        from reg.registry import spec_for


        @dataclass
        class Pool:
            is_linear: bool


        class Runner:
            def build(self):
                self.pool = Pool(is_linear=spec_for(self.hf_config) is not None)

        def sized(pool: Pool):
            return pool.is_linear
        """)
    )
    files = discover(str(tmp_path)).files
    profile = Profile(Words(frozenset({"hf_config"})))

    def evaluate_with(config: ModelConfig, text: str) -> Known | Unknown:
        return Evaluator(Code(files), Facts(model=config), profile).at(text, "reg/pool.py", 12)

    by_name = evaluate_with(_config("LinearVL"), "spec_for(self.hf_config)")
    assert isinstance(by_name, Known) and isinstance(by_name.value, evaluate.Instance), by_name
    assert evaluate_with(_config("LinearVL"), "spec_for(self.hf_config).unwrap").value is True
    assert evaluate_with(_config("LinearVL"), "spec_for(self.hf_config).weight").value == 3  # a field's default
    assert any("reg/linear.py:" in why for why in by_name.why)  # the registration that decided it
    # by the config's class (its model_type), when no name matches
    assert evaluate_with(_config("Other", model_type="linear"), "spec_for(self.hf_config).arch_names").value == [
        "LinearForCausalLM"
    ]
    assert evaluate_with(_config("Other", model_type="dense"), "spec_for(self.hf_config)").value is None
    assert evaluate_with(_config("Other", model_type="dense"), "sized(pool)").value is False  # constructions
    # the config's type unknown: the loop cannot decide, and says what would
    found = evaluate_with(ModelConfig({"architectures": ["Other"]}, True, "config.json"), "spec_for(self.hf_config)")
    assert isinstance(found, Unknown) and f"{CONFIG_KEY}model_type" in found.needs


CONFIGURED = {
    "dtypes.py": """
        import torch


        def configure(argument, model_dtype):
            if argument == "auto":
                return None, model_dtype
            return argument, torch.float8_e4m3fn
    """,
    "layers.py": """
        import msgspec


        class LayerInfo(msgspec.Struct, frozen=True, kw_only=True):
            start: int
            end: int
            count: int
            windows: int = 0


        def resolve_layers(*, model, config):
            count = config.num_hidden_layers
            end = getattr(model, "end_layer", count)
            return LayerInfo(start=getattr(model, "start_layer", 0), end=end, count=count)
    """,
    "runner.py": """
        import torch

        from pc import dtypes
        from pc.layers import resolve_layers
        from pc.configurator import Configurator


        class Runner:
            def configure(self):
                resolved, self.kv_cache_dtype = dtypes.configure(self.server_args.kv_cache_dtype, torch.bfloat16)
                self.layer_info = resolve_layers(model=self.model, config=self.hf_config)

            def build(self):
                self.kvc = Configurator(
                    kv_cache_dtype=self.kv_cache_dtype, layer_info=self.layer_info, hf_config=self.hf_config
                )
    """,
    "configurator.py": """
        from dataclasses import dataclass
        from typing import Any


        @dataclass
        class Configurator:
            kv_cache_dtype: Any
            layer_info: Any
            hf_config: Any
            is_window: bool = False

            def fused(self, name):
                if not self.is_window:
                    return None
                return 1

            def budget(self, free_gb):
                return int(free_gb * (1 << 30))

            def pools(self, budget_bytes):
                from pc.pools import make

                configurator = make(self)
                return configurator.sizes(budget_bytes, 1)
    """,
    "pools.py": """
        from abc import ABC

        import torch

        from pc.configurator import Configurator


        class Base(ABC):
            def sizes(self, available_bytes, page):
                return None


        class Default(Base):
            def __init__(self, kvc: Configurator):
                from pc.helpers import cell_dim

                size = torch._utils._element_size(kvc.kv_cache_dtype)
                self._cell = cell_dim(kvc.hf_config) * kvc.layer_info.count * size
                fused = kvc.fused("full")
                if fused is not None:
                    self._cell = fused

            def sizes(self, available_bytes, page):
                available_bytes = max(available_bytes - 0, 0)
                return available_bytes // self._cell // page * page


        class Windowed(Base):
            def __init__(self, kvc: Configurator):
                self._cell = kvc.window_cell


        def make(kvc: Configurator):
            if kvc.is_window:
                return Windowed(kvc)
            return Default(kvc)
    """,
    "helpers.py": """
        def cell_dim(config):
            return config.kv_lora_rank + config.qk_rope_head_dim
    """,
}


def test_objects_built_at_run_time_and_the_calls_that_reach_them(tmp_path: Path) -> None:
    """What 0.5.2x's pool sizing reads, on a small tree: an attribute set by unpacking a call's tuple
    (``resolved, self.x = module.f(...)``), a ``msgspec.Struct`` built by keywords, a function imported inside the
    function that calls it, a method of a parameter's annotated class, an object of an ordinary class (its
    attributes its constructor's writes, its methods those of its class or bases), ``isinstance`` against it."""
    root = _package(tmp_path, "pc")
    for name, text in CONFIGURED.items():
        (root / name).write_text(textwrap.dedent(text))
    config = ModelConfig({"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64}, True, "config.json")
    given = Facts(values={"kv_cache_dtype": "auto"}, defaults={"pp_size": 1}, model=config)
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), given, evaluator_profile(SGLANG))
    dtype = evaluator.at("self.kv_cache_dtype", "pc/runner.py", 15)
    assert isinstance(dtype, Known) and str(dtype.value) == "torch.bfloat16", dtype
    assert evaluator.at("self.layer_info.count", "pc/runner.py", 15).value == 61
    assert evaluator.at("self.layer_info.windows", "pc/runner.py", 15).value == 0  # the Struct's default
    assert evaluator.at("kvc.fused('full')", "pc/pools.py", 19).value is None  # kvc: Configurator, not a window
    cell = evaluator.at("self._cell", "pc/pools.py", 25)
    assert isinstance(cell, Known) and cell.value == (512 + 64) * 61 * 2, cell
    made = evaluator.at("make(kvc)", "pc/pools.py", 37)
    assert isinstance(made, Known) and isinstance(made.value, evaluate.Instance) and made.value.plain
    assert made.value.ref.node.name == "Default"
    assert evaluator.at("isinstance(make(kvc), Base)", "pc/pools.py", 37).value is True
    assert evaluator.at("isinstance(make(kvc), Windowed)", "pc/pools.py", 37).value is False
    assert evaluator.at("self.pools(70_272 * 3 + 5)", "pc/configurator.py", 22).value == 3
    # what the objects do not decide stays unknown, and says what would
    window = Facts(
        {"kv_cache_dtype": "auto", "is_window": True}, {}, {"pp_size": 1}, model=config, forced=frozenset({"is_window"})
    )
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), window, evaluator_profile(SGLANG))
    assert isinstance(evaluator.at("make(kvc)._cell", "pc/pools.py", 37), Unknown)


HANDED_ON = {
    "pools.py": """
        class Base:
            active: bool = False

            def __init__(self, size, page=1):
                self.size = size


        class Dense(Base):
            def __init__(self, size, page, dtype, active=False):
                super().__init__(size, page)
                self.active = active


        class Striped(Dense):
            def __init__(self, *args, stripe, **kwargs):
                super().__init__(*args, **kwargs)


        class Paged(Dense):
            def __init__(self, size, page, dtype, active):
                super().__init__(size, page, dtype, active)


        class Hybrid:
            def __init__(self, full):
                self.full = full

            @property
            def active(self):
                return self.full.active
    """,
    "build.py": """
        from hand.pools import Dense, Hybrid, Paged, Striped

        ENABLED = False


        def make():
            dense = Dense(8, 1, "bf16", active=ENABLED)
            Striped(8, 1, "bf16", stripe=2, active=ENABLED)
            Paged(8, 1, "bf16", ENABLED)
            shared = dict(size=8, page=1, dtype="bf16")
            Dense(**shared)
            extra = {"size": 8, "page": 1}
            extra["active"] = ENABLED
            Dense(dtype="bf16", **extra)
            dense_of(4, active=ENABLED)
            return Hybrid(dense)


        def dense_of(size, active=False):
            return Dense(size, 1, "bf16", active=active)


        def read(pool):
            return pool.active
    """,
}


def _handed_on(tmp_path: Path, **replaced: str) -> Value:
    root = _package(tmp_path, "hand")
    for name, text in HANDED_ON.items():
        for old, new in replaced.items():
            text = text.replace(old, new)
        (root / name).write_text(textwrap.dedent(text))
    line = textwrap.dedent(HANDED_ON["build.py"]).splitlines().index("    return pool.active") + 1
    return Evaluator(Code(discover(str(tmp_path)).files), Facts()).at("pool.active", "hand/build.py", line)


def test_an_attribute_every_write_agrees_on_through_constructors_that_hand_it_on(tmp_path: Path) -> None:
    """``pool.active`` on an object of no known class is what every write of it agrees on: a class default, a
    constructor's parameter whose value comes from the constructions (by keyword, by position, through a
    subclass's ``super().__init__`` handing on its own parameter or its ``*args``/``**kwargs``; a base whose
    ``__init__`` takes no such parameter is passed nothing), and a property that hands the read on to another
    pool's ``active`` (one of the other writes' values, not a value of its own)."""
    found = _handed_on(tmp_path)
    assert isinstance(found, Known) and found.value is False, found


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('Paged(8, 1, "bf16", ENABLED)', 'Paged(8, 1, "bf16", True)'),  # by position, through a subclass
        ("stripe=2, active=ENABLED", "stripe=2, active=True"),  # through **kwargs
        ('"bf16", stripe=2, active=ENABLED', '"bf16", True, stripe=2'),  # through *args, by position
        ("return self.full.active", "return (self.full.active,)"),  # a tuple holding it is a value of its own
        ("return self.full.active", "return not self.full.active"),
        ('extra["active"] = ENABLED', 'extra["active"] = True'),  # a key of a dict the function fills
        ('shared = dict(size=8, page=1, dtype="bf16")', 'shared = dict(size=8, page=1, dtype="bf16", active=1)'),
        ("shared = dict(", "shared = make_kwargs("),  # a dict built otherwise: what it holds is not known
        ("dense_of(4, active=ENABLED)", "dense_of(4, active=True)"),  # through a function's own parameter
        ("dense_of(4, active=ENABLED)", "dense_of(4, True)"),  # ... by position
        ("def dense_of(size, active=False):", "def dense_of(size, active=True):"),  # ... its default
        ("dense_of(4, active=ENABLED)", "pass"),  # a function no call of which is found: callers not known
    ],
)
def test_a_write_that_may_differ_leaves_it_unknown(tmp_path: Path, old: str, new: str) -> None:
    found = _handed_on(tmp_path, **{old: new})
    assert isinstance(found, Unknown), found


def test_writes_in_a_file_the_parse_allowance_refused_leave_the_attribute_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write must be read to say they agree: a file that writes it but was not parsed (the question's
    allowance spent) leaves it unknown, not decided by the writes that were read; a later question decides it."""
    root = _package(tmp_path, "hand")
    for name, text in HANDED_ON.items():
        (root / name).write_text(textwrap.dedent(text))
    (root / "other.py").write_text("class Other:\n    def __init__(self):\n        self.active = True\n")
    line = textwrap.dedent(HANDED_ON["build.py"]).splitlines().index("    return pool.active") + 1
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    found = evaluator.at("pool.active", "hand/build.py", line)
    assert isinstance(found, Unknown), found  # Other's write differs
    monkeypatch.setattr(evaluate.evaluator, "MAX_NEW_PARSED", 2)
    (root / "other.py").write_text("class Other:\n    def __init__(self):\n        self.active = False\n")
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    assert isinstance(evaluator.at("pool.active", "hand/build.py", line), Unknown)  # not every file read
    monkeypatch.setattr(evaluate.evaluator, "MAX_NEW_PARSED", 50)
    found = evaluator.at("pool.active", "hand/build.py", line)
    assert isinstance(found, Known) and found.value is False, found


def test_what_the_parse_allowance_left_undecided_is_worked_out_again_by_a_later_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One question may parse only so many new files; what it could not decide for want of one is not
    remembered as undecided: the next question, with an allowance of its own, decides it (answers do not
    depend on which question came first)."""
    root = _package(tmp_path, "memo")
    (root / "m0.py").write_text("from memo.m1 import A\n\nV = A\n")
    (root / "m1.py").write_text("from memo.m2 import B\n\nA = B + 1\n")
    (root / "m2.py").write_text("from memo.m3 import C\n\nB = C + 1\n")
    (root / "m3.py").write_text("C = 1\n")
    monkeypatch.setattr(evaluate.evaluator, "MAX_NEW_PARSED", 2)
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    assert isinstance(evaluator.at("V", "memo/m0.py", 3), Unknown)  # m0 and m1 parsed, m2 refused
    found = evaluator.at("V", "memo/m0.py", 3)
    assert isinstance(found, Known) and found.value == 3, found


# The evaluator's text filters and statement walk are faster spellings of a regular expression and of ast.walk;
# they must find exactly what those find.
_WRITTEN = r"(?:\.|^[ \t]+|def )%s\b(?:(?:\s*:[^=\n]*)?(?:\s*=[^=]|\()|\s*:[^=\n]*$)"
_LINE = st.lists(
    st.sampled_from(["self.n = 1", "  n: int", "\tn = 2", "def n(", "x.n == 3", "n = 4", "class  n", "defn", "nn.n"])
    | st.text(alphabet=" \t.:=(n\ndefclass", max_size=12),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_LINE)
def test_the_text_filters_find_what_their_one_pattern_finds(lines: list[str]) -> None:
    text = "\n".join(lines).encode()
    written = re.compile(_WRITTEN.encode() % b"n", re.M)
    assert evaluate._spelt(text, "n", evaluate._written_after("n"), evaluate._WRITTEN_BEFORE) == bool(
        written.search(text)
    )
    # a definition's name is on its keyword's line (the one pattern's \s+ also crossed a line: "class\n  self")
    defined = re.compile(rb"(?:def|class)[ \t\f\v\r]+n\b")
    assert evaluate._spelt(text, "n", evaluate._defined_after("n"), evaluate._DEFINED_BEFORE) == bool(
        defined.search(text)
    )


def test_the_statement_walk_is_ast_walk_without_expressions() -> None:
    source = textwrap.dedent(
        """
        import a
        class C:
            x: int = 1
            def f(self):
                from b import c
                try:
                    import d
                except E:
                    def g(): import e
                else:
                    pass
                finally:
                    while x:
                        import f
                    else:
                        lambda: 1
                match y:
                    case 1:
                        import h
                    case _:
                        class D: ...
        async def k():
            async with m: import i
            async for n in o: pass
        """
    )
    tree = ast.parse(source)
    kinds = (ast.mod, ast.stmt, ast.ExceptHandler, ast.match_case)
    assert list(evaluate._walk_statements(tree)) == [n for n in ast.walk(tree) if isinstance(n, kinds)]


OPTIONAL = """
ENABLED = False


def size(budget, cap=None):
    tokens = budget // 2
    if cap is not None:
        tokens = min(tokens, cap)
    return tokens


def start():
    return size(100)


def resize():
    return size(50, cap=8)


def after_capture():
    if ENABLED:
        resize()
"""


def _optional(tmp_path: Path, text: str) -> Value:
    root = _package(tmp_path, "opt")
    (root / "sizing.py").write_text(text)
    line = text.splitlines().index("    if cap is not None:") + 1
    return Evaluator(Code(discover(str(tmp_path)).files), Facts()).at("cap is not None", "opt/sizing.py", line)


def test_an_optional_parameter_no_call_the_run_makes_passes_is_its_default(tmp_path: Path) -> None:
    """``cap`` is passed only by a call that never runs (its function's one caller is under a condition false
    for the run, two functions up): it is its default, and says so."""
    found = _optional(tmp_path, OPTIONAL)
    assert isinstance(found, Known) and found.value is False, found
    assert any("cap passed by no call the run makes (1 that pass it do not run): its default" in w for w in found.why)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("ENABLED = False", "ENABLED = True"),  # the call that passes it runs
        ("ENABLED = False", "ENABLED = read()"),  # ... or may
        ("    return size(100)", "    return size(100, 4)"),  # a call that runs passes it by position
        ("    if ENABLED:\n        resize()", "    resize()"),  # no condition on the way up
    ],
)
def test_an_optional_parameter_a_call_may_pass_stays_unknown(tmp_path: Path, old: str, new: str) -> None:
    text = OPTIONAL.replace(old, new)
    assert text != OPTIONAL
    assert isinstance(_optional(tmp_path, text), Unknown)


def test_an_optional_parameter_only_calls_that_do_not_run_pass_is_its_default(tmp_path: Path) -> None:
    found = _optional(tmp_path, OPTIONAL.replace("    return size(100)", "    return 0"))
    assert isinstance(found, Known) and found.value is False, found


def test_an_optional_parameter_of_a_function_nothing_calls_stays_unknown(tmp_path: Path) -> None:
    text = OPTIONAL.replace("    return size(100)", "    return 0").replace("    return size(50, cap=8)", "    pass")
    assert isinstance(_optional(tmp_path, text), Unknown)


SAME = """
class Sizer:
    def constrain(self, tokens):
        limit = read_limit()
        if LIMITED:
            tokens = min(tokens, limit)
        return tokens

    def size(self, budget):
        config = plan(budget)
        kept = self.constrain(config.tokens)
        if kept != config.tokens:
            return replan(kept)
        return config

LIMITED = False
"""


def _same_value(tmp_path: Path, text: str, condition: str = "kept != config.tokens") -> Value:
    """*condition* at the ``if`` of ``Sizer.size``: ``plan`` and ``read_limit`` are outside the tree (undecided)."""
    root = tmp_path / "same"
    root.mkdir(exist_ok=True)
    (root / "__init__.py").write_text("")
    (root / "sizing.py").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith("if kept"))
    return Evaluator(Code(discover(str(tmp_path)).files), Facts()).at(condition, "same/sizing.py", line)


def test_an_undecided_value_compared_with_itself_is_decided(tmp_path: Path) -> None:
    """``config.tokens`` is not known (``plan`` is not in the tree), but ``constrain`` hands it back unchanged
    for the run (LIMITED is false): ``kept != config.tokens`` is false whatever the value."""
    found = _same_value(tmp_path, SAME)
    assert isinstance(found, Known) and found.value is False, found
    assert found.why == ("kept holding config.tokens unchanged, whatever its value",)
    assert isinstance(_same_value(tmp_path, SAME, "kept == config.tokens"), Known)
    assert isinstance(_same_value(tmp_path, SAME, "kept < config.tokens"), Unknown)  # ordering needs the value


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("LIMITED = False", "LIMITED = True"),  # the constraint applies: another value
        ("LIMITED = False", "LIMITED = read()"),  # ... or may
        ("        kept = self.constrain(config.tokens)", "        kept = self.constrain(config.tokens)\n"
         "        config.tokens = 0"),  # the object changed after the read
        ("        kept = self.constrain(config.tokens)", "        kept = self.constrain(config.tokens)\n"
         "        shrink(config)"),  # ... or may have, by a call it is passed to
        ("        kept = self.constrain(config.tokens)", "        kept = self.constrain(config.tokens)\n"
         "        config.shrink()"),  # ... or called on
        ("        kept = self.constrain(config.tokens)", "        kept = self.constrain(config.tokens)\n"
         "        other = config\n        other.tokens = 1"),  # ... or through another name for it
        ("        kept = self.constrain(config.tokens)", "        kept = self.constrain(config.tokens)\n"
         "        config = plan(budget)"),  # the name is bound again: another value
        ("LIMITED = False", "LIMITED = False\n\n\ndef tokens():\n    return 1"),  # a function of that name: a property
    ],
)  # fmt: skip
def test_a_value_that_may_have_changed_is_not_taken_for_itself(tmp_path: Path, old: str, new: str) -> None:
    text = SAME.replace(old, new)
    assert text != SAME
    assert isinstance(_same_value(tmp_path, text), Unknown)


def test_without_the_model_what_its_config_decides_asks_for_the_config(tmp_path: Path) -> None:
    """No model known (a log without its weights line): a check of the config's architecture, through
    ``isinstance(config, dict)`` as 0.5.23's ``_hf_arch`` reads it, needs the model's config, not the check's text."""
    root = tmp_path / "noconf"
    root.mkdir()
    (root / "__init__.py").write_text("")
    text = (
        "def arch(config):\n"
        "    is_dict = isinstance(config, dict)\n"
        "    names = config.get('architectures') if is_dict else getattr(config, 'architectures', None)\n"
        "    return names[0] if names else None\n\n\n"
        "class Runner:\n"
        "    def size(self):\n"
        "        if arch(self.model_config.hf_config) == 'V4':\n"
        "            return 1\n"
    )
    (root / "runner.py").write_text(text)
    profile = Profile(Words(frozenset({"hf_config"})), lambda name, path, line: None)
    found = Evaluator(Code(discover(str(tmp_path)).files), Facts(), profile).at(
        "arch(self.model_config.hf_config) == 'V4'", "noconf/runner.py", 9
    )
    assert isinstance(found, Unknown) and found.needs == (f"{CONFIG_KEY}architectures",), found
    known = Evaluator(Code(discover(str(tmp_path)).files), Facts(model=_config("V4")), profile).at(
        "arch(self.model_config.hf_config) == 'V4'", "noconf/runner.py", 9
    )
    assert isinstance(known, Known) and known.value is True, known


def test_what_the_program_would_raise_is_unknown_and_the_evaluators_own_error_goes_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operation that fails as the program would (``None + 1``, ``{}["k"]``, ``int("x")``, a spread of a
    number, an unhashable key, a method a value lacks) is unknown; an exception of the evaluator's own code is
    never taken for one: it goes up (an internal error for the user, a failure here)."""
    root = _package(tmp_path, "raises")
    (root / "m.py").write_text(
        "N = None\nD = {}\nA = N + 1\nB = D['k']\nC = int('x')\nE = [*3]\nF = {[1]: 2}\nG = 1 / 0\nH = -'s'\n"
        "M = [3]\nM.append(1)\nI = 3\nI.append(1)\nOK = len('abc')\n"
    )
    evaluator = Evaluator(Code(discover(str(tmp_path)).files), Facts())
    assert evaluator.at("OK", "raises/m.py", 14).value == 3  # the module runs on past each failure
    assert evaluator.at("M", "raises/m.py", 14).value == [3, 1]
    for name in ("A", "B", "C", "E", "F", "G", "H", "I"):
        assert isinstance(evaluator.at(name, "raises/m.py", 14), Unknown), name

    def broken(self: Evaluator, name: str, scope: object) -> Value:
        raise KeyError("the evaluator's own bug")

    monkeypatch.setattr(Evaluator, "_name", broken)
    with pytest.raises(KeyError, match="own bug"):
        Evaluator(Code(discover(str(tmp_path)).files), Facts()).at("OK", "raises/m.py", 14)


def test_the_dispatch_tables_hold_the_rooms_handlers_not_their_declarations() -> None:
    """A table entry spelt ``Expressions._call`` would be Memo's abstract declaration (a call that answers None);
    another room's handler is reached through ``self``."""
    from sgtrace.analyses.evaluate.expressions import EXPRESSIONS
    from sgtrace.analyses.evaluate.statements import STATEMENTS

    for handler in (*EXPRESSIONS.values(), *STATEMENTS.values()):
        assert not getattr(handler, "__isabstractmethod__", False), handler
