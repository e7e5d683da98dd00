"""[tool.sgtrace] in pyproject.toml: found upwards, checked against the commands, given to click."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from sgtrace.cli.config import ConfigError, find_config, load_default_map


def _identifier(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.isidentifier():
        raise click.BadParameter(f"{value!r} is not a Python identifier")
    return value


def _echo(**params: Any) -> None:
    click.echo(json.dumps(params, default=str, sort_keys=True))


@click.group()
@click.version_option("1.0")
def tool() -> None:
    """A tiny CLI shaped like sgtrace's."""


@tool.command()
@click.argument("target", required=False)
@click.option("--exclude", multiple=True)
@click.option("--no-ignore", is_flag=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("-j", "--jobs", type=click.IntRange(min=1))
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--attr", "attribute", default="size", callback=_identifier)
@click.option("--debug", is_flag=True)
def find(**params: Any) -> None:
    """Every option kind."""
    _echo(**params)


@tool.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text")
@click.option("--max-nodes", type=click.IntRange(min=10), default=2000)
@click.option("--ratio", type=float, default=0.5)
@click.option("-j", "--jobs", type=click.IntRange(min=1))
def caps(**params: Any) -> None:
    """Another command sharing --format and --jobs."""
    _echo(**params)


@tool.command()
@click.option("--dot", "fmt", flag_value="dot", default=True)
@click.option("--json", "fmt", flag_value="json")
@click.option("--color/--no-color", default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path))
def graph(**params: Any) -> None:
    """Flags that share a parameter, and a flag with a --no- spelling."""
    _echo(**params)


@tool.group()
def cache() -> None:
    """A nested group."""


@cache.command()
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path))
def info(**params: Any) -> None:
    """Only --cache-dir."""
    _echo(**params)


def _write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _load(tmp_path: Path, table: str) -> dict[str, dict[str, Any]]:
    _write(tmp_path, "[tool.sgtrace]\n" + textwrap.dedent(table))
    return load_default_map(tool, tmp_path)[1]


def _error(tmp_path: Path, table: str) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, table)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}:")
    return message


def _run(args: list[str], default_map: dict[str, Any]) -> dict[str, Any]:
    result = CliRunner().invoke(tool, args, default_map=default_map)
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def test_found_in_a_parent_directory(tmp_path: Path) -> None:
    config = _write(tmp_path, "[tool.sgtrace]\njobs = 2\n")
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    assert find_config(start) == config
    assert load_default_map(tool, start) == (config, {"caps": {"jobs": 2}, "find": {"jobs": 2}})


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    config = _write(tmp_path, "[tool.sgtrace]\njobs = 2\n")
    _write(tmp_path / "pkg", '[project]\nname = "sgtrace-plugin"\n[tool.ruff]\nline-length = 99\n')
    _write(tmp_path / "pkg" / "sub", "[project\nnot toml at all, and no table named here\n")
    assert find_config(tmp_path / "pkg" / "sub") == config


def test_the_nearest_table_wins(tmp_path: Path) -> None:
    _write(tmp_path, "[tool.sgtrace]\njobs = 2\n")
    nearer = _write(tmp_path / "pkg", "[tool.sgtrace]\njobs = 3\n")
    assert load_default_map(tool, tmp_path / "pkg") == (nearer, {"caps": {"jobs": 3}, "find": {"jobs": 3}})


def test_no_table_anywhere(tmp_path: Path) -> None:
    _write(tmp_path, "[project]\nname = 'x'\n")
    assert find_config(tmp_path) is None
    assert load_default_map(tool, tmp_path) == (None, {})


def test_an_empty_table_is_used(tmp_path: Path) -> None:
    _write(tmp_path / "pkg", "[tool.sgtrace]\n")
    _write(tmp_path, "[tool.sgtrace]\njobs = 2\n")
    assert load_default_map(tool, tmp_path / "pkg") == (tmp_path / "pkg" / "pyproject.toml", {})


