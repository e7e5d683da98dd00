"""The one table of the messages a start-up log holds: SGLang's own, and the lines around them.

Each :class:`Message` says what its lines are (its kind), the step of a start-up it belongs to, which
model it speaks for, the pattern that reads it and the figures it carries (with their units), and the
forms SGLang's code prints it in (``{}`` for each placeholder, as ``tests/code_messages.py`` reads
them from a release). Classifying a line (:mod:`~sgtrace.run.events`), the stream's pre-filter
(:mod:`~sgtrace.run.stream`), the quantities a formula asks for and the help text are all derived
from it: no other module spells a message. ``tests/test_messages.py`` checks every form against the
releases the tests fetch, and that every message those releases print about memory, pools and
weights is in the table.

The table is ordered: a line is the first message whose pattern matches it.

Every pattern reads a line in time linear in its length (``tests/test_hostile.py`` checks each on a megabyte
of its worst case): after a bounded head (the message's words), each figure is an optional lookahead from the
same place, never a chain of ``.*?`` that backtracks into the one before it, and the figures a message cannot
be without (``needs``) are checked on the match. So the first place the head is found decides the line.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product


class Kind(enum.Enum):
    """What a line is to a start-up."""

    #: A step of one model's start-up (distributed init, weights, a pool, memory pool end, a graph).
    STEP = "step"
    #: The scheduler's line with the pool's size (``max_total_num_tokens=``).
    SCHEDULER = "scheduler"
    #: SGLang's own verdict on the memory (a fraction it chose, a profile it rejected).
    VERDICT = "verdict"
    #: The server is up.
    READY = "ready"
    #: A request the server answered on the machine itself (its warmup's): it was up, whether or not it said so.
    SERVED = "served"
    #: The start-up died (a traceback, a memory error, a failed unit).
    DEATH = "death"
    #: The server's arguments (``server_args=ServerArgs(...)``).
    SERVER_ARGS = "server_args"
    #: A launch command, as ``ps``, a unit file or a script shows it.
    COMMAND = "command"
    #: A version of SGLang a line names.
    VERSION = "version"
    #: A service manager's line: a service started or stopped.
    SERVICE_START = "service_start"
    SERVICE_STOP = "service_stop"
    #: Another line with free memory, read for what is left at the end.
    AVAIL = "avail"
    #: A message about memory that no start-up figure comes from (listed so that it is known, not read).
    OTHER = "other"


class Phase(enum.IntEnum):
    """The steps of one model's start-up, in the order SGLang's model runner takes them."""

    INIT = 0
    LOAD_BEGIN = 1
    LOAD_END = 2
    POOL = 3
    POOL_END = 4
    CAPTURE_BEGIN = 5
    CAPTURE_END = 6


class Speaks(enum.Enum):
    """Which model a line speaks for, as the line alone says."""

    #: Either (the lines themselves do not say: the target's come first, a draft's repeat them).
    EITHER = "either"
    #: The speculative draft's (``Capture draft ...``, ``draft KV cache``).
    DRAFT = "draft"
    #: The target's (``Capture target decode CUDA graph``).
    TARGET = "target"


class Pool(enum.Enum):
    """What a pool line allocates."""

    #: The KV cache (K and V apart, or one KV size for MLA).
    KV = "kv"
    #: The state of Mamba / linear-attention layers.
    MAMBA = "mamba"
    #: The sum of a hybrid sliding-window pool's two KV pools (``SWAKVPool mem usage``).
    SWA_TOTAL = "swa_total"
    #: The token counts of a sliding-window pool's full and window layers (no bytes).
    SWA_TOKENS = "swa_tokens"


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure a message carries."""

    #: The pattern's group that holds it.
    group: str
    #: The quantity it is (see QUANTITIES, or the names below them).
    quantity: str
    #: GB, tokens, s, fraction, or class (a model class's name).
    unit: str


@dataclass(frozen=True, slots=True)
class Message:
    """One message: how to know it, what it says, and the forms the code prints it in."""

    #: A short name (``load_end``).
    name: str
    #: What the line is.
    kind: Kind
    #: The words every form of it holds, at the start of its pattern's match: the pre-filter's.
    literal: str
    #: The pattern (searched in the message, prefixes off); figures in named groups.
    pattern: re.Pattern[str]
    #: The figures it carries.
    figures: tuple[Figure, ...] = ()
    #: The step it is, for a STEP.
    phase: Phase | None = None
    #: Which model it speaks for, as the line alone says.
    speaks: Speaks = Speaks.EITHER
    #: What it allocates, for a pool line.
    pool: Pool | None = None
    #: One line on what it is, for the help and the docs.
    description: str = ""
    #: The forms SGLang's code prints it in, placeholders ``{}`` (none for lines SGLang does not print).
    forms: tuple[str, ...] = ()
    #: The sets of groups of which one must be matched whole for a line to be this message (none: the head is
    #: enough).
    needs: tuple[tuple[str, ...], ...] = ()


_N = r"(-?[0-9]+(?:\.[0-9]+)?)"  # a number as SGLang prints it (a profile may be negative)


def _n(name: str) -> str:
    return rf"(?P<{name}>-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"


