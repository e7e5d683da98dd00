"""Discovery: which files, which module names (import roots), which scope, and what cannot be read."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from sgtrace.discover import RootError, discover, package_at
from sgtrace.discover.roots import configured_roots
from sgtrace.model import FileError, PathFilter


def _files(root: Path, path_filter: PathFilter = PathFilter()) -> dict[str, str]:
    return {item.path: item.module for item in discover(str(root), path_filter).files}


def _errors(root: Path) -> list[FileError]:
    return list(discover(str(root)).errors)


def _tree(root: Path, paths: str) -> None:
    """Create each whitespace-separated path (a trailing / makes a folder) with a line of Python."""
    for path in paths.split():
        target = root / path
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x = 1\n")


def test_module_names_follow_packages(tmp_path: Path) -> None:
    _tree(tmp_path, "pkg/__init__.py pkg/sub/__init__.py pkg/sub/mod.py top.py")
    assert _files(tmp_path) == {
        "pkg/__init__.py": "pkg",
        "pkg/sub/__init__.py": "pkg.sub",
        "pkg/sub/mod.py": "pkg.sub.mod",
        "top.py": "top",
    }
    # Rooted inside the package, names keep the package prefix.
    assert _files(tmp_path / "pkg" / "sub") == {"__init__.py": "pkg.sub", "mod.py": "pkg.sub.mod"}


def test_checkout_layout_names_the_importable_package(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "python/sglang/__init__.py python/sglang/srt/__init__.py python/sglang/srt/managers/scheduler.py "
        "python/sglang/srt/nsportion/mod.py python/setup.py "
        "sgl-kernel/python/sgl_kernel/__init__.py sgl-kernel/python/sgl_kernel/ops.py sgl-kernel/setup.py "
        "test/srt/test_memory.py benchmark/mmlu/bench_sglang.py",
    )
    (tmp_path / "python" / "pyproject.toml").write_text("[project]\nname = 'sglang'\n")
    (tmp_path / "sgl-kernel" / "pyproject.toml").write_text(
        "[tool.scikit-build]\nwheel.packages = ['python/sgl_kernel']\n"
    )
    assert _files(tmp_path) == {
        "benchmark/mmlu/bench_sglang.py": "benchmark.mmlu.bench_sglang",
        "python/setup.py": "python.setup",
        "python/sglang/__init__.py": "sglang",
        "python/sglang/srt/__init__.py": "sglang.srt",
        "python/sglang/srt/managers/scheduler.py": "sglang.srt.managers.scheduler",
        "python/sglang/srt/nsportion/mod.py": "sglang.srt.nsportion.mod",
        "sgl-kernel/python/sgl_kernel/__init__.py": "sgl_kernel",
        "sgl-kernel/python/sgl_kernel/ops.py": "sgl_kernel.ops",
        "sgl-kernel/setup.py": "sgl-kernel.setup",
        "test/srt/test_memory.py": "test.srt.test_memory",
    }
    # The package folder itself, or a folder inside it, as the root: the same module names.
    assert _files(tmp_path / "python")["sglang/srt/managers/scheduler.py"] == "sglang.srt.managers.scheduler"
    assert _files(tmp_path / "python" / "sglang" / "srt") == {
        "__init__.py": "sglang.srt",
        "managers/scheduler.py": "sglang.srt.managers.scheduler",
        "nsportion/mod.py": "sglang.srt.nsportion.mod",
    }


def test_src_layout_and_single_modules(tmp_path: Path) -> None:
    _tree(tmp_path, "src/pkg/__init__.py src/pkg/mod.py src/tool.py scripts/run.py")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    assert _files(tmp_path) == {
        "scripts/run.py": "scripts.run",
        "src/pkg/__init__.py": "pkg",
        "src/pkg/mod.py": "pkg.mod",
        "src/tool.py": "tool",
    }


@pytest.mark.parametrize(
    "name, text, roots",
    [
        ("pyproject.toml", "[tool.setuptools.packages.find]\nwhere = ['lib']\n", ["lib"]),
        ("pyproject.toml", "[tool.setuptools]\npackage-dir = {'' = 'source'}\n", ["source"]),
        ("pyproject.toml", "[tool.hatch.build.targets.wheel]\npackages = ['src/foo']\n", ["src"]),
        ("pyproject.toml", "[[tool.poetry.packages]]\ninclude = 'foo'\nfrom = 'lib'\n", ["lib"]),
        ("pyproject.toml", "[tool.scikit-build]\nwheel.packages = ['python/k']\n", ["python"]),
        ("pyproject.toml", "not = toml = at all", []),
        ("setup.cfg", "[options]\npackage_dir =\n    =src\n[options.packages.find]\nwhere = lib\n", ["src", "lib"]),
        ("setup.py", "from setuptools import setup, find_packages\nsetup(packages=find_packages('lib'))\n", ["lib"]),
        ("setup.py", "setup(package_dir={'': 'src'}, packages=find_namespace_packages(where='src'))\n",
         ["src", "src"]),
        ("setup.py", "import os\nsetup(packages=find_packages(os.environ['X']))\n", []),
        ("setup.py", "def broken(:\n", []),
    ],
)  # fmt: skip
def test_packaging_settings_name_roots_without_running_them(name: str, text: str, roots: list[str]) -> None:
    assert configured_roots(name, text) == roots


def test_configured_root_names_namespace_packages(tmp_path: Path) -> None:
    _tree(tmp_path, "lib/ns/sub/__init__.py lib/ns/sub/mod.py")
    assert _files(tmp_path)["lib/ns/sub/mod.py"] == "sub.mod"  # no setting: the layout is all there is
    (tmp_path / "pyproject.toml").write_text("[tool.setuptools.packages.find]\nwhere = ['lib']\nnamespaces = true\n")
    assert _files(tmp_path)["lib/ns/sub/mod.py"] == "ns.sub.mod"


@pytest.mark.parametrize(
    ("paths", "pyproject", "found"),
    [
        ("python/sglang/__init__.py python/sglang/srt/a.py", "", "python/sglang"),  # SGLang's own layout
        ("sglang/__init__.py", "", "sglang"),
        ("src/sglang/__init__.py", "", "src/sglang"),
        ("lib/sglang/__init__.py", "[tool.setuptools.packages.find]\nwhere = ['lib']\n", "lib/sglang"),
        ("sgtrace/__init__.py sgtrace/sample/sglang/__init__.py", "", None),  # sgtrace's own: sgtrace.sample.sglang
        ("python/sglang/a.py", "", None),  # no __init__.py: no regular package
        ("python/sglang_router/__init__.py", "", None),
        # Found by a walk but at no root the top declares: the whole repository (it may be $HOME) is not walked for it.
        ("examples/sglang/__init__.py", "", None),
    ],
)  # fmt: skip
def test_package_at_a_declared_root_is_the_one_a_walk_names(
    tmp_path: Path, paths: str, pyproject: str, found: str | None
) -> None:
    _tree(tmp_path, paths)
    if pyproject:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    folder = package_at(tmp_path, "sglang")
    assert folder == (tmp_path / found if found else None)
    if found:  # what the check finds, a walk of the tree names as the top-level package
        assert _files(tmp_path)[f"{found}/__init__.py"] == "sglang"


def test_a_second_copy_of_a_package_is_left_out_and_said(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "python/sglang/__init__.py python/sglang/a.py python/build/lib/sglang/__init__.py "
        "python/build/lib/sglang/a.py python/build/lib/sglang/stale.py",
    )
    (tmp_path / "python" / "pyproject.toml").write_text("[project]\nname = 'sglang'\n")
    listing = discover(str(tmp_path))
    assert {f.path: f.module for f in listing.files} == {
        "python/sglang/__init__.py": "sglang",
        "python/sglang/a.py": "sglang.a",
    }
    [copy] = listing.shadowed
    assert (copy.package, copy.used, copy.left_out, copy.files) == (
        "sglang",
        "python/sglang",
        ("python/build/lib/sglang",),
        3,
    )


def test_namespace_portions_under_two_roots_are_both_kept(tmp_path: Path) -> None:
    _tree(tmp_path, "a/ns/one/__init__.py b/ns/two/__init__.py")
    (tmp_path / "setup.cfg").write_text("[options.packages.find]\nwhere =\n    a\n    b\n")
    listing = discover(str(tmp_path))
    assert sorted(f.module for f in listing.files) == ["ns.one", "ns.two"]
    assert listing.shadowed == ()


def test_single_file_root(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text("x = 1\n")
    assert _files(tmp_path / "one.py") == {"one.py": "one"}
    _tree(tmp_path, "pkg/__init__.py pkg/two.py")
    assert _files(tmp_path / "pkg" / "two.py") == {"two.py": "pkg.two"}


def test_missing_root() -> None:
    with pytest.raises(RootError):
        discover("/no/such/place")


def test_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.py").write_text("x = 1\n")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    assert _files(tmp_path) == {"a/m.py": "a.m"}
    assert [e.message for e in _errors(tmp_path)] == ["symlink loop: directory already visited"]


def test_dangling_link_and_fifo_are_errors(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone.py", tmp_path / "dangling.py")
    os.mkfifo(tmp_path / "pipe.py")
    errors = {e.path: e.message for e in _errors(tmp_path)}
    assert errors == {"dangling.py": "cannot read file: No such file or directory", "pipe.py": "not a regular file"}


def test_skips_tool_folders_environments_and_non_python(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "__pycache__/m.py .git/hooks/h.py .venv/lib/site.py node_modules/x.py env/lib/python3.11/site.py keep/m.py",
    )
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "notes.txt").write_text("x = 1\n")
    assert _files(tmp_path) == {"keep/m.py": "keep.m"}


def test_exclude_and_include_are_gitignore_patterns(tmp_path: Path) -> None:
    _tree(tmp_path, "pkg/__init__.py pkg/a.py pkg/gen/b.py test/test_a.py test/data/c.py")
    assert set(_files(tmp_path, PathFilter(exclude=("test/**",)))) == {"pkg/__init__.py", "pkg/a.py", "pkg/gen/b.py"}
    assert set(_files(tmp_path, PathFilter(exclude=("gen/", "test_*.py")))) == {
        "pkg/__init__.py", "pkg/a.py", "test/data/c.py",
    }  # fmt: skip
    assert set(_files(tmp_path, PathFilter(include=("pkg/**",), exclude=("*/gen/*",)))) == {
        "pkg/__init__.py", "pkg/a.py",
    }  # fmt: skip
    # Excluding a package's __init__.py does not rename the modules beside it.
    assert _files(tmp_path, PathFilter(exclude=("pkg/__init__.py",)))["pkg/a.py"] == "pkg.a"


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True)


def test_gitignore_is_honoured_in_a_checkout_only(tmp_path: Path) -> None:
    _tree(tmp_path, "python/pkg/__init__.py python/pkg/gen.py python/build/lib/x.py python/pkg/keep_gen.py")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "python" / ".gitignore").write_text("gen.py\n*_gen.py\n!keep_gen.py\n")
    everything = {"python/pkg/__init__.py", "python/pkg/gen.py", "python/build/lib/x.py", "python/pkg/keep_gen.py"}
    assert set(_files(tmp_path)) == everything  # not a git checkout: .gitignore means nothing
    _git(tmp_path, "init", "-q")
    kept = {"python/pkg/__init__.py", "python/pkg/keep_gen.py"}
    assert set(_files(tmp_path)) == kept
    assert set(_files(tmp_path, PathFilter(gitignore=False))) == everything
    # Rooted below the checkout's top, the .gitignore files above still count.
    assert {f"python/{p}" for p in _files(tmp_path / "python")} == kept
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("__init__.py\nkeep_gen.py\n")
    # info/exclude counts, below every .gitignore (whose '!keep_gen.py' wins, as in git).
    assert _files(tmp_path) == {"python/pkg/keep_gen.py": "pkg.keep_gen"}


def test_walk_output_is_deterministic(tmp_path: Path) -> None:
    _tree(tmp_path, textwrap.dedent("b/z.py a/y.py a/b/x.py c.py"))
    assert [f.path for f in discover(str(tmp_path)).files] == ["a/b/x.py", "a/y.py", "b/z.py", "c.py"]


def test_a_script_imports_from_its_own_folder_first(tmp_path: Path) -> None:
    """``python test/srt/test_pool.py`` puts test/srt first on the import path: ``from utils import x``
    there is test/srt/utils.py, even beside a top-level module of the same name."""
    from sgtrace.index.project import Project

    files = {
        "python/pkg/__init__.py": "",
        "python/pkg/runner.py": "class Runner:\n    pass\n",
        "python/utils.py": "def helper():\n    return 0\n",
        "test/srt/utils.py": "def helper():\n    return 1\n\n\nclass Fake:\n    pass\n",
        "test/srt/test_pool.py": "import utils\nfrom utils import helper, Fake\nfrom pkg.runner import Runner\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "python" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    listing = discover(str(tmp_path))
    assert {f.module: f.script for f in listing.files} == {
        "pkg": False, "pkg.runner": False, "utils": False, "test.srt.utils": True, "test.srt.test_pool": True,
    }  # fmt: skip
    project = Project(listing)
    script = "test.srt.test_pool"
    assert project.resolve(script, "helper") == "test.srt.utils.helper"
    assert project.resolve(script, "Fake") == "test.srt.utils.Fake"
    assert project.resolve(script, "utils.helper") == "test.srt.utils.helper"
    assert project.resolve(script, "Runner") == "pkg.runner.Runner"  # not beside it: the import path's
    assert project.resolve("pkg.runner", "Runner") == "pkg.runner.Runner"


def test_a_folder_the_checkout_ignores_is_analysed_when_named(tmp_path: Path) -> None:
    """``python -m venv .venv && pip install .`` in a checkout: the package in .venv, which .gitignore
    leaves out, is what a run names (the README's first command, or the installed sglang)."""
    site = ".venv/lib/python3.11/site-packages"
    _tree(tmp_path, f"src/app.py {site}/pkg/__init__.py {site}/pkg/run.py {site}/pkg/gen/x.py envs/a/pkg/m.py")
    (tmp_path / ".gitignore").write_text(".venv\nenvs/\n*.tmp.py\n")
    (tmp_path / site / "pkg" / ".gitignore").write_text("gen/\n")
    _git(tmp_path, "init", "-q")
    assert set(_files(tmp_path)) == {"src/app.py"}
    assert set(_files(tmp_path / site / "pkg")) == {"__init__.py", "run.py"}  # its own .gitignore still counts
    assert set(_files(tmp_path / "envs" / "a")) == {"pkg/m.py"}
    assert _files(tmp_path / "envs" / "a", PathFilter(exclude=("pkg/",))) == {}
