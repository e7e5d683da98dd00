"""The run's facts: the names given (``--set``, the log), the model's config, the environment; the engine's words."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sgtrace.analyses.evaluate.values import Known, Unknown, Value

#: How an unknown that the model's config.json decides is named: this prefix, then the key.
CONFIG_KEY = "config.json:"


@dataclass(frozen=True)
class ModelConfig:
    """A model's ``config.json`` as far as it is known: every key (*complete*), or only some (the log's).

    A config known only in part (the architecture a log names) is read with two stated assumptions, so that
    the checks a release makes for special checkpoints do not leave an ordinary run undecided: a key read
    with a default (``getattr(config, "k", d)``, ``hasattr``) is taken as absent, and ``model_type`` as the
    architecture's name spelt as Hugging Face spells model types (``DeepseekV3ForCausalLM``: ``deepseek_v3``).
    Each value so taken says that it is assumed and how ``--model-config`` reads it instead.
    """

    values: Mapping[str, Any]
    complete: bool
    #: Where it came from.
    origin: str

    def get(self, key: str, default: Any = ..., want: str = "") -> Value:
        if key not in self.values and key in _ALIASES and _ALIASES[key] in self.values:
            key = _ALIASES[key]  # Hugging Face's own alias (a config.json writes torch_dtype; transformers reads dtype)
        if key in self.values:
            value = self.values[key]
            return Known(_config(value, self) if isinstance(value, dict) else value, (f"{key} ({self.origin})",))
        if self.complete and default is not ...:
            return Known(default, (f"no {key} in {self.origin}",))
        if not self.complete:
            if default is not ...:
                return Known(default, (f"{key} assumed absent from the model's config.json ({ASSUMED})",))
            if key == "model_type" and (spelt := model_type_of(self.values.get("architectures"))):
                return Known(spelt, (f"model_type assumed {spelt!r} from the architecture's name ({ASSUMED})",))
        return Unknown((f"{CONFIG_KEY}{want or key}",))

    def has(self, key: str) -> Value:
        """``hasattr(config, key)``: known for a whole config; for one known in part, a key it does not show is
        assumed absent."""
        key = _ALIASES[key] if key not in self.values and _ALIASES.get(key) in self.values else key
        if key in self.values or self.complete:
            return Known(key in self.values, (f"{key} in {self.origin}",))
        return Known(False, (f"{key} assumed absent from the model's config.json ({ASSUMED})",))


def _config(value: dict[str, Any], parent: ModelConfig) -> ModelConfig:
    return ModelConfig(value, parent.complete, parent.origin)


#: Keys Hugging Face's configs answer for each other (transformers reads ``dtype`` where an older config.json wrote
#: ``torch_dtype``, and the other way).
_ALIASES = {"dtype": "torch_dtype", "torch_dtype": "dtype"}


#: How an assumption about a config known only in part says what would decide it instead.
ASSUMED = "only its architecture is known; --model-config reads it"


#: How a configuration class's model type taken from its name says so (the class extends one outside the tree).
CLASS_ASSUMED = "the tree does not declare it"


#: The words of an architecture's name that name its task, not its model (``...ForCausalLM``).
_TASK = re.compile(r"(?:For[A-Z]\w*|Model|LMHeadModel)$")


def model_type_of(architectures: Any) -> str | None:
    """The ``model_type`` Hugging Face's naming gives an architecture (``Qwen3MoeForCausalLM``: ``qwen3_moe``,
    ``KimiK25ForConditionalGeneration``: ``kimi_k25``): its name without the task, each capitalised word or run
    (or run of capitals, ``VL``) with the digits after it split off by ``_``, lower case; None without a name."""
    if not isinstance(architectures, (list, tuple)) or not architectures or not isinstance(architectures[0], str):
        return None
    stem = _TASK.sub("", architectures[0])
    if not stem:
        return None
    words = re.findall(r"[A-Z]{2,}(?![a-z])\d*|[A-Z][a-z]*\d*|\d+|[a-z]+\d*", stem)
    return "_".join(w.lower() for w in words) if words else None


@dataclass(frozen=True, slots=True)
class Dtype:
    """An element type of the engine's tensor library (``torch.bfloat16``): its name and its size in bytes."""

    module: str
    name: str
    size: int

    @property
    def itemsize(self) -> int:
        return self.size

    def __str__(self) -> str:
        return f"{self.module}.{self.name}"


#: How an assumption about the loaded model (which nothing reads before the server runs) says so.
LOADED_ASSUMED = "the loaded model is not read; one pipeline stage holds every layer"


@dataclass(frozen=True)
class Facts:
    """What the run tells: values by name with their origins, the model's config, environment variables."""

    #: Name -> value (``--set``, the log, the launch command...).
    values: Mapping[str, Any] = field(default_factory=dict)
    #: Name -> where its value came from ("the log" when not given).
    origins: Mapping[str, str] = field(default_factory=dict)
    #: The release's defaults for names the run did not give (ServerArgs' fields), with their origin.
    defaults: Mapping[str, Any] = field(default_factory=dict)
    defaults_origin: str = "the release's default"
    #: The model's configuration (from the log's architecture, or a config.json).
    model: ModelConfig | None = None
    #: ``--env NAME=VALUE``.
    env: Mapping[str, str] = field(default_factory=dict)
    #: Names whose given value wins over the code's own assignments (``--set``).
    forced: frozenset[str] = frozenset()

    def named(self, name: str) -> Value | None:
        if name in self.values:
            return Known(self.values[name], (f"{name} ({self.origins.get(name, 'the log')})",))
        if name in self.defaults:
            return Known(self.defaults[name], (f"{name} ({self.defaults_origin})",))
        return None


@dataclass(frozen=True)
class Words:
    """What an engine's code means beyond Python, that the evaluator must be told (see
    :mod:`sgtrace.analyses.profile`)."""

    #: Attribute names that hold the model's configuration (``hf_config``).
    model_config: frozenset[str] = frozenset()
    #: The tensor library's modules (``torch``), its element types by name with their sizes in bytes, and the
    #: functions that give a type's size (``_element_size``).
    tensor_modules: frozenset[str] = frozenset()
    dtypes: Mapping[str, int] = field(default_factory=dict)
    element_size: frozenset[str] = frozenset()
    #: Attributes that hold the loaded model (an object of the run, not of the tree), and the server argument
    #: and value under which what it is asked with a default is that default (one pipeline stage: every layer).
    loaded_model: frozenset[str] = frozenset()
    loaded_when: tuple[str, Any] = ("", None)
    #: Names of the objects that hold the server's arguments (``server_args``): what they hold is the run's.
    arguments: frozenset[str] = frozenset()


#: The engine's knowledge the evaluator asks for: its words, and the calls that stand for what the log shows.
@dataclass(frozen=True)
class Profile:
    words: Words = Words()
    #: Called name -> a value it stands for at the place it is called (a measurement the log shows), or None.
    observe: Callable[[str, str, int], Value | None] = lambda name, path, line: None


def _typed(values: Mapping[str, Any], profile: Words) -> dict[str, Any]:
    """A config's element types as the tensor library's (Hugging Face's configs turn ``"torch_dtype":
    "bfloat16"`` into ``torch.bfloat16`` when they load), in nested configs too."""
    module = min(profile.tensor_modules, default="")
    typed: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            value = _typed(value, profile)
        elif key in _ALIASES and isinstance(value, str) and value in profile.dtypes and module:
            value = Dtype(module, value, profile.dtypes[value])
        typed[key] = value
    return typed
