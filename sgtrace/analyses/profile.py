"""What an engine's code means to the evaluator, where Python alone does not say.

The evaluator (:mod:`sgtrace.analyses.evaluate`) knows Python; explain knows
the log's quantities. Between them, a profile says which attributes hold the
model's configuration (its ``config.json``), its tensor library and its
loaded model; the words the slicer reads too (the holders of the server's
arguments, the calls that measure memory the log shows) are the engine's
(:mod:`sgtrace.engine`), taken from there. Nothing here names a file, a line
or a class of a release: only the words the engine's code uses for these
things, in every release sgtrace reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sgtrace.analyses.evaluate import Words
from sgtrace.engine import SGLANG as ENGINE
from sgtrace.engine import Engine

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
    """An engine's words for what the evaluator must be told (the slicer's read from the same :class:`Engine`)."""

    #: Its words for its configuration and its measurements, as the slicer reads them too.
    engine: Engine
    #: What its code means beyond Python: the attributes that hold the model's Hugging Face configuration (its
    #: ``config.json``), its tensor library, the loaded model, the holders of the server's arguments.
    words: Words

    @property
    def name(self) -> str:
        """The engine's name."""
        return self.engine.name

    @property
    def measures_free_memory(self) -> frozenset[str]:
        """Calls that return the GPU memory free at the moment they run (GB): a measurement the log shows."""
        return self.engine.measures_free_memory


SGLANG = EngineProfile(
    ENGINE,
    Words(
        model_config=frozenset({"hf_config", "hf_text_config"}),
        tensor_modules=frozenset({"torch"}),
        dtypes=TORCH_DTYPES,
        element_size=frozenset({"_element_size"}),
        loaded_model=frozenset({"model"}),
        loaded_when=("pp_size", 1),
        arguments=frozenset(ENGINE.arguments),
    ),
)
