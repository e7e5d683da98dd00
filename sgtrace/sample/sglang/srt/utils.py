# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Device and process-group helpers."""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.distributed as dist


class WorldGroup:
    def __init__(self, world_size: int, cpu_group: Any):
        self.world_size = world_size
        self.cpu_group = cpu_group


_world_group: Optional[WorldGroup] = None


def get_world_group() -> WorldGroup:
    global _world_group
    if _world_group is None:
        size = dist.get_world_size() if dist.is_initialized() else 1
        _world_group = WorldGroup(size, dist.group.WORLD if size > 1 else None)
    return _world_group


def get_available_gpu_memory(
    device: str, gpu_id: int, distributed: bool = False, cpu_group: Any = None
) -> float:
    """Free memory of the device in GiB; the minimum over ranks if distributed."""
    if device != "cuda":
        raise ValueError(f"unsupported device {device}")
    torch.cuda.set_device(gpu_id)
    free_bytes, _total = torch.cuda.mem_get_info(gpu_id)
    free_gb = free_bytes / (1 << 30)
    if distributed:
        cell = torch.tensor(free_gb, dtype=torch.float32)
        dist.all_reduce(cell, op=dist.ReduceOp.MIN, group=cpu_group)
        free_gb = float(cell.item())
    return free_gb
