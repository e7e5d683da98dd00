"""Journals of SGLang start-ups written from the table of messages, for the property tests.

Each :class:`Spec` is one start-up: its ranks, the model and a draft (loaded after the target's graphs
as older releases do, or right after its weights as newer ones do), a pool capped by
``--max-total-tokens``, a sliding-window model's second pool, a Mamba state pool, a death. The lines
are those SGLang prints (the forms of ``sgtrace.run.messages``), ranks interleaved, stamped by SGLang and
by journald's default short format (``Feb 28 09:54:10 host python3[48213]:``, no year).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone


@dataclass(frozen=True)
class Spec:
    """One start-up."""

    ranks: int = 8
    model: str = "DeepseekV3ForCausalLM"
    #: The draft's class (None: no speculative decoding), its weights and its pool, GB.
    draft: str | None = None
    draft_gb: float = 0.95
    draft_pool_gb: float = 0.17
    #: Whether the draft loads right after the target's weights, before the pools (newer releases).
    draft_first: bool = False
    fraction: float = 0.88
    before_gb: float = 94.04
    weights_gb: float = 72.33
    #: A pool capped by --max-total-tokens: its size, GB (None: the fraction's pool).
    capped_gb: float | None = None
    #: A sliding-window model: the window layers' pool beside the full one, GB.
    swa_gb: float | None = None
    #: A hybrid model's Mamba state, GB.
    mamba_gb: float | None = None
    #: Whether K and V are logged apart (MHA) rather than one KV size (MLA).
    split_kv: bool = False
    died: bool = False

    @property
    def pool_gb(self) -> float:
        """The target's KV pool (its full pool, for a sliding-window model)."""
        if self.capped_gb is not None:
            return self.capped_gb
        rest = self.before_gb * self.fraction - self.weights_gb - (self.mamba_gb or 0.0) - (self.swa_gb or 0.0)
        return math.floor(rest * 100) / 100  # whole cells: a little under the formula's budget

    @property
    def tokens(self) -> int:
        return int(self.pool_gb * (1 << 30) // 70272)


def journal(specs: list[Spec], host: str = "node-03", start: datetime = datetime(2026, 2, 27, 16, 20, 5)) -> list[str]:
    """The lines of a journal of the start-ups, one after the other, a service start each."""
    lines: list[str] = []
    at = start
    for number, spec in enumerate(specs):
        pid = 20811 + 1000 * number
        lines += _start_up(spec, at, host, pid)
        at += timedelta(hours=3)
    return lines


def _start_up(spec: Spec, at: datetime, host: str, pid: int) -> list[str]:
    out: list[tuple[datetime, str]] = []
    clock = [at]

    def say(text: str, rank: int | None = None, after: float = 0.0) -> None:
        clock[0] += timedelta(seconds=after)
        stamp = clock[0].strftime("%Y-%m-%d %H:%M:%S")
        where = f"{stamp} TP{rank}" if rank is not None else stamp
        out.append((clock[0], f"[{where}] {text}"))

    def each(text: str, after: float = 0.0) -> None:
        for rank in range(spec.ranks):
            say(text.format(rank=rank, jitter=0.01 * (rank % 3)), rank, after if rank == 0 else 0.0)

    service = [(at, "systemd[1]: Started sglang.service - SGLang server.")]
    args = f"speculative_algorithm={'EAGLE3' if spec.draft else None}"
    say(f"server_args=ServerArgs(model_path='/models/m', tp_size={spec.ranks}, mem_fraction_static={spec.fraction}, "
        f"max_total_tokens={'20000' if spec.capped_gb else None}, {args})", None, 7)  # fmt: skip
    each("Init torch distributed begin.", 12)
    each("Init torch distributed ends. elapsed=1.93 s, mem usage=0.91 GB", 2)
    each(f"Load weight begin. avail mem={spec.before_gb:.2f} GB", 1)
    after = spec.before_gb - spec.weights_gb
    each(f"Load weight end. elapsed=243.37 s, type={spec.model}, dtype=torch.bfloat16, "
         f"avail mem={after:.2f} GB, mem usage={spec.weights_gb:.2f} GB.", 243)  # fmt: skip
    free = after
    if spec.draft and spec.draft_first:
        free = _draft_loads(spec, each, free)
    free = _pools(spec, each, say, free, draft=False)
    if spec.draft and spec.draft_first:
        free = _pools(spec, each, say, free, draft=True)
    if spec.died:
        say("Scheduler hit an exception: Traceback (most recent call last):", 0, 3)
        return _stamped(service + out, host, pid)
    each(f"Capture cuda graph begin. This can take up to several minutes. avail mem={free:.2f} GB", 1)
    free -= 1.52
    each(f"Capture cuda graph end. Time elapsed: 27.84 s. mem usage=1.52 GB. avail mem={free:.2f} GB.", 28)
    if spec.draft and not spec.draft_first:
        free = _draft_loads(spec, each, free)
        free = _pools(spec, each, say, free, draft=True)
    if spec.draft:
        each(f"Capture draft cuda graph begin. This can take up to several minutes. avail mem={free:.2f} GB", 1)
        free -= 0.12
        each(f"Capture draft cuda graph end. Time elapsed: 21.37 s. mem usage=0.12 GB. avail mem={free:.2f} GB.", 21)
    tokens = int(spec.tokens)
    say(f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests=4096, context_len=131072, available_gpu_mem={free:.2f} GB", 0, 2)  # fmt: skip
    say("The server is fired up and ready to roll!", None, 5)
    return _stamped(service + out, host, pid)


def _draft_loads(spec: Spec, each: object, free: float) -> float:
    assert callable(each)
    each("Init torch distributed begin.", 1)
    each(f"Load weight begin. avail mem={free:.2f} GB", 1)
    free -= spec.draft_gb
    each(f"Load weight end. elapsed=3.10 s, type={spec.draft}, dtype=torch.bfloat16, "
         f"avail mem={free:.2f} GB, mem usage={spec.draft_gb:.2f} GB.", 3)  # fmt: skip
    return free


def _pools(spec: Spec, each: object, say: object, free: float, draft: bool) -> float:
    assert callable(each) and callable(say)
    tokens = spec.tokens
    if draft:
        each(f"KV Cache is allocated. #tokens: {tokens}, K size: {spec.draft_pool_gb / 2:.2f} GB, "
             f"V size: {spec.draft_pool_gb / 2:.2f} GB", 1)  # fmt: skip
        free -= spec.draft_pool_gb
    else:
        if spec.mamba_gb:
            each(f"Mamba Cache is allocated. max_mamba_cache_size: 512, conv_state size: {spec.mamba_gb / 4:.2f}GB, "
                 f"ssm_state size: {spec.mamba_gb * 3 / 4:.2f}GB", 1)  # fmt: skip
            free -= spec.mamba_gb
        if spec.swa_gb:
            each(f"Use sliding window memory pool. full_layer_tokens={tokens}, swa_layer_tokens={tokens // 2}", 0)
        each(_kv(spec, spec.pool_gb, tokens), 1)
        free -= spec.pool_gb
        if spec.swa_gb:
            each(_kv(spec, spec.swa_gb, tokens // 2), 0)
            free -= spec.swa_gb
            each(f"SWAKVPool mem usage: {spec.pool_gb + spec.swa_gb:.2f} GB, swa size: {tokens // 2}, "
                 f"full size: {tokens}", 0)  # fmt: skip
        free -= 0.35
    each(f"Memory pool end. avail mem={free:.2f} GB", 0)
    return free


def _kv(spec: Spec, gb: float, tokens: int) -> str:
    if spec.split_kv:
        return f"KV Cache is allocated. #tokens: {tokens}, K size: {gb / 2:.2f} GB, V size: {gb / 2:.2f} GB"
    return f"KV Cache is allocated. #tokens: {tokens}, KV size: {gb:.2f} GB"


def _stamped(lines: list[tuple[datetime, str]], host: str, pid: int) -> list[str]:
    """journald's short prefix (no year) before each line; systemd's own lines keep their unit."""
    out = []
    for moment, text in lines:
        prefix = f"{moment:%b %d %H:%M:%S} {host} "
        out.append(prefix + (text if text.startswith("systemd[1]:") else f"python3[{pid}]: {text}"))
    return out


#: The shapes the property tests run on, as issue 27 lists them and beside them.
SHAPES: dict[str, list[Spec]] = {
    "eagle3 journal (a draft after the target's graphs)": [
        Spec(fraction=0.85),
        Spec(draft="LlamaForCausalLMEagle3", fraction=0.92, died=True),
        Spec(draft="LlamaForCausalLMEagle3"),
    ],
    "eagle3 journal (the draft loaded before the pools)": [
        Spec(draft="LlamaForCausalLMEagle3", draft_first=True, fraction=0.85),
        Spec(draft="LlamaForCausalLMEagle3", draft_first=True),
        Spec(draft="LlamaForCausalLMEagle3", draft_first=True, fraction=0.9),
    ],
    "capped single GPU": [
        Spec(ranks=1, model="Qwen2ForCausalLM", before_gb=78.43, weights_gb=15.24, capped_gb=1.31, split_kv=True),
        Spec(ranks=1, model="Qwen2ForCausalLM", before_gb=78.43, weights_gb=15.24, capped_gb=2.62, split_kv=True),
        Spec(ranks=1, model="Qwen2ForCausalLM", before_gb=78.43, weights_gb=15.24, capped_gb=1.31, split_kv=True),
    ],
    "sliding-window model, no draft": [
        Spec(ranks=4, model="MiMoV2FlashForCausalLM", weights_gb=30.12, swa_gb=8.03, split_kv=True, fraction=0.85),
        Spec(ranks=4, model="MiMoV2FlashForCausalLM", weights_gb=30.12, swa_gb=8.03, split_kv=True),
        Spec(ranks=4, model="MiMoV2FlashForCausalLM", weights_gb=30.12, swa_gb=8.03, split_kv=True, fraction=0.8),
    ],
    "Mamba hybrid": [
        Spec(ranks=2, model="Qwen3NextForCausalLM", weights_gb=60.1, mamba_gb=2.77, split_kv=True),
        Spec(ranks=2, model="Qwen3NextForCausalLM", weights_gb=60.1, mamba_gb=2.77, split_kv=True, fraction=0.8),
        Spec(ranks=2, model="Qwen3NextForCausalLM", weights_gb=60.1, mamba_gb=2.77, split_kv=True, died=True),
    ],
}


#: journalctl's output formats (``-o FORMAT``) besides the default short one, as systemd's logs-show.c prints
#: them: short-iso (``2026-02-27T16:20:12+0000``, ``+00:00`` in newer systemd), short-iso-precise, short-precise,
#: short-full and with-unit (the local zone's abbreviation, here CET), short-monotonic and short-delta (seconds
#: since boot), short-unix, json (one object a record), verbose (a head with the time and cursor, then each field
#: indented by four spaces) and export (the fields bare, a blank line after each record), and cat (the message).
#: As journalctl prints them without ``--all``: json leaves out (null) a field of 4,096 bytes or more.
FORMATS = (
    "short-iso", "short-iso-precise", "short-precise", "short-full", "with-unit", "short-monotonic",
    "short-delta", "short-unix", "json", "verbose", "export", "cat",
)  # fmt: skip
_SHORT = re.compile(r"^([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (\S+) ([\w.@/-]+?)(?:\[(\d+)\])?: (.*)$")
_CET = timezone(timedelta(hours=1), "CET")


def as_format(lines: list[str], form: str, year: int = 2026) -> list[str]:
    """The lines of a journal in the short form (no year), as ``journalctl -o FORM`` prints the same records.

    The records keep their order; each gets a microsecond part (its index) so that precise forms differ from
    the short one, and a boot 1,234.5 s before the first record for the monotonic forms.
    """
    records = []
    for index, line in enumerate(lines):
        found = _SHORT.match(line)
        if found is None:
            continue
        moment = datetime.strptime(f"{year} {found[1]}", "%Y %b %d %H:%M:%S").replace(tzinfo=timezone.utc)
        records.append((moment + timedelta(microseconds=index), found[2], found[3], found[4] or "", found[5]))
    boot = records[0][0] - timedelta(seconds=1234.5) if records else datetime.now(timezone.utc)
    out: list[str] = []
    for moment, host, unit, pid, message in records:
        source = f"{host} {unit}[{pid}]" if pid else f"{host} {unit}"
        local = moment.astimezone(_CET)
        since = (moment - boot).total_seconds()
        if form == "with-unit":
            source = f"{host} {'sglang.service' if unit != 'systemd' else 'init.scope'}[{pid}]"
        stamps = {
            "short-iso": f"{moment:%Y-%m-%dT%H:%M:%S%z}",
            "short-iso-precise": moment.isoformat(timespec="microseconds"),
            "short-precise": f"{moment:%b %d %H:%M:%S.%f}",
            "short-full": f"{local:%a %Y-%m-%d %H:%M:%S} CET",
            "with-unit": f"{local:%a %Y-%m-%d %H:%M:%S} CET",
            "short-monotonic": f"[{since:12.6f}]",
            "short-delta": f"[{since:12.6f} <    0.000001>]",
            "short-unix": f"{moment.timestamp():.6f}",
        }
        if form in stamps:
            out.append(f"{stamps[form]} {source}: {message}")
        elif form == "cat":
            out.append(message)
        else:
            micro = int(moment.timestamp() * 1e6)
            fields = {
                "__CURSOR": f"s=9a1f;i={len(out):x};b=7e2d;m={int(since * 1e6):x};t={micro:x};x=1",
                "__REALTIME_TIMESTAMP": str(micro),
                "__MONOTONIC_TIMESTAMP": str(int(since * 1e6)),
                "_BOOT_ID": "7e2d5b0c9a3f4e61b8c1d2e3f4a5b6c7",
                "PRIORITY": "6",
                "_HOSTNAME": host,
                "SYSLOG_IDENTIFIER": unit,
                "_PID": pid,
                "_SYSTEMD_UNIT": "sglang.service",
                "MESSAGE": message,
            }
            if form == "json":  # a field of 4,096 bytes or more is null unless journalctl is given --all
                out.append(
                    json.dumps({k: v if len(k) + 1 + len(v.encode()) < 4096 else None for k, v in fields.items()})
                )
            elif form == "export":
                out += [f"{key}={value}" for key, value in fields.items()] + [""]
            elif form == "verbose":
                out.append(f"{local:%a %Y-%m-%d %H:%M:%S.%f} CET [{fields.pop('__CURSOR')}]")
                out += [f"    {key}={value}" for key, value in fields.items() if not key.startswith("__")]
            else:
                raise ValueError(f"no journalctl format {form!r}")
    return out