def _then(words: str, group: str, unit: str = "GB") -> str:
    """A figure anywhere after this point of the line, if the line has it (any order among such figures).

    A lookahead from one place: it scans the rest of the line once and is never backtracked into."""
    return rf"(?:(?=.*?{words}{_n(group)}\s*{unit}))?"


def _gb(group: str, quantity: str) -> Figure:
    return Figure(group, quantity, "GB")


#: What each quantity a start-up gives is, for the report and for the error that asks for a missing one.
QUANTITIES = {
    "avail_before_weights_gb": "GPU memory free before the weights were loaded ('Load weight begin. avail mem=')",
    "avail_after_weights_gb": "GPU memory free after the weights were loaded ('Load weight end. ... avail mem=')",
    "weights_gb": "memory the weights took ('Load weight end. ... mem usage=')",
    "kv_gb": "size of the KV cache allocated ('KV Cache is allocated. ... K size + V size' or 'KV size')",
    "kv_tokens": "tokens in the KV cache ('KV Cache is allocated. #tokens: N')",
    "avail_after_pool_gb": "GPU memory free after the pools ('Memory pool end. avail mem=')",
    "max_total_num_tokens": "the scheduler's pool size ('max_total_num_tokens=')",
}

_CAPTURE_BEGIN_FORMS = (
    "Capture cuda graph begin. This can take up to several minutes. avail mem={} GB",
    "Capture {} begin. This can take up to several minutes. avail mem={} GB",
    "Capture piecewise CUDA graph begin. avail mem={} GB",
    "Capture draft cuda graph begin. This can take up to several minutes. avail mem={} GB",
    "Capture draft extend cuda graph begin. This can take up to several minutes. avail mem={} GB",
    "Capture draft extend cuda graph begin (step {}). This can take up to several minutes. avail mem={} GB",
    "Capture draft extend CUDA graph begin. step={}, avail mem={} GB",
    "Capture single-CG draft extend begin. This can take several minutes. avail mem={} GB",
    "Capture {} CUDA graph begin. backend={}, num_tokens={}, avail mem={} GB",
    "Capture {} {} begin. backend={}, num_tokens_per_req={}, avail mem={} GB",
    "Capture {} {} begin. backend={}, num_tokens_per_req={}, bs={}, avail mem={} GB",
    "Capture Frozen-KV MTP draft cuda graph begin.",
)
_CAPTURE_END_FORMS = (
    "Capture cuda graph end. Time elapsed: {} s. avail mem={} GB. mem usage={} GB.",
    "Capture draft cuda graph end. Time elapsed: {} s. avail mem={} GB. mem usage={} GB.",
    "Capture draft cuda graph end. Time elapsed: {} s. avail mem={} GB",
    "Capture cuda graph end. Time elapsed: {} s. mem usage={} GB. avail mem={} GB.",
    "Capture {} {} end. elapsed={} s, mem usage={} GB, avail mem={} GB.",
    "Capture {} end. Time elapsed: {} s. mem usage={} GB. avail mem={} GB.",
    "Capture piecewise CUDA graph end. Time elapsed: {} s. mem usage={} GB. avail mem={} GB.",
    "Capture draft cuda graph end. Time elapsed: {} s. mem usage={} GB. avail mem={} GB.",
    "Capture draft extend cuda graph end. Time elapsed: {} s. mem usage={} GB. avail mem={} GB.",
    "Capture draft extend CUDA graph end. step={}, elapsed={} s, mem usage={} GB, avail mem={} GB.",
    "Capture single-CG draft extend end. elapsed={} s, mem usage={} GB, avail mem={} GB.",
    "Capture {} CUDA graph end. elapsed={} s, mem usage={} GB, avail mem={} GB.",
    "Capture {} {} end. bs={}, elapsed={} s, mem usage={} GB, avail mem={} GB.",
    "Capture Frozen-KV MTP draft cuda graph end.",
)

