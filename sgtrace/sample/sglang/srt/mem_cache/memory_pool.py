# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Token and request pools backing the KV cache."""

from __future__ import annotations

import torch


class ReqToTokenPool:
    """Maps a request slot to the KV-cache locations of its tokens."""

    def __init__(self, size: int, max_context_len: int, device: str):
        self.size = size
        self.max_context_len = max_context_len
        self.req_to_token = torch.zeros(
            (size, max_context_len), dtype=torch.int32, device=device
        )
        self.free_slots = list(range(size))


class MHATokenToKVPool:
    """One K and one V buffer per layer, `size` token cells each."""

    def __init__(
        self,
        size: int,
        page_size: int,
        dtype: torch.dtype,
        head_num: int,
        head_dim: int,
        layer_num: int,
        device: str,
    ):
        self.size = size
        self.page_size = page_size
        shape = (size + page_size, head_num, head_dim)
        self.k_buffer = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layer_num)]
        self.v_buffer = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layer_num)]


class SWAKVPool:
    """A full-attention pool and a sliding-window pool side by side."""

    def __init__(self, size: int, size_swa: int, page_size: int, **pool_kwargs):
        self.size = size
        self.size_swa = size_swa
        self.full_pool = MHATokenToKVPool(size, page_size, **pool_kwargs)
        self.swa_pool = MHATokenToKVPool(size_swa, page_size, **pool_kwargs)
