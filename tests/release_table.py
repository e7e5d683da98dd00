"""Where each SGLang release sizes the KV pool and whether an EAGLE3 draft's weights load before that, read by hand.

One row a change point: a row holds from its version until the next row's. ``sizing`` is the function whose
call measures the free GPU memory the pool's formula takes (as ``sgtrace explain``'s JSON names it,
``path:Qualname``), ``measured`` that call's line and ``formula`` the formula's statements, both in the row's
first version; ``evidence`` is the reading, file:line, from the scheduler's start to that call (paths are under
``sglang/srt/``). Never imported or run: the files were opened and followed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version


@dataclass(frozen=True)
class Row:
    """A change point: what holds from ``since`` until the next row."""

    #: The first release it holds from.
    since: str
    #: The function whose call measures the free memory the formula uses, ``path:Qualname``.
    sizing: str
    #: That call, ``path:line``, in ``since``.
    measured: str
    #: Whether an EAGLE3 draft's weights are loaded before that call (False where there is no draft at all).
    draft_first: bool
    #: The formula's statements, ``path:line``, in ``since``.
    formula: tuple[str, ...]
    #: How it was read, file:line, in ``since``.
    evidence: str
    #: Whether the release has speculative decoding at all (``ServerArgs.speculative_algorithm``).
    speculative: bool = True


_RUNNER = "sglang/srt/model_executor/model_runner.py"

_MIXIN = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
_CONFIGURATOR = "sglang/srt/mem_cache/kv_cache_configurator.py"

TABLE: tuple[Row, ...] = (
    Row(
        since="0.4.0",
        sizing=f"{_RUNNER}:ModelRunner.profile_max_num_token",
        measured=f"{_RUNNER}:446",
        draft_first=False,
        formula=(f"{_RUNNER}:466", f"{_RUNNER}:469"),
        evidence="no draft at all: speculative decoding comes in 0.4.1.post4 (ServerArgs has no "
        "speculative_algorithm). scheduler.py:194 builds the target (TpWorkerClass) -> tp_worker.py:62 "
        "ModelRunner(...) -> model_runner.py:152 load_model, :165 init_memory_pool -> :490 "
        "profile_max_num_token -> :446 get_available_gpu_memory",
        speculative=False,
    ),
    Row(
        since="0.4.1.post4",
        sizing=f"{_RUNNER}:ModelRunner.profile_max_num_token",
        measured=f"{_RUNNER}:473",
        draft_first=False,
        formula=(f"{_RUNNER}:493", f"{_RUNNER}:496"),
        evidence="scheduler.py:203 builds the target (TpWorkerClass), whose construction sizes its pool: "
        "tp_worker.py:68 ModelRunner(...) -> model_runner.py:163 load_model, :181 init_memory_pool -> :517 "
        "profile_max_num_token -> :473 get_available_gpu_memory; only then scheduler.py:212-215 builds the "
        "draft, EAGLEWorker(TpModelWorker) (speculative/eagle_worker.py:18), under "
        "spec_algorithm.is_eagle()",
    ),
    Row(
        since="0.5.3.post2",
        sizing=f"{_RUNNER}:ModelRunner.profile_max_num_token",
        measured=f"{_RUNNER}:1327",
        draft_first=False,
        formula=(f"{_RUNNER}:1368", f"{_RUNNER}:1372", f"{_RUNNER}:1373"),
        evidence="the formula gains the hybrid-mamba step (model_runner.py:1371-1372, if mambaish_config is not "
        "None); scheduler.py:418 builds the target (TpModelWorker -> tp_worker.py:95 ModelRunner -> "
        "model_runner.py:322 initialize -> :389 load_model, :462 init_memory_pool -> :1583 "
        "profile_max_num_token -> :1327), then scheduler.py:673 the EAGLE draft (WorkerClass)",
    ),
    Row(
        since="0.5.7",
        sizing=f"{_MIXIN}:ModelRunnerKVCacheMixin.profile_max_num_token",
        measured=f"{_MIXIN}:114",
        draft_first=False,
        formula=(f"{_MIXIN}:137", f"{_MIXIN}:141", f"{_MIXIN}:143"),
        evidence="the sizing moves to the runner's KV-cache mixin. scheduler.py:333 init_model_worker -> :471 the "
        "target (TpModelWorker -> tp_worker.py:253 ModelRunner -> model_runner.py:355 initialize -> :432 "
        "load_model, :521 init_memory_pool -> model_runner_kv_cache_mixin.py:276 profile_max_num_token -> "
        ":114), then scheduler.py:512/526/536 the draft",
    ),
    Row(
        since="0.5.10",
        sizing=f"{_MIXIN}:ModelRunnerKVCacheMixin.profile_max_num_token",
        measured=f"{_MIXIN}:145",
        draft_first=False,
        formula=(f"{_MIXIN}:171", f"{_MIXIN}:175", f"{_MIXIN}:177"),
        evidence="the formula's terms are renamed (post_model_load_memory, pre_model_load_memory), its shape kept. "
        "scheduler.py:385 init_model_worker -> :632 init_tp_model_worker (:600 TpModelWorker -> "
        "tp_worker.py:344 ModelRunner -> model_runner.py:427 initialize -> :507 load_model, :623 "
        "init_memory_pool -> model_runner_kv_cache_mixin.py:899 _resolve_memory_pool_config -> :875 "
        "profile_max_num_token -> :145), then :633 maybe_init_draft_worker (:629)",
    ),
    Row(
        since="0.5.11",
        sizing=f"{_MIXIN}:ModelRunnerKVCacheMixin._profile_available_bytes",
        measured=f"{_MIXIN}:57",
        draft_first=False,
        formula=(f"{_MIXIN}:64", f"{_MIXIN}:68", f"{_MIXIN}:70"),
        evidence="the budget in bytes is split from the cell size: _profile_available_bytes. scheduler.py:432 "
        "init_model_worker -> :693 init_tp_model_worker (:648 TpModelWorker -> tp_worker.py:345 ModelRunner"
        " -> model_runner.py:508 initialize -> :625 load_model, :733 init_memory_pool -> "
        "model_runner_kv_cache_mixin.py:756 -> :737 _profile_available_bytes -> :57), then :694 "
        "maybe_init_draft_worker (:678); the same through 0.5.13.post1 (model_runner.py:784 "
        "init_memory_pool inside initialize)",
    ),
    Row(
        since="0.5.14",
        sizing=f"{_MIXIN}:ModelRunnerKVCacheMixin._profile_available_bytes",
        measured=f"{_MIXIN}:89",
        draft_first=True,
        formula=(f"{_MIXIN}:96", f"{_MIXIN}:100", f"{_MIXIN}:120"),
        evidence="the runner no longer sizes its pool as it is built (ModelRunner.initialize, model_runner.py:643, "
        "loads at :693 and stops); scheduler.py:859 init_model_worker -> :861 init_tp_model_worker (:782), "
        ":865 maybe_init_draft_worker (:812, the draft's weights), then :868 init_memory_pools -> :838 "
        "init_target_memory_pool -> :834 tp_worker.alloc_memory_pool -> tp_worker.py:329 -> "
        "model_runner.py:813 init_memory_pool -> model_runner_kv_cache_mixin.py:1059 "
        "_profile_available_bytes -> :89 (the call at scheduler.py:863-864 runs only for frozen-KV MTP)",
    ),
    Row(
        since="0.5.16",
        sizing=f"{_CONFIGURATOR}:KVCacheConfigurator._profile_available_bytes",
        measured=f"{_CONFIGURATOR}:1531",
        draft_first=True,
        formula=(f"{_CONFIGURATOR}:1538", f"{_CONFIGURATOR}:1541", f"{_CONFIGURATOR}:1548", f"{_CONFIGURATOR}:1550"),
        evidence="the sizing moves to the KV-cache configurator, the slack a statement of its own (slack_gb, floored"
        " for mamba at :1541). scheduler.py:845 init_model_worker -> :847 init_tp_model_worker (:771), :848"
        " maybe_init_draft_worker (:798), :851 init_memory_pools -> :824 -> :820 "
        "tp_worker.alloc_memory_pool -> tp_worker.py:374 -> model_runner.py:734 "
        "kv_cache_configurator.configure -> kv_cache_configurator.py:227 _resolve_memory_pool_config -> "
        ":1669 _profile_available_bytes -> :1531; 0.5.17 reads the fraction from get_schedule() (:1625), "
        "the same formula",
    ),
    Row(
        since="0.5.18",
        sizing=f"{_CONFIGURATOR}:KVCacheConfigurator._profile_available_bytes",
        measured=f"{_CONFIGURATOR}:1768",
        draft_first=True,
        formula=(f"{_CONFIGURATOR}:1775", f"{_CONFIGURATOR}:1778", f"{_CONFIGURATOR}:1785", f"{_CONFIGURATOR}:1789"),
        evidence="the formula subtracts a multimodal reservation (mm_reservation_gb, :1785, :1789). scheduler.py:995"
        " init_tp_model_worker (:921), :998 maybe_init_draft_worker (:942), :1002 init_memory_pools -> :968"
        " -> :964 tp_worker.alloc_memory_pool -> tp_worker.py:403 -> model_runner.py:805 configure -> "
        "kv_cache_configurator.py:284 -> :1936 _profile_available_bytes -> :1768; the same order and "
        "formula through 0.5.23 (scheduler.py:1137 init_memory_pools, kv_cache_configurator.py:3000 the "
        "call, :3038 the formula)",
    ),
)


def row(version: str) -> Row:
    """The row that holds for *version* (the last change point at or before it)."""
    held = [r for r in TABLE if Version(r.since) <= Version(version)]
    if not held:
        raise LookupError(f"sglang=={version} is older than the table ({TABLE[0].since})")
    return held[-1]
