# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Scheduler statistics and their export to the metrics collector."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from sglang.srt.metrics.collector import SchedulerMetricsCollector, SchedulerStats

if TYPE_CHECKING:
    from sglang.srt.managers.scheduler import Scheduler

logger = logging.getLogger(__name__)


class SchedulerMetricsMixin:
    def init_metrics(self: Scheduler, tp_rank: int, pp_rank: int):
        self.last_stats_tic = time.perf_counter()
        self.stats = SchedulerStats()
        self.metrics_collector = SchedulerMetricsCollector(
            labels={"tp_rank": str(tp_rank), "pp_rank": str(pp_rank)}
        )

    def token_usage(self: Scheduler) -> float:
        if self.max_total_num_tokens <= 0:
            return 0.0
        return self.num_used_tokens / self.max_total_num_tokens

    def log_stats(self: Scheduler):
        usage = self.token_usage()
        logger.info(
            "#token: %d, token usage: %.2f, capacity: %d",
            self.num_used_tokens,
            usage,
            self.max_total_num_tokens,
        )
        self.stats.num_used_tokens = self.num_used_tokens
        self.stats.token_usage = round(usage, 2)
        self.stats.max_total_num_tokens = self.max_total_num_tokens
        self.metrics_collector.log_stats(self.stats)
        self.last_stats_tic = time.perf_counter()