#: The messages, in the order a line is tried against them.
MESSAGES: tuple[Message, ...] = (
    Message(
        "server_args",
        Kind.SERVER_ARGS,
        "server_args=ServerArgs(",
        re.compile(r"server_args=ServerArgs\((?P<arguments>.*?)(?P<closed>\)\s*)?$"),
        description=(
            "the server's arguments, every field (its mem_fraction_static among them); a line cut short (a paste's"
            " limit, a terminal's wrap) gives the fields it holds whole"
        ),
        forms=("server_args={}",),
    ),
    Message(
        "init",
        Kind.STEP,
        "Init torch ",
        re.compile(r"Init torch (?:distributed )?begin\."),
        phase=Phase.INIT,
        description="a model runner begins: its distributed init",
        forms=("Init torch distributed begin.",),
    ),
    Message(
        "init_end",
        Kind.OTHER,
        "Init torch distributed ends",
        re.compile(r"Init torch distributed ends\." + _then("mem usage=", "used")),
        needs=(("used",),),
        description="the distributed init's own memory (read with the init's line)",
        forms=(
            "Init torch distributed ends. mem usage={} GB",
            "Init torch distributed ends. elapsed={} s, mem usage={} GB",
        ),
    ),
    Message(
        "baseline",
        Kind.STEP,
        "Memory baseline taken",
        re.compile(r"Memory baseline taken\." + _then("mem usage=", "used")),
        phase=Phase.INIT,
        needs=(("used",),),
        description="a model runner begins: the memory baseline it takes (newer releases)",
        forms=("Memory baseline taken. mem usage={} GB",),
    ),
    Message(
        "load_begin",
        Kind.STEP,
        "Load weight begin",
        re.compile(r"Load weight begin\." + _then("(?i:avail mem)=", "avail")),
        (_gb("avail", "avail_before_weights_gb"),),
        Phase.LOAD_BEGIN,
        description="the weights begin to load: the GPU memory free before them",
        forms=("Load weight begin. avail mem={} GB",),
    ),
    Message(
        "load_committed",
        Kind.OTHER,
        "Load weight end. Committed",
        re.compile(r"Load weight end\. Committed real weights"),
        description="weights committed after the graphs were captured (overlapped loading): no figure",
        forms=(
            "Load weight end. Committed real weights after CUDA graph capture in {} s "
            "(capture overlap window {} s, startup overlap total {} s)",
        ),
    ),
    Message(
        "load_end",
        Kind.STEP,
        "Load weight end",
        re.compile(
            r"Load weight end\."
            + _then("elapsed=", "elapsed", "s")
            + r"(?:(?=.*?(?i:type)=(?P<type>\w+)))?"
            + _then("(?i:avail mem)=", "avail")
            + _then("mem usage=", "used")
        ),
        (
            Figure("elapsed", "elapsed", "s"),
            Figure("type", "model_type", "class"),
            _gb("avail", "avail_after_weights_gb"),
            _gb("used", "weights_gb"),
        ),  # fmt: skip
        Phase.LOAD_END,
        description="the weights are in: the model's class, the memory free after them and what they took",
        forms=(
            "Load weight end. type={}, dtype={}, avail mem={} GB",
            "Load weight end. type={}, dtype={}, avail mem={} GB, mem usage={} GB.",
            "Load weight end. elapsed={} s, type={}, dtype={}, avail mem={} GB, mem usage={} GB.",
            "Load weight end. elapsed={} s, type={}, {}avail mem={} GB, mem usage={} GB.",
        ),
    ),
    Message(
        "kv_post_capture_draft",
        Kind.STEP,
        "Post-capture KV sizing: draft KV cache allocated",
        re.compile(
            r"Post-capture KV sizing: draft KV cache allocated\."
            + _then(r"#tokens:\s*", "tokens", "")
            + _then(r"KV size:\s*", "kv")
        ),
        (Figure("tokens", "kv_tokens", "tokens"), _gb("kv", "kv_gb")),
        Phase.POOL,
        Speaks.DRAFT,
        Pool.KV,
        needs=(("tokens", "kv"),),
        description="the draft's KV cache, sized after the graphs were captured",
        forms=("Post-capture KV sizing: draft KV cache allocated. dtype: {}, #tokens: {}, KV size: {} GB",),
    ),
    Message(
        "kv_post_capture",
        Kind.STEP,
        "Post-capture KV sizing: KV cache allocated",
        re.compile(
            r"Post-capture KV sizing: KV cache allocated\."
            + _then(r"#tokens:\s*", "tokens", "")
            + _then(r"KV size:\s*", "kv")
            + _then("avail mem=", "avail")
        ),
        (Figure("tokens", "kv_tokens", "tokens"), _gb("kv", "kv_gb"), _gb("avail", "left_gb")),
        Phase.POOL,
        Speaks.TARGET,
        Pool.KV,
        needs=(("tokens", "kv"),),
        description="the KV cache, sized after the graphs were captured (newer releases, when enabled)",
        forms=("Post-capture KV sizing: KV cache allocated. dtype: {}, #tokens: {}, KV size: {} GB, avail mem={} GB",),
    ),
    Message(
        "upper_bound",
        Kind.OTHER,
        "VA upper bound",
        re.compile(r"(?:KV Cache|SWAKVPool) VA upper bound\b"),
        description="address space a pool reserves before post-capture sizing: not memory taken",
    ),
    Message(
        "kv",
        Kind.STEP,
        "KV Cache is allocated",
        re.compile(
            r"KV Cache is allocated\.(?:(?=.*?dtype:\s*(?P<dtype>[\w.]+),))?"
            + _then(r"#tokens:\s*", "tokens", "")
            + _then(r"\bK size:\s*", "k")
            + _then(r"\bV size:\s*", "v")
            + _then(r"KV size:\s*", "kv")
        ),
        (Figure("tokens", "kv_tokens", "tokens"), _gb("k", "k_gb"), _gb("v", "v_gb"), _gb("kv", "kv_gb")),
        Phase.POOL,
        pool=Pool.KV,
        needs=(("k", "v"), ("kv",)),
        description="a KV cache is allocated: its tokens, K and V sizes (or one KV size, MLA)",
        forms=(
            "KV Cache is allocated. #tokens: {}, K size: {} GB, V size: {} GB",
            "KV Cache is allocated. #tokens: {}, KV size: {} GB",
            "KV Cache is allocated. K size: {} GB, V size: {} GB.",
            "{} {}. dtype: {}, #tokens: {}, K size: {} GB, V size: {} GB",
            "{} {}. dtype: {}, #tokens: {}, KV size: {} GB",
            "KV Cache is allocated. dtype: {}, #tokens: {}, K size: {} GB, V size: {} GB",
            "KV Cache is allocated. dtype: {}, #tokens: {}, KV size: {} GB",
        ),
    ),
    Message(
        "post_capture_summary",
        Kind.OTHER,
        "Post-capture KV sizing: max_total_num_tokens=",
        re.compile(r"Post-capture KV sizing: max_total_num_tokens="),
        description=(
            "0.5.16's summary of the pool sized after the graphs were captured (not the scheduler's line: the"
            " pool's own line gives its figures)"
        ),
        forms=("Post-capture KV sizing: max_total_num_tokens={}, free memory={} GB",),
    ),
    Message(
        "kv_noop",
        Kind.OTHER,
        "KV Cache skipped",
        re.compile(r"KV Cache skipped \(no-op pool\)"),
        description="a pool that allocates nothing",
        forms=("KV Cache skipped (no-op pool). Logical #tokens: {}, physical K/V size: ~{} KB placeholder",),
    ),
    Message(
        "mamba",
        Kind.STEP,
        "Mamba Cache is allocated",
        re.compile(
            r"Mamba Cache is allocated\."
            + _then(r"max_mamba_cache_size:\s*", "slots", "")
            + _then(r"\bconv_state size:\s*", "conv")
            + _then(r"\bssm_state size:\s*", "ssm")
            + _then(r"intermediate_ssm_state_cache size:\s*", "inter_ssm")
            + _then(r"intermediate_conv_window_cache size:\s*", "inter_conv")
        ),
        (
            Figure("slots", "mamba_slots", "tokens"),
            _gb("conv", "conv_gb"),
            _gb("ssm", "ssm_gb"),
            _gb("inter_ssm", "intermediate_ssm_gb"),
            _gb("inter_conv", "intermediate_conv_gb"),
        ),  # fmt: skip
        Phase.POOL,
        pool=Pool.MAMBA,
        needs=(("conv", "ssm"),),
        description="the state of Mamba / linear-attention layers (its conv and ssm states, and their drafts')",
        forms=(
            "Mamba Cache is allocated. conv_state size: {}GB, ssm_state size: {}GB",
            "Mamba Cache is allocated. max_mamba_cache_size: {}, conv_state size: {}GB, ssm_state size: {}GB",
            "Mamba Cache is allocated. max_mamba_cache_size: {}, conv_state size: {}GB, ssm_state size: {}GB "
            "intermediate_ssm_state_cache size: {}GB intermediate_conv_window_cache size: {}GB",
        ),
    ),
    Message(
        "swa_total",
        Kind.STEP,
        "SWAKVPool",
        re.compile(
            r"SWAKVPool mem usage:\s*"
            + _n("gb")
            + r"\s*GB"
            + _then(r"swa size:\s*", "swa", "")
            + _then(r"full size:\s*", "full", "")
        ),  # fmt: skip
        (_gb("gb", "swa_pool_gb"), Figure("swa", "swa_tokens", "tokens"), Figure("full", "full_tokens", "tokens")),
        Phase.POOL,
        pool=Pool.SWA_TOTAL,
        needs=(("swa", "full"),),
        description="a sliding-window model's two KV pools together (full and window layers)",
        forms=(
            "SWAKVPool mem usage: {} GB, swa size: {}, full size: {}",
            "SWAKVPool {}: {} GB, swa size: {}, full size: {}",
        ),
    ),
    Message(
        "swa_tokens",
        Kind.STEP,
        "window memory pool",
        re.compile(
            r"[Ss]liding window memory pool(?: \(all SWA\))?\."
            + _then("full_layer_tokens=", "full", "")
            + _then("swa_layer_tokens=", "swa", "")
        ),  # fmt: skip
        (Figure("full", "full_tokens", "tokens"), Figure("swa", "swa_tokens", "tokens")),
        Phase.POOL,
        pool=Pool.SWA_TOKENS,
        needs=(("swa",),),
        description="a sliding-window model's pools: tokens of its full and window layers",
        forms=(
            "Use Sliding window memory pool. full_layer_tokens={}, swa_layer_tokens={}",
            "Use sliding window memory pool. full_layer_tokens={}, swa_layer_tokens={}",
            "Use sliding window memory pool (all SWA). swa_layer_tokens={}",
        ),
    ),
    Message(
        "pool_end",
        Kind.STEP,
        "Memory pool end",
        re.compile(r"Memory pool end\." + _then("avail mem=", "avail")),
        (_gb("avail", "avail_after_pool_gb"),),
        Phase.POOL_END,
        needs=(("avail",),),
        description="a model's pools are allocated: the memory free after them",
        forms=("Memory pool end. avail mem={} GB",),
    ),
    Message(
        "capture_begin",
        Kind.STEP,
        "Capture ",
        re.compile(
            r"(?P<which>Capture +(?:[\w-]+ +){0,8}?(?:graph|draft extend)) begin\b" + _then("avail mem=", "avail"), re.I
        ),
        (_gb("avail", "left_gb"),),
        Phase.CAPTURE_BEGIN,
        description="a graph capture begins and ends: the memory it took, the memory left",
        forms=_CAPTURE_BEGIN_FORMS,
    ),
    Message(
        "capture_end",
        Kind.STEP,
        "Capture ",
        re.compile(
            r"(?P<which>Capture +(?:[\w-]+ +){0,8}?(?:graph|draft extend)) end\b"
            + _then(r"(?:elapsed[=:]|Time elapsed:)\s*", "elapsed", "s")
            + _then("mem usage=", "used")
            + _then("avail mem=", "avail"),
            re.IGNORECASE,
        ),
        (Figure("elapsed", "elapsed", "s"), _gb("used", "graph_gb"), _gb("avail", "left_gb")),
        Phase.CAPTURE_END,
        description="a graph capture ends: the memory it took and the memory left",
        forms=_CAPTURE_END_FORMS,
    ),
    Message(
        "other_pools",
        Kind.OTHER,
        "",
        re.compile(r"^(?:MLX stub: initialized minimal pools|\[unified-memory-pool\] (?!.*cannot fit ONE))"),
        description="pools of backends and layouts whose figures no formula of the target's takes",
        forms=(
            "MLX stub: initialized minimal pools (max_total_num_tokens={}, max_running_requests={}, zero GPU KV cache "
            "allocation)",
            "[unified-memory-pool] UnifiedSWAKVPool wrapped unified buffer...",
            "[unified-memory-pool] total_bytes={}...",
        ),
    ),
    Message(
        "scheduler",
        Kind.SCHEDULER,
        "max_total_num_tokens=",
        re.compile(r"\bmax_total_num_tokens=" + _n("tokens") + r"(?:.*?available_gpu_mem=" + _n("left") + r"\s*GB)?"),
        (Figure("tokens", "max_total_num_tokens", "tokens"), _gb("left", "left_gb")),
        description="the scheduler's pool size and the memory left at the end",
        forms=(
            "max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens={}, max_running_requests={}, "
            "context_len={}",
            "max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens={}, max_running_requests={}, "
            "context_len={}, {}={} GB",
            "max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens={}, max_running_requests={}, "
            "context_len={}, available_gpu_mem={} GB",
        ),
    ),
    Message(
        "profiled",
        Kind.VERDICT,
        "is larger than the profiled value",
        re.compile(r"max_total_tokens=" + _n("cap") + r" is larger than the profiled value " + _n("profiled")),
        (Figure("cap", "cap_tokens", "tokens"), Figure("profiled", "profiled_tokens", "tokens")),
        description="SGLang's verdict: the --max-total-tokens asked for is above the pool the memory gives",
        forms=("max_total_tokens={} is larger than the profiled value {}. Use the profiled value instead.",),
    ),
    Message(
        "auto_fraction",
        Kind.VERDICT,
        "Automatically reduce --mem-fraction-static",
        re.compile(r"Automatically reduce --mem-fraction-static to " + _n("fraction")),
        (Figure("fraction", "mem_fraction_static", "fraction"),),
        description="SGLang's verdict: the fraction it chose for this run (a multimodal model)",
        forms=("Automatically reduce --mem-fraction-static to {} because this is a multimodal model.",),
    ),
    Message(
        "named_inputs",
        Kind.VERDICT,
        "available_gpu_memory=",
        re.compile(
            r"available_gpu_memory="
            + _n("after")
            + r"\s*GB"
            + _then(r"(?:total_gpu_memory|pre_model_load_memory)=", "before")
            + r"(?:(?=.*?mem_fraction_static="
            + _n("fraction")
            + r"))?"
            + _then("rest_memory=", "rest")
        ),  # fmt: skip
        (
            _gb("after", "avail_after_weights_gb"),
            _gb("before", "avail_before_weights_gb"),
            Figure("fraction", "mem_fraction_static", "fraction"),
            _gb("rest", "rest_gb"),
        ),
        description=(
            "a line no release on the registry prints, naming the formula's inputs by the names of its code (a build"
            " of its own: 'Memory profiling: available_gpu_memory=..., total_gpu_memory=..., mem_fraction_static=...,"
            " rest_memory=...'): read for them, and the answer says where they came from"
        ),
    ),
    Message(
        "no_kv_memory",
        Kind.DEATH,
        "Loaded weights leave no GPU memory for the KV cache",
        re.compile(
            r"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static="
            + _n("fraction")
            + r"(?:.*?Raise --mem-fraction-static above "
            + _n("needed")
            + r")?"
        ),  # fmt: skip
        (Figure("fraction", "mem_fraction_static", "fraction"), Figure("needed", "fraction_needed", "fraction")),
        description="SGLang's verdict, and the start-up's death: the weights took the fraction's whole budget",
        forms=(
            "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={}. Raise "
            "--mem-fraction-static above {} (minimum viable = 1 - available/pre = {})...",
        ),
    ),
    Message(
        "not_enough",
        Kind.DEATH,
        "Not enough memory. Please try to increase --mem-fraction-static",
        re.compile(
            r"Not enough memory\. Please try to increase --mem-fraction-static\.(?:.*?"
            r"mem_fraction_static=" + _n("fraction") + r")?"
        ),  # fmt: skip
        (Figure("fraction", "mem_fraction_static", "fraction"),),
        description="SGLang's verdict, and the start-up's death: the pool the fraction gives is empty",
        forms=(
            "Not enough memory. Please try to increase --mem-fraction-static.",
            "Not enough memory. Please try to increase --mem-fraction-static. Current value: {}",
        ),
    ),
    Message(
        "state_too_small",
        Kind.DEATH,
        "",
        re.compile(
            r"Not enough GPU memory for hybrid|state cache is too small to serve"
            r"|pool cap \([^()]{0,200}\) leaves no room|cannot fit ONE worst-case request"
            r"|int8 mamba checkpoint pool needs"
        ),
        description="SGLang's verdict, and the start-up's death: no room for a pool's state, window or cap",
        forms=(
            "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=...",
            "Hybrid (mamba/linear-attention) state cache is too small to serve any requests...",
            "SWA pool cap ({} tokens, {} GiB) leaves no room for the full KV pool...",
            "The DSV4 SWA pool cap ({} tokens, {} GB) leaves no room for the full KV pool...",
            "[unified-memory-pool] {}: byte budget {} cannot fit ONE worst-case request...",
            "int8 mamba checkpoint pool needs ~{}GB but only {}GB HBM is free...",
        ),
    ),
    Message(
        "short_pool",
        Kind.VERDICT,
        "KV pool holds",
        re.compile(r"KV pool holds " + _n("tokens") + r" tokens, fewer than --context-length " + _n("context")),
        (Figure("tokens", "short_pool_tokens", "tokens"), Figure("context", "context_len", "tokens")),
        description="SGLang's verdict: the pool holds fewer tokens than one request of the whole context",
        forms=("KV pool holds {} tokens, fewer than --context-length {}...",),
    ),
    Message(
        "graph_failed",
        Kind.DEATH,
        "graph failed",
        re.compile(r"Capture (?:[\w-]+ ){0,6}?(?:cuda|CUDA|cpu|CPU) graph failed"),
        description="the start-up died capturing a graph (SGLang suggests a smaller --mem-fraction-static)",
        forms=(
            "Capture cuda graph failed: {} Possible solutions:...",
            "Capture cuda graph failed: {} {}",
            "Capture CPU graph failed: {} {}",
            "Capture prefill CUDA graph failed: {} {}",
            "Capture frozen-KV MTP cuda graph failed: {} {}",
        ),
    ),
    Message(
        "ready",
        Kind.READY,
        "The server is fired up",
        re.compile(r"The server is fired up and ready to roll"),
        description="the server is up",
        forms=("The server is fired up and ready to roll!",),
    ),
    Message(
        "served",
        Kind.SERVED,
        "POST /generate",
        re.compile(r'127\.0\.0\.1:\d+ - "POST /generate HTTP/[\d.]+" 200\b'),
        description=(
            "the server answered a request of the machine itself (its warmup's, uvicorn's access log): it was up, even"
            " where its ready line is not in the log (a notebook's output that missed it). Only /generate, the warmup"
            " of every release's generation models: its words are rare in a journal's traffic (a pre-filter of"
            " '127.0.0.1:', a digit first, read a journal 25 % slower)"
        ),
    ),
    Message(
        "served_encode",
        Kind.SERVED,
        "POST /encode",
        re.compile(r'127\.0\.0\.1:\d+ - "POST /encode HTTP/[\d.]+" 200\b'),
        description="the warmup of an embedding model answered (as 'served' for a generation model's)",
    ),
    Message(
        "http_stopped",
        Kind.SERVICE_STOP,
        "Shutting down",
        re.compile(r"^INFO:\s+Shutting down$"),
        description=(
            "the HTTP server (uvicorn) stopping on a signal (a Ctrl-C, a kill): once the server is up, it was stopped;"
            " the tracebacks of its processes' ending that follow are no death"
        ),
    ),
    Message(
        "sigterm",
        Kind.SERVICE_STOP,
        "SIGTERM received",
        re.compile(r"^SIGTERM received\. .*Draining requests and shutting down"),
        description=(
            "SGLang stopping on a SIGTERM (a service stop, a CI's timeout): the start-up was stopped, up or not;"
            " the tracebacks of its processes' ending that follow are no death"
        ),
        forms=("SIGTERM received. {} {}. Draining requests and shutting down...",),
    ),
    Message(
        "bench_done",
        Kind.SERVICE_STOP,
        "Total. latency:",
        re.compile(r"^Total\. latency:\s*[0-9.]+ s, throughput:"),
        description=(
            "a benchmark's last result (bench_one_batch, bench_latency: no server): the run did its work and ends; a"
            " traceback at its interpreter's exit (multiprocessing's resource tracker) is no death"
        ),
        forms=("Total. latency: {} s, throughput: {} token/s",),
    ),
    Message(
        "child_exit",
        Kind.DEATH,
        "exit code",
        re.compile(
            r"Child process unexpectedly failed with an exit code -?\d+"
            r"|Subprocess \S+ \(pid=\d+\) crashed with exit code -?\d+"
        ),
        description=(
            "a process of the server exited: before the server is up, the start-up died (exit code 9 is a kill, often"
            " the OS's out-of-memory killer's); once it is up, the server was stopped (a notebook's or a script's kill)"
        ),
        forms=(
            "Child process unexpectedly failed with an exit code {}. pid={}",
            "Subprocess {} (pid={}) crashed with exit code {}. Triggering SIGQUIT for cleanup...",
        ),
    ),
    Message(
        "death",
        Kind.DEATH,
        "",
        re.compile(
            r"Traceback \(most recent call last\)|hit an exception|Received sigquit"
            r"|Main process exited, code=(?!exited, status=0)|Failed with result|out of memory(?! happened)"
            r"|OutOfMemoryError|CUDA Error: .{1,300}? \(\d+\) .{1,300}?: line \d+ at function"
        ),  # 'Decode out of memory happened. #retracted_reqs': the scheduler retracts requests and goes on
        description=(
            "the start-up died: a traceback, an exception in the scheduler, a failed unit, out of memory, a kernel"
            " library's failed CUDA call (flashinfer's 'CUDA Error: ... at function', which raises)"
        ),
    ),
    Message(
        "avail",
        Kind.AVAIL,
        "mem=",
        re.compile(r"\bavail(?:able_gpu)?[ _]mem=" + _n("left") + r"\s*GB"),
        (_gb("left", "left_gb"),),
        description="another line with the GPU memory free (what is left at the end)",
    ),
)
#: The memory messages SGLang prints that no start-up figure comes from (checked against the releases too; a
#: form ending in "..." stands for every text that begins with what comes before it).
OTHERS = (
    "Routing experts host buffer allocated. #tokens: {}, size: {} GB",
    "UnifiedSWAKVPool.move_kv_cache should not be called...",
    "int8 mamba checkpoint pool ({}GB) is allocated from --mem-fraction-static headroom...",
    "UE8M0 block K size must be divisible by {}, got {}.",
    "LoRA adapter loading starts: {}. avail mem={} GB",
    "LoRA adapter loading completes: {}. avail mem={} GB",
    "LoRA adapter unloading starts: {}. avail mem={} GB",
    "LoRA adapter unloading completes: {}. avail mem={} GB",
    "Update engine weights online from disk begin. avail mem={} GB",
    "Post-capture KV sizing: KV-canary per-forward workspace {} GB",
)
#: Service managers' lines (systemd's, as a journal shows them with the unit ``systemd``).
SERVICE_STARTED, SERVICE_STOPPED = "Started ", "Stopped "
#: Where a launch command shows itself, as ps, a unit file or a script shows it (its arguments follow: see command).
COMMAND = re.compile(r"(?:-m\s+sglang\.launch_server|sglang/launch_server\.py|\bsglang\s+serve)\b")
#: A placeholder of an example (``<model>``): a line with one after the command's words shows no command.
_PLACEHOLDER = re.compile(r"<[\w-]+>")
#: A version of SGLang named in a line: ``sglang==0.5.9``, ``lmsysorg/sglang:v0.5.9-cu129``, ``sglang 0.5.9``.
VERSION = re.compile(
    r"\bsglang(?:==|:v|-| v?| version:? ?v?)(?P<version>\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)\b", re.IGNORECASE
)
#: Model classes of speculative drafts, by the name SGLang's model files give them.
DRAFT_TYPE = re.compile(r"Eagle|NextN|MTP|Draft", re.IGNORECASE)
#: The words of every line that can matter to a start-up, for the stream's pre-filter (in bytes).
LITERALS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [m.literal for m in MESSAGES if m.literal and m.kind is not Kind.OTHER]
        + [
            "Traceback (most",
            "hit an exception",
            "Received sigquit",
            "Main process exited",
            "Failed with result",
            "out of memory",
            "OutOfMemoryError",
            "CUDA Error: ",
            "graph failed",
            "Started ",
            "Starting ",
            "Stopped ",
            "launch_server",
            "sglang serve",
        ]  # fmt: skip
    )
)


