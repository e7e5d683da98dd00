"""The README's first command as a user runs it: sgtrace built and installed as a wheel (not editable),
into a clone's ``.venv``, run with no path on the sample it ships."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.release  # builds a wheel: pip fetches setuptools from the registry

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_wheel_runs_the_readme_command_in_a_clone(tmp_path: Path) -> None:
    source = tmp_path / "source"  # built from a copy: the build writes into its tree, and must not see old builds
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info",
                                                               "__pycache__", ".*_cache", ".hypothesis"))  # fmt: skip
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    [wheel] = wheels.glob("sgtrace-*.whl")
    clone = tmp_path / "clone"
    site = clone / ".venv" / "lib" / "site-packages"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    (clone / ".gitignore").write_text(".venv/\n")
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(site)}  # the dependencies come from this interpreter's own
    proc = subprocess.run(
        [sys.executable, "-m", "sgtrace", "find", "max_total_num_tokens", "--format", "json"],
        cwd=clone, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"analysing the sample tree shipped with sgtrace ({site / 'sgtrace' / 'sample'})" in proc.stderr
    writes = json.loads(proc.stdout)["writes"]
    assert any(w["kind"] == "unpack" and w["path"] == "sglang/srt/managers/scheduler.py" for w in writes)
