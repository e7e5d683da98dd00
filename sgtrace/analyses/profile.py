"""What an engine's code means, where Python alone does not say: the one place sgtrace's analyses know SGLang.

The evaluator (:mod:`sgtrace.analyses.evaluate`) knows Python; explain knows
the log's quantities. Between them, a profile says which attributes hold the
model's configuration (its ``config.json``), and which calls measure memory
the log shows. Nothing here names a file, a line or a class of a release: only
the words the engine's code uses for these things, in every release sgtrace
reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sgtrace.analyses.evaluate import Words

#: PyTorch's element types and their sizes in bytes (``torch.finfo``/``iinfo`` bits / 8; the packed 4-bit
#: ``float4_e2m1fn_x2`` holds two values in one byte).
TORCH_DTYPES: Mapping[str, int] = {
    "float64": 8, "double": 8, "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2,
    "float8_e4m3fn": 1, "float8_e4m3fnuz": 1, "float8_e5m2": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
    "float4_e2m1fn_x2": 1, "int64": 8, "long": 8, "int32": 4, "int": 4, "int16": 2, "short": 2, "int8": 1,
    "uint8": 1, "bool": 1,
}  # fmt: skip


@dataclass(frozen=True)
class EngineProfile:
    """An engine's words for what the evaluator must be told."""

    #: Its name.
    name: str
    #: What its code means beyond Python: the attributes that hold the model's Hugging Face configuration (its
    #: ``config.json``), its tensor library, the loaded model, the holders of the server's arguments.
    words: Words
    #: Calls that return the GPU memory free at the moment they run (GB): a measurement the log shows.
    measures_free_memory: frozenset[str]


SGLANG = EngineProfile(
    "sglang",
    Words(
        model_config=frozenset({"hf_config", "hf_text_config"}),
        tensor_modules=frozenset({"torch"}),
        dtypes=TORCH_DTYPES,
        element_size=frozenset({"_element_size"}),
        loaded_model=frozenset({"model"}),
        loaded_when=("pp_size", 1),
        arguments=frozenset({"server_args"}),
    ),
    measures_free_memory=frozenset({"get_available_gpu_memory"}),
)