#: SGLang's lines with figures, which a paste or a terminal may wrap over lines (a refusal over three, a weights' or
#: a Mamba pool's line over two).
WRAPPING: tuple[Message, ...] = tuple(m for m in MESSAGES if m.kind is not Kind.OTHER and m.figures and m.literal)
#: The head of one of them: the first words of its literal (a wrap may cut the literal itself).
WRAP_HEAD = re.compile("|".join(re.escape(m.literal[:20]) for m in WRAPPING))
#: Lines a wrapped message runs on to, at most (each at most WRAP_CHARS characters).
WRAP_LINES, WRAP_CHARS = 3, 400
#: A line that begins a line of its own, not the rest of a wrapped one: a stamp, a prefix, a traceback's.
_OWN_LINE = re.compile(
    r"^\s*$|^\s*(?:\[|\{|\d{4}-\d\d-\d\d|[A-Z][a-z]{2} [ \d]\d \d|Traceback|File \"|During handling|The above"
    r"|[\w.-]+\s+\| )"
)


#: Lines of one log that the joins of the lines after them are tried for, at most: each tries up to 14 joins, reading
#: its messages' patterns on each (up to a millisecond). A start-up's lines of figures are a few a rank; past the
#: bound (a log whose every line looked like a wrapped one: 2,807 of them in 1.4 MB took 2.5 s of CPU, found by the
#: log door's property test), a line is read as it is.
MAX_REJOINED = 1000


