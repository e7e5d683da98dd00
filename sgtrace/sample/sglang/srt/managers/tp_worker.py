# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Tensor-parallel worker: wraps a ModelRunner for the scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from sglang.srt.configs.model_config import ModelConfig
from sglang.srt.server_args import ServerArgs

if TYPE_CHECKING:
    from sglang.srt.model_executor.model_runner import ModelRunner


class TpModelWorker:
    def __init__(
        self,
        server_args: ServerArgs,
        gpu_id: int,
        tp_rank: int,
        pp_rank: int,
        is_draft_worker: bool = False,
    ):
        self.server_args = server_args
        self.gpu_id = gpu_id
        self.tp_rank = tp_rank
        self.pp_rank = pp_rank
        self.is_draft_worker = is_draft_worker
        self.model_config = ModelConfig.from_server_args(server_args)
        self._model_runner: Optional[ModelRunner] = None
        self._init_model_runner()

        self.device = self.model_runner.device
        self.random_seed = server_args.random_seed
        self.max_prefill_tokens = server_args.max_prefill_tokens
        self.max_running_requests = self.model_runner.req_to_token_pool.size - 1
        self.max_req_len = self.model_config.context_len - 1

    def _init_model_runner(self):
        from sglang.srt.model_executor.model_runner import ModelRunner

        self._model_runner = ModelRunner(
            model_config=self.model_config,
            mem_fraction_static=self.server_args.mem_fraction_static,
            gpu_id=self.gpu_id,
            tp_rank=self.tp_rank,
            tp_size=self.server_args.tp_size,
            pp_rank=self.pp_rank,
            pp_size=self.server_args.pp_size,
            server_args=self.server_args,
            is_draft_worker=self.is_draft_worker,
        )

    @property
    def model_runner(self) -> "ModelRunner":
        return self._model_runner

    def get_worker_info(self):
        return (
            self.model_runner.max_total_num_tokens,
            self.max_prefill_tokens,
            self.max_running_requests,
            self.max_req_len,
            (self.device, self.random_seed),
            self.model_runner.req_to_token_pool.size,
            self.model_runner.token_to_kv_pool.size,
        )