def test_a_key_applies_to_every_command_with_that_option(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        """\
        exclude = ["build", "dist"]
        no_ignore = true
        attr = "page_size"
        max-nodes = 500
        json = true
        no-color = true
        """,
    )
    assert found == {
        "find": {"exclude": ["build", "dist"], "no_ignore": True, "attribute": "page_size"},
        "caps": {"max_nodes": 500},
        "graph": {"fmt": "json", "color": False},
    }


def test_nested_groups_get_nested_maps(tmp_path: Path) -> None:
    found = _load(tmp_path, 'cache-dir = "/var/cache/x"\n[tool.sgtrace.cache.info]\ncache-dir = "/srv/c"\n')
    assert found == {"find": {"cache_dir": "/var/cache/x"}, "cache": {"info": {"cache_dir": "/srv/c"}}}
    found = _load(tmp_path, '[tool.sgtrace.cache]\ncache-dir = "/srv/c"\n')
    assert found == {"cache": {"info": {"cache_dir": "/srv/c"}}}


def test_a_command_table_wins_over_the_top_level(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        """\
        format = "json"
        jobs = 4
        [tool.sgtrace.caps]
        format = "sarif"
        [tool.sgtrace.graph]
        json = true
        dot = false
        """,
    )
    assert found["find"] == {"fmt": "json", "jobs": 4}
    assert found["caps"] == {"fmt": "sarif", "jobs": 4}
    assert found["graph"] == {"fmt": "json"}
    assert _run(["caps"], found)["fmt"] == "sarif"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("exlude = []", "unknown key 'exlude' (did you mean 'exclude'?)"),
        ("max_node = 50", "unknown key 'max_node' (did you mean 'max-nodes'?)"),
        ("[tool.sgtrace.capz]\njobs = 2", "unknown key 'capz' (did you mean 'caps'?)"),
        ("[tool.sgtrace.caps]\nexclude = []", "[tool.sgtrace.caps]: unknown key 'exclude'"),
        ("[tool.sgtrace.cache.inf]", "[tool.sgtrace.cache]: unknown key 'inf' (did you mean 'info'?)"),
        ("zzz = 1", "unknown key 'zzz'"),
        ("debug = true", "unknown key 'debug'"),
        ("version = true", "unknown key 'version'"),
        ("help = true", "unknown key 'help'"),
        ("target = 'x'", "unknown key 'target'"),
        ("j = 2", "unknown key 'j'"),
    ],
)
def test_an_unknown_key_is_an_error(tmp_path: Path, table: str, message: str) -> None:
    error = _error(tmp_path, table)
    assert error.endswith(message)
    assert "did you mean" in message or "did you mean" not in error


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('jobs = "4"', "jobs must be an integer, got '4'"),
        ("jobs = true", "jobs must be an integer, got True"),
        ("jobs = 0", "jobs = 0 for 'caps': 0 is not in the range x>=1."),
        ("max-nodes = 5", "max-nodes = 5 for 'caps': 5 is not in the range x>=10."),
        ('ratio = "half"', "ratio must be a number, got 'half'"),
        ('format = "xml"', "format = 'xml' for 'caps': 'xml' is not one of 'text', 'json', 'sarif'."),
        ('format = "sarif"', "format = 'sarif' for 'find': 'sarif' is not one of 'text', 'json'."),
        ('exclude = "build"', "exclude must be an array of strings, got 'build'"),
        ('exclude = ["a", 1]', "exclude must be an array of strings, got ['a', 1]"),
        ('no-ignore = "yes"', "no-ignore must be a boolean, got 'yes'"),
        ("json = 1", "json must be a boolean, got 1"),
        ("cache-dir = 3", "cache-dir must be a string, got 3"),
        ('attr = "a-b"', "attr = 'a-b' for 'find': 'a-b' is not a Python identifier"),
        ("caps = 3", "'caps' is a command: give its options as a table [tool.sgtrace.caps]"),
        ("[tool.sgtrace.caps.jobs]", "jobs must be an integer, got {}"),
        ("max_nodes = 50\nmax-nodes = 60", "'max_nodes' and 'max-nodes' are the same key"),
        ("[tool.sgtrace.graph]\njson = true\ndot = true", "'json' and 'dot' set the same option"),
        ("[tool.sgtrace.graph]\ncolor = true\nno-color = true", "'color' and 'no-color' set the same option"),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error(tmp_path: Path, table: str, message: str) -> None:
    assert _error(tmp_path, table).endswith(message)