@dataclass
class Rejoins:
    """How many more lines of a log the joins may be tried for (MAX_REJOINED at first)."""

    left: int = MAX_REJOINED


def rejoined(head: str, following: Sequence[str], rejoins: Rejoins | None = None) -> tuple[str, int]:
    """(the text of a message that a paste wrapped, the lines of *following* it runs on to): *head* as it is and 0
    when no wrap makes the message of WRAPPING whose head it holds read more figures than *head* alone gives, or
    when *rejoins* has none left.

    A terminal cuts a line anywhere (its pieces join as they are); an editor or a page wraps at spaces (they join
    with one)."""
    lines: list[str] = []
    for line in following[:WRAP_LINES]:
        if len(line) > WRAP_CHARS or _OWN_LINE.match(line) or WRAP_HEAD.match(line.lstrip()):
            break  # a line of its own, or the next message at its start
        lines.append(line)
    heads = [message for message in WRAPPING if message.literal[:20] in head]  # the message the head line begins
    if not lines or not heads or len(head) > 2 * WRAP_CHARS:  # a wrapped line is a short one
        return head, 0
    if rejoins is not None:
        if rejoins.left <= 0:
            return head, 0
        rejoins.left -= 1
    best, taken, most = head, 0, _figures_read(head, heads)
    for count in range(1, len(lines) + 1):
        ways = [(" ", "") if before.rstrip()[-1:] in _PAUSES else ("", " ") for before in [head, *lines[: count - 1]]]
        for joins in product(*ways):  # at most 2**WRAP_LINES ways, the likelier first (a tie keeps it)
            joined = head + "".join(
                join + (piece.lstrip() if join else piece) for join, piece in zip(joins, lines[:count], strict=True)
            )
            found = _figures_read(joined, heads)
            if found > most:
                best, taken, most = joined, count, found
    return best, taken


