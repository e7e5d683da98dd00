# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""The scheduler: admits requests against the KV-cache budget."""

from __future__ import annotations

import logging
from collections import deque

from sglang.srt.managers.scheduler_metrics_mixin import SchedulerMetricsMixin
from sglang.srt.managers.tp_worker import TpModelWorker
from sglang.srt.server_args import ServerArgs

logger = logging.getLogger(__name__)


class SchedulerRuntimeCheckerMixin:
    def check_memory(self):
        available = self.token_to_kv_pool_free_size()
        if available > self.max_total_num_tokens:
            raise ValueError(
                f"pool leak: {available=} > {self.max_total_num_tokens=}"
            )


class Scheduler(SchedulerMetricsMixin, SchedulerRuntimeCheckerMixin):
    def __init__(self, server_args: ServerArgs, gpu_id: int, tp_rank: int, pp_rank: int):
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.pp_size = server_args.pp_size
        self.page_size = server_args.page_size
        self.waiting_queue = deque()
        self.num_used_tokens = 0

        self.tp_worker = TpModelWorker(
            server_args=server_args,
            gpu_id=gpu_id,
            tp_rank=tp_rank,
            pp_rank=pp_rank,
        )

        # Get token and memory info from the model worker
        (
            self.max_total_num_tokens,
            self.max_prefill_tokens,
            self.max_running_requests,
            self.max_req_len,
            (self.device, self.random_seed),
            *_pool_sizes,
        ) = self.tp_worker.get_worker_info()
        logger.info(
            "max_total_num_tokens=%d, max_prefill_tokens=%d, max_running_requests=%d",
            self.max_total_num_tokens,
            self.max_prefill_tokens,
            self.max_running_requests,
        )
        self.init_metrics(tp_rank, pp_rank)

    def token_to_kv_pool_free_size(self) -> int:
        return self.max_total_num_tokens - self.num_used_tokens

    def can_admit(self, num_new_tokens: int) -> bool:
        budget = self.max_total_num_tokens - self.num_used_tokens
        return num_new_tokens <= min(budget, self.max_prefill_tokens)
