# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Shape of the served model, as far as the memory planner needs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional


@dataclass
class ModelConfig:
    hf_config: Any
    context_len: int
    num_hidden_layers: int
    num_key_value_heads: int
    head_dim: int
    sliding_window_size: Optional[int] = None
    full_attention_layer_ids: List[int] = field(default_factory=list)
    swa_attention_layer_ids: List[int] = field(default_factory=list)

    @classmethod
    def from_server_args(cls, server_args) -> "ModelConfig":
        hf = load_hf_config(server_args.model_path)
        window = getattr(hf, "sliding_window", None)
        layers = hf.num_hidden_layers
        swa_ids = [i for i in range(layers) if window is not None and i % 4 != 3]
        return cls(
            hf_config=hf,
            context_len=hf.max_position_embeddings,
            num_hidden_layers=layers,
            num_key_value_heads=hf.num_key_value_heads,
            head_dim=hf.hidden_size // hf.num_attention_heads,
            sliding_window_size=window,
            full_attention_layer_ids=[i for i in range(layers) if i not in swa_ids],
            swa_attention_layer_ids=swa_ids,
        )


def load_hf_config(model_path: str):
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(model_path)
