"""Scope on the command line: --exclude/--include/--no-ignore on a small checkout."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sgtrace.cli import cli


def _find(root: Path, *args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(cli, ["find", "max_total_num_tokens", str(root), "--format", "json", *args])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def _paths(payload: dict[str, object]) -> set[str]:
    writes = payload["writes"]
    assert isinstance(writes, list)
    return {w["path"].split("/")[0] + "/" for w in writes}


def test_checkout_modules_and_scope_flags(small_checkout: Path) -> None:
    code, payload, err = _find(small_checkout)
    assert code == 0 and _paths(payload) == {"python/", "test/"}
    writes = payload["writes"]
    assert isinstance(writes, list)
    assert {w["owner"].rsplit(".", 1)[0] for w in writes if w["owner"] and w["path"].startswith("python/")} >= {
        "sglang.srt.managers.scheduler",
    }
    assert not any("build/" in w["path"] for w in writes)
    _, scoped, _ = _find(small_checkout, "--exclude", "test/**")
    assert _paths(scoped) == {"python/"}
    _, included, _ = _find(small_checkout, "--include", "test/**")
    assert _paths(included) == {"test/"}
    # With .gitignore off, the build copy is seen, left out, and said.
    code, unignored, err = _find(small_checkout, "--no-ignore")
    assert code == 0 and unignored["writes"] == payload["writes"]
    assert "package sglang found twice: analysing python/sglang, leaving out python/build/lib/sglang" in err