#: After these a line more likely ended at a space (an editor's wrap) than in a word (a terminal's).
_PAUSES = frozenset(".,;:)")


def _figures_read(text: str, messages: Sequence[Message]) -> tuple[int, int]:
    """(figures one of *messages* reads in *text*, plus one for the message; their digits): a figure cut at a
    line's end reads fewer digits."""
    best = (0, 0)
    for message in messages:
        match = read(message, text)
        if match:
            values = [value for value in match.groupdict().values() if value is not None]
            best = max(best, (len(values) + 1, sum(map(len, values))))
    return best


def read(message: Message, text: str) -> re.Match[str] | None:
    """The match of *message* on a line's text (its prefixes off), None if the line is not that message.

    The first place the message's head is found decides: a figure it needs missing there, the line is not it
    (trying every later place again would cost time quadratic in the line)."""
    if message.literal and message.literal not in text:
        return None
    match = message.pattern.search(text)
    if match is None or not (not message.needs or any(all(match[g] is not None for g in n) for n in message.needs)):
        return None
    return match


#: What a KV pool line says before its words (``Draft KV Cache is allocated``), read backwards from them.
_LABEL = re.compile(r"[\w .-]*\s*$")


def label(text: str, head: int) -> str:
    """The words just before *head* (at most 80 characters) that say whose pool a line allocates."""
    found = _LABEL.search(text, max(0, head - 80), head)
    return found.group().strip().lower() if found else ""


