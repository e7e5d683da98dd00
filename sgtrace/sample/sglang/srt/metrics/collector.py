# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Prometheus export of scheduler statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Union


@dataclass
class SchedulerStats:
    num_running_reqs: int = 0
    num_used_tokens: int = 0
    token_usage: float = 0.0
    max_total_num_tokens: int = 0


class SchedulerMetricsCollector:
    def __init__(self, labels: Dict[str, str]) -> None:
        # Imported here so that the metrics directory is set up first.
        from prometheus_client import Gauge

        self.labels = labels
        self.num_running_reqs = Gauge(
            name="sglang:num_running_reqs",
            documentation="Requests currently running.",
            labelnames=labels.keys(),
            multiprocess_mode="mostrecent",
        )
        self.token_usage = Gauge(
            name="sglang:token_usage",
            documentation="Fraction of the KV cache in use.",
            labelnames=labels.keys(),
            multiprocess_mode="mostrecent",
        )
        self.max_total_num_tokens = Gauge(
            name="sglang:max_total_num_tokens",
            documentation="Capacity of the KV cache, in tokens.",
            labelnames=labels.keys(),
            multiprocess_mode="mostrecent",
        )

    def _set_gauge(self, gauge, value: Union[int, float]) -> None:
        gauge.labels(**self.labels).set(value)

    def log_stats(self, stats: SchedulerStats) -> None:
        self._set_gauge(self.num_running_reqs, stats.num_running_reqs)
        self._set_gauge(self.token_usage, stats.token_usage)
        self._set_gauge(self.max_total_num_tokens, stats.max_total_num_tokens)
