"""What a reviewer reads in the code of each upgrade: which caps are the same cap, which truly appear or vanish.

Read from the releases by hand (the reasons say what the code shows); the tests check ``diff``
against it and ``bench/diff_pairs.py`` measures the similarity threshold on it. Caps are named
``(path, line)`` in the release (the releases are pinned, so lines are facts of them).
"""

from __future__ import annotations

#: (old release, new release) of each upgrade the tests read.
UPGRADES = (("0.4.6", "0.5.2"), ("0.5.2", "0.5.9"), ("0.5.9", "0.5.23"))

_RUNNER = "sglang/srt/model_executor/model_runner.py"
_MIXIN = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
_CONFIGURATOR = "sglang/srt/mem_cache/kv_cache_configurator.py"
_POOLS = "sglang/srt/model_executor/pool_configurator.py"
_DECODE = "sglang/srt/disaggregation/decode.py"
_PREFILL = "sglang/srt/disaggregation/prefill.py"

Cap = tuple[str, int]

#: Old cap -> the new caps it may pair with. Where the new code repeats it identically there are
#: several; the one paired is a pair, the others are added (the new code holds them all).
PAIRS: dict[tuple[str, str], dict[Cap, frozenset[Cap]]] = {
    ("0.4.6", "0.5.2"): {},  # the six caps of 0.4.6 are unchanged in 0.5.2 (same file, same code)
    ("0.5.2", "0.5.9"): {  # ModelRunner's pool sizing moved into ModelRunnerKVCacheMixin
        (_RUNNER, 1248): frozenset({(_MIXIN, 342)}),  # base: profile_max_num_token(total_gpu_memory)
        (_RUNNER, 1267): frozenset({(_MIXIN, 403)}),  # the draft worker's draft_runner_cache_size
        (_RUNNER, 1295): frozenset({(_MIXIN, 385)}),  # min with --max-total-tokens
        (_RUNNER, 1297): frozenset({(_MIXIN, 387)}),  # page rounding
        (_RUNNER, 1310): frozenset({(_MIXIN, 400)}),  # pipeline-parallel all_reduce(MIN) read back with .item()
        (_RUNNER, 1218): frozenset({(_MIXIN, 333)}),  # hybrid split: max_total = full_max_total
    },
    ("0.5.9", "0.5.23"): {  # the mixin's sizing moved into KVCacheConfigurator and the pool configurators
        (_DECODE, 261): frozenset({(_DECODE, 467)}),  # the decode queue's min: its guard changed
        # the speculative-state reservation became three branches of _handle_max_mamba_cache
        (_MIXIN, 169): frozenset({(_CONFIGURATOR, 3324), (_CONFIGURATOR, 3344), (_CONFIGURATOR, 3377)}),
        (_MIXIN, 210): frozenset({(_CONFIGURATOR, 3409)}),  # mamba state reservation: rest - mamba_state_memory
        (_MIXIN, 385): frozenset({(_CONFIGURATOR, 3105)}),  # min with --max-total-tokens, now token_capacity
        # page rounding; calculate_pool_sizes_from_max_tokens rounds again
        (_MIXIN, 387): frozenset({(_POOLS, 646), (_POOLS, 652)}),
        (_MIXIN, 400): frozenset({(_CONFIGURATOR, 3115)}),  # pipeline-parallel reduce, now token_capacity
        (_MIXIN, 265): frozenset({(_POOLS, 868)}),  # all-SWA: align_page_size(max_total)
        (_MIXIN, 330): frozenset({(_POOLS, 880)}),  # hybrid: the full pool aligned to pages
    },
}