def command(text: str) -> str | None:
    """The arguments of the launch command a line shows ("" for none), None if it shows none.

    Not a command: its words quoted in a warning (``'python -m sglang.launch_server' is still supported``: the
    words are followed by neither the line's end nor a space), or an example with placeholders after them
    (``Example: sglang serve --model-path <model> [options]``). One pass for the placeholders and one for the
    words: linear in the line, however often it repeats them."""
    placeholder = -1
    for placeholder_match in _PLACEHOLDER.finditer(text):
        placeholder = placeholder_match.start()
    for found in COMMAND.finditer(text):
        end = found.end()
        if end == len(text):
            return ""
        if text[end].isspace() and placeholder <= end:
            return text[end + 1 :]
    return None


def known(text: str) -> Message | str | None:
    """The message of the table (or the OTHERS form) whose form a code's text is, None if none is."""
    for message in MESSAGES:
        if any(_same(form, text) for form in message.forms):
            return message
    return next((form for form in OTHERS if _same(form, text)), None)


def _same(form: str, text: str) -> bool:
    return text.startswith(form[:-3]) if form.endswith("...") else text == form


def quote(name: str) -> str:
    """A message's words as a sentence names them (``'KV Cache is allocated'``)."""
    return f"'{by_name(name).literal.strip()}'"


def read_lines() -> str:
    """The lines a start-up's figures come from, for the help: one a line, its words and what it says."""
    parts: dict[str, str] = {}
    for message in MESSAGES:
        if message.kind in (Kind.STEP, Kind.SCHEDULER, Kind.VERDICT, Kind.SERVER_ARGS) and message.literal.strip():
            parts.setdefault(message.literal.strip(), message.description)
    return "\n".join(f"  '{words}...': {what}" for words, what in parts.items())


def by_name(name: str) -> Message:
    """The message of that name."""
    return next(m for m in MESSAGES if m.name == name)


def figures(message: Message, match: re.Match[str]) -> dict[str, float | str]:
    """The figures a matched line carries, by quantity (numbers as floats, a class as its name)."""
    found: dict[str, float | str] = {}
    for figure in message.figures:
        value = match.group(figure.group)
        if value is not None:
            found[figure.quantity] = value if figure.unit == "class" else float(value)
    return found