def test_the_table_must_be_a_table(tmp_path: Path) -> None:
    _write(tmp_path, "[tool]\nsgtrace = 3\n")
    with pytest.raises(ConfigError, match="tool.sgtrace must be a table, got 3"):
        find_config(tmp_path)


def test_toml_that_does_not_parse_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, "[tool.sgtrace]\njobs = = 2\n")
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: invalid TOML: ")
    assert "line 2" in message
    assert "\n" not in message


def test_paths_are_relative_to_the_config_directory(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        """\
        cache-dir = ".cache/sgtrace"
        [tool.sgtrace.graph]
        output = "/abs/graph.dot"
        """,
    )
    assert found["find"] == {"cache_dir": str(tmp_path / ".cache" / "sgtrace")}
    assert found["graph"] == {"output": "/abs/graph.dot"}
    elsewhere = tmp_path / "pkg" / "src"
    elsewhere.mkdir(parents=True)
    expected = str(tmp_path / ".cache" / "sgtrace")
    assert load_default_map(tool, elsewhere)[1]["cache"] == {"info": {"cache_dir": expected}}
    assert _run(["find"], found)["cache_dir"] == expected


def test_config_values_reach_the_commands(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        """\
        exclude = ["build"]
        no-ignore = true
        format = "json"
        jobs = 3
        attr = "page_size"
        [tool.sgtrace.graph]
        json = true
        no-color = true
        """,
    )
    assert _run(["find"], found) == {
        "attribute": "page_size",
        "cache_dir": None,
        "debug": False,
        "exclude": ["build"],
        "fmt": "json",
        "jobs": 3,
        "no_ignore": True,
        "target": None,
    }
    assert _run(["graph"], found) == {"color": False, "fmt": "json", "output": None}


def test_the_command_line_wins(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        """\
        exclude = ["build"]
        format = "json"
        jobs = 3
        attr = "page_size"
        [tool.sgtrace.graph]
        json = true
        no-color = true
        """,
    )
    args = ["find", "--exclude", "dist", "--format", "text", "-j", "1", "--attr", "max_tokens"]
    ran = _run(args, found)
    assert (ran["exclude"], ran["fmt"], ran["jobs"], ran["attribute"]) == (["dist"], "text", 1, "max_tokens")
    assert _run(["graph", "--dot", "--color"], found) == {"color": True, "fmt": "dot", "output": None}


def test_a_callback_still_checks_what_the_command_line_gives(tmp_path: Path) -> None:
    found = _load(tmp_path, 'attr = "page_size"\n')
    result = CliRunner().invoke(tool, ["find", "--attr", "not-ok"], default_map=found)
    assert result.exit_code == 2
    assert "is not a Python identifier" in result.output


def test_the_options_of_sgtrace_itself(tmp_path: Path) -> None:
    from sgtrace.cli import cli

    table = 'attr = "page_size"\nfail_on = "added"\ncache-dir = "c"\n[tool.sgtrace.caps]\nformat = "sarif"\n'
    _write(tmp_path, "[tool.sgtrace]\n" + table)
    found = load_default_map(cli, tmp_path)[1]
    assert found["caps"] == {"attribute": "page_size", "cache_dir": str(tmp_path / "c"), "fmt": "sarif"}
    assert found["diff"]["fail_on"] == "added"
    cache_dir = {"cache_dir": str(tmp_path / "c")}
    assert found["cache"] == {"info": cache_dir, "prune": cache_dir, "clear": cache_dir}
    _write(tmp_path, '[tool.sgtrace]\nfail-on = "added,nope"\n')
    with pytest.raises(ConfigError, match="unknown nope; choose from"):
        load_default_map(cli, tmp_path)
