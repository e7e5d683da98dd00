"""What an engine's code means beyond Python, in the words its code uses: one profile the stages share.

The slicer (:mod:`sgtrace.graph.slicer`: which reads are knobs, accessors of
process-wide configuration, environment variables) and the evaluator (through
:class:`sgtrace.analyses.profile.EngineProfile`: what holds the server's
arguments, which calls measure the memory the log shows) read the same
profile. Nothing here names a file, a line or a class of a release: only the
words the engine's code uses for these things, in every release sgtrace reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    """An engine's words for its configuration and its measurements."""

    #: Its name.
    name: str
    #: The names of the objects that hold the server's arguments: ``server_args.X``, ``self.server_args.X``,
    #: ``model_runner.server_args.X``, ``get_server_args().X`` read an argument (a knob).
    arguments: tuple[str, ...]
    #: A call without arguments of a module-level function named with this prefix (``get_schedule()``) hands out
    #: process-wide configuration: what it returns is read as a knob, whatever object carries it.
    accessor_prefix: str
    #: The names of environment variables (``SGLANG_ENABLE_X``), as ``os.getenv("...")`` and a registry's
    #: ``envs.X.get()`` spell them.
    environment: re.Pattern[str]
    #: Calls that return the GPU memory free at the moment they run (GB): a measurement the log shows.
    measures_free_memory: frozenset[str]


#: Environment variables' names as every engine here spells them (``SGLANG_X``, ``VLLM_X``, ``LMDEPLOY_X``).
_ENVIRONMENT = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")

SGLANG = Engine(
    name="sglang",
    arguments=("server_args",),
    accessor_prefix="get_",
    environment=_ENVIRONMENT,
    measures_free_memory=frozenset({"get_available_gpu_memory"}),
)

#: vLLM: the engine's arguments are handed out as config objects (``EngineArgs.create_engine_config()``), each
#: read through its own holder (``self.cache_config.num_gpu_blocks_override``, ``vllm_config.parallel_config``);
#: the worker measures free memory with torch's call.
VLLM = Engine(
    name="vllm",
    arguments=("cache_config", "parallel_config", "scheduler_config", "vllm_config", "engine_args"),
    accessor_prefix="get_",
    environment=_ENVIRONMENT,
    measures_free_memory=frozenset({"mem_get_info"}),
)

#: LMDeploy's PyTorch engine: its arguments are a ``PytorchEngineConfig`` turned into config objects
#: (``self.cache_config.cache_max_entry_count``, ``engine_config``, ``backend_config``); the model agent
#: measures free memory with torch's call.
LMDEPLOY = Engine(
    name="lmdeploy",
    arguments=("cache_config", "engine_config", "backend_config", "scheduler_config"),
    accessor_prefix="get_",
    environment=_ENVIRONMENT,
    measures_free_memory=frozenset({"mem_get_info"}),
)

#: The engines sgtrace knows the words of, by the name of their top-level package.
ENGINES = {engine.name: engine for engine in (SGLANG, VLLM, LMDEPLOY)}


def engine_of(modules: Iterable[str]) -> Engine:
    """The engine whose top-level package the tree holds (its modules' dotted names); SGLang's words otherwise.

    A tree holding several engines' packages (a monorepo of them) is read with SGLang's words when SGLang is among
    them, else with the first by name.
    """
    packages = {module.split(".", 1)[0] for module in modules}
    found = sorted(name for name in ENGINES if name in packages)
    return SGLANG if not found or SGLANG.name in found else ENGINES[found[0]]
