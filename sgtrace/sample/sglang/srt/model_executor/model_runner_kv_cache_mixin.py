# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""KV-cache sizing and allocation, split out of ModelRunner as a mixin."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import torch

from sglang.srt.mem_cache.memory_pool import (
    MHATokenToKVPool,
    ReqToTokenPool,
    SWAKVPool,
)
from sglang.srt.utils import get_available_gpu_memory, get_world_group

if TYPE_CHECKING:
    from sglang.srt.model_executor.model_runner import ModelRunner

logger = logging.getLogger(__name__)


class ModelRunnerKVCacheMixin:
    def get_cell_size_per_token(self: ModelRunner, num_layers: int) -> int:
        cfg = self.model_config
        elem_bytes = torch.finfo(self.kv_cache_dtype).bits // 8
        # K and V for every KV head of every layer
        return 2 * cfg.num_key_value_heads * cfg.head_dim * num_layers * elem_bytes

    def profile_max_num_token(self: ModelRunner, total_gpu_memory: int):
        available_gpu_memory = get_available_gpu_memory(
            self.device,
            self.gpu_id,
            distributed=get_world_group().world_size > 1,
            cpu_group=get_world_group().cpu_group,
        )
        if self.is_draft_worker:
            num_layers = getattr(
                self.model_config.hf_config, "num_nextn_predict_layers", 1
            )
        else:
            num_layers = self.num_effective_layers
        cell_size = self.get_cell_size_per_token(num_layers)

        rest_memory = available_gpu_memory - total_gpu_memory * (1 - self.mem_fraction_static)
        return int(rest_memory * (1 << 30)) // cell_size

    def set_num_tokens_hybrid_swa(self: ModelRunner):
        page_size = self.server_args.page_size
        ratio = self.server_args.swa_full_tokens_ratio
        n_full = len(self.model_config.full_attention_layer_ids)
        n_swa = len(self.model_config.swa_attention_layer_ids)

        # Same byte budget as if every layer held max_total_num_tokens cells:
        #   full * n_full + ratio * full * n_swa == max_total_num_tokens * (n_full + n_swa)
        budget = self.max_total_num_tokens * (n_full + n_swa)
        self.full_max_total_num_tokens = int(budget / (n_full + ratio * n_swa))
        self.swa_max_total_num_tokens = int(self.full_max_total_num_tokens * ratio)

        self.full_max_total_num_tokens = self.full_max_total_num_tokens // page_size * page_size
        self.swa_max_total_num_tokens = self.swa_max_total_num_tokens // page_size * page_size
        self.max_total_num_tokens = self.full_max_total_num_tokens
        logger.info(
            "hybrid SWA pool: full=%d swa=%d",
            self.full_max_total_num_tokens,
            self.swa_max_total_num_tokens,
        )

    def init_memory_pool(self: ModelRunner, total_gpu_memory: int):
        server_args = self.server_args
        max_num_reqs = server_args.max_running_requests
        max_total_tokens = server_args.max_total_tokens
        self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)

        if max_num_reqs is None:
            per_ctx = self.max_total_num_tokens / self.model_config.context_len
            max_num_reqs = min(max(int(per_ctx * 512), 2048), 4096)

        # CI runs squeeze the cache to exercise eviction paths.
        if small_kv_size := os.getenv("SGLANG_CI_SMALL_KV_SIZE"):
            self.max_total_num_tokens = int(small_kv_size)

        if max_total_tokens is not None:
            if max_total_tokens > self.max_total_num_tokens:
                logger.warning(
                    "max_total_tokens=%d exceeds the profiled %d; keeping the profiled value",
                    max_total_tokens,
                    self.max_total_num_tokens,
                )
            self.max_total_num_tokens = min(self.max_total_num_tokens, max_total_tokens)

        self.max_total_num_tokens = (
            self.max_total_num_tokens
            // self.server_args.page_size
            * self.server_args.page_size
        )

        # Stages hold different layer counts, so agree on the smallest pool.
        if self.pp_size > 1:
            tensor = torch.tensor(self.max_total_num_tokens, dtype=torch.int64)
            torch.distributed.all_reduce(
                tensor,
                op=torch.distributed.ReduceOp.MIN,
                group=get_world_group().cpu_group,
            )
            self.max_total_num_tokens = tensor.item()

        if self.use_speculative and self.is_draft_worker:
            self.max_total_num_tokens = self.server_args.draft_runner_cache_size

        if self.is_hybrid_swa:
            self.set_num_tokens_hybrid_swa()

        if self.use_speculative and not self.is_draft_worker:
            # The draft worker sizes its own cache from the target's final value.
            self.server_args.draft_runner_cache_size = self.max_total_num_tokens

        if self.max_total_num_tokens <= 0:
            raise RuntimeError(
                "Not enough memory for the KV cache; raise --mem-fraction-static "
                f"(now {self.server_args.mem_fraction_static=})"
            )

        self.req_to_token_pool = ReqToTokenPool(
            size=max_num_reqs + 1,
            max_context_len=self.model_config.context_len + 4,
            device=self.device,
        )
        pool_kwargs = dict(
            dtype=self.kv_cache_dtype,
            head_num=self.model_config.num_key_value_heads,
            head_dim=self.model_config.head_dim,
            layer_num=self.num_effective_layers,
            device=self.device,
        )
        if self.is_hybrid_swa:
            self.token_to_kv_pool = SWAKVPool(
                size=self.full_max_total_num_tokens,
                size_swa=self.swa_max_total_num_tokens,
                page_size=self.page_size,
                **pool_kwargs,
            )
        else:
            self.token_to_kv_pool = MHATokenToKVPool(
                self.max_total_num_tokens,
                page_size=self.page_size,
                **pool_kwargs,
            )
