"""Figures from an SGLang start-up log (plain, or as ``journalctl -o cat`` writes it), from any rank."""

from __future__ import annotations

import re

#: What each quantity is, for the report and for the error that asks for a missing one.
QUANTITIES = {
    "avail_before_weights_gb": "GPU memory free before the weights were loaded ('Load weight begin. avail mem=')",
    "avail_after_weights_gb": "GPU memory free after the weights were loaded ('Load weight end. ... avail mem=')",
    "weights_gb": "memory the weights took ('Load weight end. ... mem usage=')",
    "kv_gb": "size of the KV cache allocated ('KV Cache is allocated. ... K size + V size' or 'KV size')",
    "kv_tokens": "tokens in the KV cache ('KV Cache is allocated. #tokens: N')",
    "avail_after_pool_gb": "GPU memory free after the pools ('Memory pool end. avail mem=')",
    "max_total_num_tokens": "the scheduler's pool size ('max_total_num_tokens=')",
}

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("avail_before_weights_gb", re.compile(rf"Load weight begin\..*?avail mem={_NUMBER}\s*GB")),
    ("avail_after_weights_gb", re.compile(rf"Load weight end\..*?avail mem={_NUMBER}\s*GB")),
    ("weights_gb", re.compile(rf"Load weight end\..*?mem usage={_NUMBER}\s*GB")),
    ("kv_tokens", re.compile(r"KV Cache is allocated\..*?#tokens:\s*([0-9]+)")),
    ("avail_after_pool_gb", re.compile(rf"Memory pool end\..*?avail mem={_NUMBER}\s*GB")),
    ("max_total_num_tokens", re.compile(r"\bmax_total_num_tokens=([0-9]+)")),
]
_KV_SPLIT = re.compile(rf"KV Cache is allocated\..*?K size:\s*{_NUMBER}\s*GB.*?V size:\s*{_NUMBER}\s*GB")
_KV_WHOLE = re.compile(rf"KV Cache is allocated\..*?KV size:\s*{_NUMBER}\s*GB")
_SERVER_ARGS = re.compile(r"server_args=ServerArgs\((.*)\)\s*$")
_ARGUMENT = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\[\]{}]+)(?=,\s*\w+=|$)")


def read_log(text: str) -> dict[str, float | str | bool | None]:
    """Quantities (see QUANTITIES) and the scalar server arguments the log shows; first occurrence wins."""
    found: dict[str, float | str | bool | None] = {}
    for line in text.splitlines():
        for name, pattern in _PATTERNS:
            match = pattern.search(line)
            if match and name not in found:
                found[name] = float(match.group(1))
        split = _KV_SPLIT.search(line)
        whole = _KV_WHOLE.search(line)
        if "kv_gb" not in found and (split or whole):
            found["kv_gb"] = float(split.group(1)) + float(split.group(2)) if split else float(whole.group(1))  # type: ignore[union-attr]
        arguments = _SERVER_ARGS.search(line)
        if arguments:
            for key, value in _ARGUMENT.findall(arguments.group(1)):
                found.setdefault(key, parse_value(value.strip()))
    return found


def parse_value(text: str) -> float | str | bool | None:
    """A scalar as the log (or ``--set``) spells it: numbers, None, True/False, quoted or bare strings."""
    if text in ("None", "null"):
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return float(text)
    except ValueError:
        return text
