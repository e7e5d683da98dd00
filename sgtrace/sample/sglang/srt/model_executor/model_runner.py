# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Runs the forward passes of one model replica on one rank."""

from __future__ import annotations

import logging
from typing import Optional

import torch

from sglang.srt.configs.model_config import ModelConfig
from sglang.srt.model_executor.model_runner_kv_cache_mixin import (
    ModelRunnerKVCacheMixin,
)
from sglang.srt.server_args import ServerArgs
from sglang.srt.utils import get_available_gpu_memory

logger = logging.getLogger(__name__)


class ModelRunner(ModelRunnerKVCacheMixin):
    """Owns the weights and the KV cache of one rank."""

    def __init__(
        self,
        model_config: ModelConfig,
        mem_fraction_static: float,
        gpu_id: int,
        tp_rank: int,
        tp_size: int,
        pp_rank: int,
        pp_size: int,
        server_args: ServerArgs,
        is_draft_worker: bool = False,
    ):
        self.mem_fraction_static = mem_fraction_static
        self.model_config = model_config
        self.device = server_args.device
        self.gpu_id = gpu_id
        self.tp_rank = tp_rank
        self.tp_size = tp_size
        self.pp_rank = pp_rank
        self.pp_size = pp_size
        self.server_args = server_args
        self.is_draft_worker = is_draft_worker
        self.use_speculative = server_args.speculative_algorithm is not None
        self.page_size = server_args.page_size
        self.is_hybrid_swa = model_config.sliding_window_size is not None
        self.kv_cache_dtype = torch.bfloat16
        self.forward_stream: Optional[torch.cuda.Stream] = None

        # Split the layers between pipeline stages.
        per_stage = model_config.num_hidden_layers // pp_size
        self.start_layer = pp_rank * per_stage
        self.end_layer = self.start_layer + per_stage
        self.num_effective_layers = self.end_layer - self.start_layer

        self.initialize()

    def initialize(self):
        min_per_gpu_memory = self.init_torch_distributed()
        self.load_model()
        self.init_memory_pool(min_per_gpu_memory)
        self.forward_stream = torch.cuda.Stream()

    def init_torch_distributed(self) -> float:
        torch.cuda.set_device(self.gpu_id)
        return get_available_gpu_memory(
            self.device, self.gpu_id, distributed=self.tp_size * self.pp_size > 1
        )

    def load_model(self):
        logger.info("loading %s on gpu %d", self.server_args.model_path, self.gpu_id)
        self.model = torch.nn.Identity()
