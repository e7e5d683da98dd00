"""What an engine's code means, where Python alone does not say: the one place sgtrace's analyses know SGLang.

The evaluator (:mod:`sgtrace.analyses.evaluate`) knows Python; explain knows
the log's quantities. Between them, a profile says which attributes hold the
model's configuration (its ``config.json``), and which calls measure memory
the log shows. Nothing here names a file, a line or a class of a release: only
the words the engine's code uses for these things, in every release sgtrace
reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineProfile:
    """An engine's words for what the evaluator must be told."""

    #: Its name.
    name: str
    #: Attributes that hold the model's Hugging Face configuration (its ``config.json``).
    model_config: frozenset[str]
    #: Calls that return the GPU memory free at the moment they run (GB): a measurement the log shows.
    measures_free_memory: frozenset[str]


SGLANG = EngineProfile(
    "sglang",
    model_config=frozenset({"hf_config", "hf_text_config"}),
    measures_free_memory=frozenset({"get_available_gpu_memory"}),
)