#: Caps that truly vanish in an upgrade, with the reason read in the code.
REMOVED: dict[tuple[str, str], dict[Cap, str]] = {
    ("0.4.6", "0.5.2"): {},
    ("0.5.2", "0.5.9"): {
        (_RUNNER, 1127): "the hybrid GDN reservation (max_mamba_cache_size x per-request size) is rewritten as "
        "handle_max_mamba_cache's two reservations: other code, no pair",
        (_RUNNER, 1250): "the SGLANG_CI_SMALL_KV_SIZE override is gone from the pool sizing",
        (_RUNNER, 1285): "draft_runner_cache_size now overrides only on the draft worker (0.5.9 keeps one override)",
        (_RUNNER, 1165): "the Llama 4 branch of the hybrid sizing is gone",
        (_RUNNER, 1170): "the Llama 4 branch of the hybrid sizing is gone",
    },
    ("0.5.9", "0.5.23"): {
        (_PREFILL, 132): "the prefill queue takes model_runner.effective_logical_max_total_num_tokens: no min",
        (_MIXIN, 342): "profile_max_num_token is gone: the pool configurators turn bytes into tokens (added bases)",
        (_MIXIN, 403): "--draft-runner-cache-size is gone from 0.5.23",
        (_MIXIN, 266): "the all-SWA sizes are keyword arguments of MemoryPoolConfig(...), not writes",
        (_MIXIN, 267): "the all-SWA sizes are keyword arguments of MemoryPoolConfig(...), not writes",
        (_MIXIN, 326): "the SWA ratio split is an argument of MemoryPoolConfig(...), off the pool's path",
        (_MIXIN, 331): "the SWA rounding is an argument of MemoryPoolConfig(...), off the pool's path",
        (_MIXIN, 333): "the hybrid max_total = full_max_total is a keyword argument of MemoryPoolConfig(...)",
    },
}

#: Caps that truly appear, with the reason (besides the repeats of a paired cap, see PAIRS).
ADDED: dict[tuple[str, str], dict[Cap, str]] = {
    ("0.4.6", "0.5.2"): {
        (_RUNNER, 1127): "new hybrid GDN models reserve mamba cache memory",
        (_RUNNER, 1310): "new pipeline parallelism: all_reduce(MIN) of the pool over stages",
        (_RUNNER, 1165): "new hybrid sizing for Llama 4",
        (_RUNNER, 1170): "new hybrid sizing for Llama 4",
        (_RUNNER, 1218): "new hybrid sizing (other models)",
    },
    ("0.5.2", "0.5.9"): {
        (_DECODE, 261): "new: disaggregated decode with hybrid SWA models takes the SWA pool's min",
        (_PREFILL, 132): "new: disaggregated prefill with hybrid SWA models takes the SWA pool's min",
        (_MIXIN, 169): "new speculative-decoding state reservation for mamba models",
        (_MIXIN, 210): "new mamba state reservation",
        (_MIXIN, 265): "new all-SWA sizing",
        (_MIXIN, 266): "new all-SWA sizing",
        (_MIXIN, 267): "new all-SWA sizing",
        (_MIXIN, 326): "new SWA ratio split",
        (_MIXIN, 330): "new hybrid SWA page alignment",
        (_MIXIN, 331): "new hybrid SWA page alignment",
    },
    ("0.5.9", "0.5.23"): {
        ("sglang/srt/model_executor/model_runner_components/kv_pool_runtime.py", 142): "new post-capture KV resize",
        ("sglang/srt/hardware_backend/mlx/model_runner_stub.py", 285): "new MLX backend: the MLX pool size",
        ("sglang/srt/hardware_backend/mlx/model_runner_stub.py", 287): "new MLX backend: the context length",
        (_CONFIGURATOR, 3038): "the formula's new step: minus slack and the multimodal reservation",
        (_CONFIGURATOR, 3214): "new cap_tokens limit in config_from_budget",
        (_CONFIGURATOR, 710): "new: a draft worker's virtual id space rounded to pages",
        (_CONFIGURATOR, 735): "new: a draft worker's virtual id space rounded to pages (HiSparse)",
        (_POOLS, 1667): "new DeepSeek V4 pool configurator: its state for the requests the budget admits, reserved",
        (_POOLS, 1669): "new DeepSeek V4 pool configurator",
        (_POOLS, 1677): "new DeepSeek V4 pool configurator",
        (_POOLS, 1464): "new DeepSeek V4 pool configurator",
        (_POOLS, 640): "new: the KV-shard scratch taken from the budget, clamped at zero",
        (_POOLS, 641): "bytes become tokens in the default configurator (replaces profile_max_num_token)",
        (_POOLS, 911): "bytes become tokens in the hybrid SWA configurator (unified memory)",
        (_POOLS, 915): "bytes become tokens in the hybrid SWA configurator",
        (_POOLS, 853): "new unified-memory solver",
        (_POOLS, 1021): "new SWA request-cap configurator",
        (_POOLS, 1039): "new SWA request-cap configurator",
    },
}
