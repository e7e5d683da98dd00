# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Launch arguments of the sample server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class ServerArgs:
    model_path: str = "models/tiny"
    device: str = "cuda"
    random_seed: int = 42

    # Memory and scheduling
    mem_fraction_static: Optional[float] = None
    max_total_tokens: Optional[int] = None
    max_prefill_tokens: int = 8192
    max_running_requests: Optional[int] = None
    page_size: int = 1
    swa_full_tokens_ratio: float = 0.8
    draft_runner_cache_size: Optional[int] = None

    # Parallelism
    tp_size: int = 1
    pp_size: int = 1

    # Speculative decoding
    speculative_algorithm: Optional[str] = None

    def __post_init__(self):
        if self.mem_fraction_static is None:
            self.mem_fraction_static = self._pick_mem_fraction_static()

    def _pick_mem_fraction_static(self) -> float:
        # Leave more headroom for activations when the model is split up.
        headroom = 0.12 + 0.01 * (self.tp_size - 1)
        if self.pp_size > 1:
            headroom += 0.04
        if self.speculative_algorithm is not None:
            headroom += 0.03
        return round(1.0 - headroom, 3)


_global_server_args: Optional[ServerArgs] = None


def set_global_server_args(server_args: ServerArgs) -> None:
    global _global_server_args
    _global_server_args = server_args


def get_global_server_args() -> ServerArgs:
    if _global_server_args is None:
        raise ValueError("server args are not initialised yet")
    return _global_server_args
