# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Newer-style pool sizing: configurator objects producing frozen configs."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Optional

import msgspec
import torch

from sglang.srt.configs.model_config import ModelConfig
from sglang.srt.server_args import ServerArgs, get_global_server_args

logger = logging.getLogger(__name__)


@dataclass
class MemoryPoolConfig:
    """Resolved pool sizes, shared by the target and the draft worker."""

    max_total_num_tokens: int
    max_running_requests: Optional[int] = None
    full_max_total_num_tokens: Optional[int] = None
    swa_max_total_num_tokens: Optional[int] = None

    def __post_init__(self):
        if self.max_total_num_tokens <= 0:
            raise RuntimeError("KV cache would be empty; raise --mem-fraction-static")


class KVCacheConfigResult(msgspec.Struct, frozen=True, kw_only=True):
    max_total_num_tokens: int
    max_running_requests: int
    full_max_total_num_tokens: Optional[int]
    swa_max_total_num_tokens: Optional[int]
    memory_pool_config: MemoryPoolConfig


class MemoryPoolConfigurator:
    """Turns a byte budget, or a token cap, into pool sizes."""

    def calculate_pool_sizes(self, available_bytes: int, page_size: int) -> MemoryPoolConfig:
        raise NotImplementedError

    def calculate_pool_sizes_from_max_tokens(
        self, max_total_num_tokens: int, page_size: int
    ) -> MemoryPoolConfig:
        raise NotImplementedError


class DefaultPoolConfigurator(MemoryPoolConfigurator):
    def __init__(self, kvc: KVCacheConfigurator):
        self._cell_size = kvc.cell_size_per_token(kvc.model_config.num_hidden_layers)

    def calculate_pool_sizes(self, available_bytes: int, page_size: int) -> MemoryPoolConfig:
        return self.calculate_pool_sizes_from_max_tokens(
            available_bytes // self._cell_size, page_size
        )

    def calculate_pool_sizes_from_max_tokens(
        self, max_total_num_tokens: int, page_size: int
    ) -> MemoryPoolConfig:
        max_total_num_tokens = max_total_num_tokens // page_size * page_size
        return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)


class HybridSWAPoolConfigurator(MemoryPoolConfigurator):
    def __init__(self, kvc: KVCacheConfigurator):
        cfg = kvc.model_config
        self._ratio = kvc.server_args.swa_full_tokens_ratio
        self._full_cell = kvc.cell_size_per_token(len(cfg.full_attention_layer_ids))
        self._swa_cell = kvc.cell_size_per_token(len(cfg.swa_attention_layer_ids))

    def calculate_pool_sizes(self, available_bytes: int, page_size: int) -> MemoryPoolConfig:
        per_full_token = self._full_cell + self._ratio * self._swa_cell
        return self.calculate_pool_sizes_from_max_tokens(
            int(available_bytes / per_full_token), page_size
        )

    def calculate_pool_sizes_from_max_tokens(
        self, max_total_num_tokens: int, page_size: int
    ) -> MemoryPoolConfig:
        max_total_num_tokens = max_total_num_tokens // page_size * page_size
        swa_tokens = int(max_total_num_tokens * self._ratio) // page_size * page_size
        return MemoryPoolConfig(
            max_total_num_tokens=max_total_num_tokens,
            full_max_total_num_tokens=max_total_num_tokens,
            swa_max_total_num_tokens=swa_tokens,
        )


def create_memory_pool_configurator(
    kvc: KVCacheConfigurator,
) -> MemoryPoolConfigurator:
    if kvc.is_hybrid_swa:
        return HybridSWAPoolConfigurator(kvc)
    return DefaultPoolConfigurator(kvc)


@dataclass(kw_only=True)
class KVCacheConfigurator:
    server_args: ServerArgs
    model_config: ModelConfig
    kv_cache_dtype: torch.dtype
    page_size: int
    pp_size: int
    is_hybrid_swa: bool
    max_running_requests: int

    def cell_size_per_token(self, num_layers: int) -> int:
        elem_bytes = torch.finfo(self.kv_cache_dtype).bits // 8
        cfg = self.model_config
        return 2 * cfg.num_key_value_heads * cfg.head_dim * num_layers * elem_bytes

    def _apply_token_constraints(self, token_capacity: int) -> int:
        user_limit = get_global_server_args().max_total_tokens
        if user_limit is not None:
            if user_limit > token_capacity:
                logger.warning("max_total_tokens=%d is above the profiled %d", user_limit, token_capacity)
            token_capacity = min(token_capacity, user_limit)

        if self.pp_size > 1:
            tensor = torch.tensor(token_capacity, dtype=torch.int64)
            torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MIN)
            token_capacity = int(tensor.item())
        return token_capacity

    def configure(self, available_bytes: int) -> KVCacheConfigResult:
        configurator = create_memory_pool_configurator(self)
        config = configurator.calculate_pool_sizes(available_bytes, self.page_size)
        capped = self._apply_token_constraints(config.max_total_num_tokens)
        if capped != config.max_total_num_tokens:
            # Re-run so the sub-pools are re-derived and re-aligned.
            config = configurator.calculate_pool_sizes_from_max_tokens(capped, self.page_size)
        config = dataclasses.replace(config, max_running_requests=self.max_running_requests)

        return KVCacheConfigResult(
            max_total_num_tokens=config.max_total_num_tokens,
            max_running_requests=config.max_running_requests,
            full_max_total_num_tokens=config.full_max_total_num_tokens,
            swa_max_total_num_tokens=config.swa_max_total_num_tokens,
            memory_pool_config=config,
        )
