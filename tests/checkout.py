"""SGLang checkouts laid out as users have them, built from real release wheels.

The layout follows the SGLang repository: the package under ``python/`` with its
``pyproject.toml``, test and benchmark scripts beside it, a second package
under ``sgl-kernel/python/``, and a stale ``python/build/lib`` copy that
``.gitignore`` lists. Only the package comes from the release; the scripts are
written here and use the package the way SGLang's own tests and benchmarks do.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

#: Files around the package, as a checkout has them: path -> text.
AROUND = {
    ".gitignore": "build/\n*.egg-info/\n__pycache__/\n",
    "pyproject.toml": "[tool.codespell]\nskip = '*.json'\n",
    "python/pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61.0", "wheel"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "sglang"
        dynamic = ["version"]

        [tool.setuptools.packages.find]
        exclude = ["assets*", "benchmark*", "docs*", "dist*", "playground*", "scripts*", "tests*"]
    """,
    "sgl-kernel/pyproject.toml": """\
        [build-system]
        requires = ["scikit-build-core>=0.10"]
        build-backend = "scikit_build_core.build"

        [project]
        name = "sgl-kernel"
        version = "0.0.0"

        [tool.scikit-build]
        wheel.packages = ["python/sgl_kernel"]
    """,
    "sgl-kernel/python/sgl_kernel/__init__.py": "from sgl_kernel.allocator import reserve_pages\n",
    "sgl-kernel/python/sgl_kernel/allocator.py": """\
        class PageTable:
            def __init__(self, max_total_num_tokens):
                self.max_total_num_tokens = max_total_num_tokens // 2


        def reserve_pages(n):
            return PageTable(n)
    """,
    "sgl-kernel/setup.py": "from setuptools import setup\n\nsetup()\n",
    "test/srt/test_kv_pool_size.py": """\
        import unittest

        from sglang.srt.server_args import ServerArgs


        class TestKVPoolSize(unittest.TestCase):
            def setUp(self):
                self.server_args = ServerArgs(model_path="dummy", mem_fraction_static=0.5, max_total_tokens=1024)
                self.max_total_num_tokens = 1024

            def test_pool(self):
                self.assertEqual(self.max_total_num_tokens, self.server_args.max_total_tokens)


        if __name__ == "__main__":
            unittest.main()
    """,
    "test/srt/conftest.py": "import pytest\n",
    "benchmark/kv_cache/bench_pool_size.py": """\
        import argparse

        from sglang.srt.server_args import ServerArgs


        def main(args):
            server_args = ServerArgs(model_path=args.model, mem_fraction_static=args.fraction)
            stats = {}
            stats["max_total_num_tokens"] = server_args.max_total_tokens
            return stats


        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--model")
            parser.add_argument("--fraction", type=float, default=0.9)
            main(parser.parse_args())
    """,
}


def build(release: Path, target: Path, stale: Path | None = None) -> Path:
    """A checkout at *target* holding *release*'s package under ``python/`` (and *stale*'s in build/lib)."""
    shutil.copytree(release / "sglang", target / "python" / "sglang")
    if stale is not None:
        shutil.copytree(stale / "sglang", target / "python" / "build" / "lib" / "sglang")
    for path, text in AROUND.items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(textwrap.dedent(text))
    return target


def git(repository: Path, *arguments: str) -> str:
    """Run git in *repository* (no user configuration needed)."""
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-C", str(repository)]
    done = subprocess.run([*command, *arguments], check=True, capture_output=True, text=True)
    return done.stdout


def tagged_repository(releases: dict[str, Path], target: Path) -> Path:
    """A git repository whose commits hold each release's checkout in turn, tagged ``v<version>``."""
    target.mkdir(parents=True)
    git(target, "init", "-q")
    for version, release in releases.items():
        shutil.rmtree(target / "python" / "sglang", ignore_errors=True)
        build(release, target)
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", f"release {version}")
        git(target, "tag", f"v{version}")
    return target
